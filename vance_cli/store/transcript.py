"""A process history as a person reads it: what was said, what ran, what was corrected.

One walk over the history for every reader (``vance show`` prints the entries as lines, the
full-screen app turns them into widgets, the scheduler delivers a child's last reply to its parent
with ``child_outcome``), so all agree on what counts as a delivered message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vance_cli.messages import ToolCall
from vance_cli.store.process import Process


@dataclass(frozen=True)
class Entry:
    """``kind``: user | journal (an engine's journal entry, Markdown) | message (delivered to the person) | unshown (assistant text not delivered,
    ``tag`` says why) | note (a system note, e.g. a correction) | call (a tool call) | result (its
    result) | rejected (a respond call the engine refused)."""

    kind: str
    text: str
    name: str = ""
    call_id: str = ""
    ok: bool = True
    tag: str = ""
    # message: whether it waits for an answer (a respond call's awaiting_user_input; plain text does)
    awaiting: bool = True


def entries(process: Process) -> list[Entry]:
    out: list[Entry] = []
    calls: dict[str, str] = {}  # the latest assistant's call ids → respond messages (ids repeat across runs)
    for m in process.history:
        kind = m.meta.get("kind")
        if m.role == "user":
            out.append(Entry("user", m.content or ""))
        elif m.role == "system":
            out.append(Entry("note", m.content or "", tag=kind or ""))
        elif m.role == "assistant" and kind == "journal":
            out.append(Entry("journal", m.content or ""))
        elif m.role == "assistant":
            calls = {c.id: _respond_of(c) for c in m.tool_calls if c.name == "respond"}
            if m.content and (m.meta.get("delivered") or not m.tool_calls):
                if m.meta.get("delivered"):
                    out.append(Entry("message", m.content, tag=kind or ""))
                else:
                    out.append(Entry("unshown", m.content, tag=kind or "text"))
            for c in m.tool_calls:
                if c.name != "respond":
                    out.append(Entry("call", c.arguments, name=c.name, call_id=c.id))
        elif m.role == "tool":
            if m.name == "respond":
                if m.meta.get("delivered"):
                    message, awaiting = calls.get(m.tool_call_id or "", ("", True))
                    out.append(Entry("message", message, awaiting=awaiting))
                else:
                    out.append(Entry("rejected", m.content or ""))
            else:
                out.append(
                    Entry(
                        "result",
                        m.content or "",
                        name=m.name or "",
                        call_id=m.tool_call_id or "",
                        ok=bool(m.meta.get("ok", True)),
                    )
                )
    return out


def _respond_of(call: ToolCall) -> tuple[str, bool]:
    """A respond call's message and awaiting_user_input."""
    try:
        args = call.parsed_arguments()
    except ValueError:
        return "", True
    return str(args.get("message", "")), bool(args.get("awaiting_user_input", True))


def last_reply(process: Process) -> Entry | None:
    """The message the last turn delivered to its reader (a ``respond``, or the plain text of a
    recipe without respond); None when it ended without one (a diagnosis, a failure, a turn cut
    off) or nothing was delivered since the last user message."""
    reply: Entry | None = None
    for entry in entries(process):
        if entry.kind == "user":
            reply = None
        elif entry.kind == "message":
            reply = None if entry.tag == "diagnosis" else entry
    return reply


def first_message(process: Process) -> str:
    """The chat's first message from the person, on one line (a picker's or a listing's row);
    the title when the history holds none yet (a message still in the inbox)."""
    for m in process.history:
        if m.role == "user" and m.content:
            return " ".join(m.content.split())
    for item in process.inbox:
        if item.kind == "user" and item.content:
            return " ".join(item.content.split())
    return process.title or ""


def child_outcome(child: Process) -> dict[str, Any]:
    """What a settled child delivers to its parent: its last reply (a respond message) or how it ended.

    ``kind`` is ``reply`` when the child's last turn delivered a message to its reader and
    ``ended`` otherwise (a BLOCKED diagnosis, FAILED, a turn cut off).
    """
    reply = last_reply(child)
    u = child.usage
    out: dict[str, Any] = {
        "child": child.id,
        "recipe": child.recipe_name,
        "status": child.status.value,
        "reason": child.status_reason,
        "tokens": u.prompt_tokens + u.completion_tokens,
        "calls": u.calls,
    }
    if reply is not None:
        out.update(kind="reply", message=reply.text, awaiting_user_input=reply.awaiting)
    else:
        out.update(kind="ended", message=None)
    return out
