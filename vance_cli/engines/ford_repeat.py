"""A model that makes the same call again and gets the same result is looping (issue 18).

Seen on first contact with a 0.5B model: 10 of 12 chat turns called one tool with the same
arguments until ``maxToolIterations`` (``process_steer {"id": "8"}`` eleven times, the same error
each time). Calling again cannot help when nothing changed in between, so the engine tells the
model so, counts it as a correction, and ends the turn when the budget is spent, instead of
spending the turn's calls.

A repeat is judged by facts, never by guessing: the same tool, the same arguments (as JSON,
key order aside) *and* the same result as an earlier call of this turn, with no side-effecting
call that succeeded in between (after a ``file_write``, reading the file again is not a loop) and
no correction in between (told to relay a result, reading it again is not a loop either). A
tool whose result changes over time (``process_status`` of a running worker) gives a different
result and is not a repeat; a side-effecting call (``exec_run``) run again is a new run (a poll,
a retry) and counts only when it fails the same way again (the engine's ``_is_repeat``).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from vance_cli.messages import Message, ToolCall
from vance_cli.text import shorten

REPEAT_KIND = "repeated_call"
REPEAT_NOTE = (
    "REPEATED CALL: you already called `{name}` with these same arguments in this turn and got "
    "exactly this result. Calling it again will not change it. Use the result, call a different "
    "tool or different arguments, or call `respond` to answer the user."
)


def _canonical(arguments: str) -> Any:
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True, ensure_ascii=False)
    except ValueError:
        return arguments


def call_text(call: ToolCall) -> str:
    """The call as a person reads it in a diagnosis: ``name {args}``, shortened."""
    return shorten(f"{call.name} {_canonical(call.arguments)}", 120, one_line=True)


def is_repeat(history: list[Message], call: ToolCall, content: str, side_effects: Collection[str]) -> bool:
    """True when ``call`` with result ``content`` repeats an earlier call of the open turn (the
    messages after the last user message) with the same arguments and result, and no call of a
    tool in ``side_effects`` succeeded between the two."""
    start = max((i for i, m in enumerate(history) if m.role == "user"), default=-1) + 1
    calls: dict[str, ToolCall] = {}
    key = _canonical(call.arguments)
    seen = False
    for message in history[start:]:
        for c in message.tool_calls or ():
            calls[c.id] = c
        if message.meta.get("kind") == "correction":
            seen = False  # the model was told something new since (a relay correction, say)
            continue
        if message.role != "tool" or message.tool_call_id == call.id:
            continue
        earlier = calls.get(message.tool_call_id or "")
        if earlier is None:
            continue
        if earlier.name == call.name and _canonical(earlier.arguments) == key:
            seen = seen or _strip_note(message.content) == content
        elif earlier.name in side_effects and message.meta.get("ok", True):
            seen = False  # the world may have changed since: an identical call before this one no longer counts
    return seen


def _strip_note(content: str | None) -> str:
    """A result as the tool returned it, without the repeat note added to it."""
    text = content or ""
    head, sep, _ = text.rpartition("\n\nREPEATED CALL: ")
    return head if sep else text
