"""A process history as a person reads it: what was said, what ran, what was corrected.

One walk over the history for every reader (``vance show`` prints the entries as lines, the
full-screen app turns them into widgets), so both agree on what counts as a delivered message.
"""

from __future__ import annotations

from dataclasses import dataclass

from vance_cli.llm.base import ToolCall
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
            calls = {c.id: _message_of(c) for c in m.tool_calls if c.name == "respond"}
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
                    out.append(Entry("message", calls.get(m.tool_call_id or "", "")))
                else:
                    out.append(Entry("rejected", m.content or ""))
            else:
                out.append(Entry("result", m.content or "", name=m.name or "", call_id=m.tool_call_id or "",
                                 ok=bool(m.meta.get("ok", True))))
    return out


def _message_of(call: ToolCall) -> str:
    try:
        return str(call.parsed_arguments().get("message", ""))
    except ValueError:
        return ""
