"""Compaction: a chat that would not fit the model's context window sends less and keeps everything.

The spec marks the chat history as compactable and Benjy's machine state (``benjyState`` in
``engine_params``) as never compactable; nothing here reads or writes ``engine_params``.

Compaction changes what is sent, never what is kept: the process file holds every message (the
person's record, ``vance show``, the at-most-once markers of started calls), and a summary is one
more history entry (``role: system``, ``meta.kind: summary``, ``meta.covers``: how many messages
at the start of the history it stands for). A file written before compaction existed has no such
entry and is sent as before. Steps, cheapest first:

1. Tool results of earlier turns are shortened to ``OLD_RESULT_CHARS`` on the wire.
2. Still too big: the turns before the last ``KEEP_TURNS`` user messages become a summary (one
   model call); those last turns (and with them the question the person is answering) stay
   verbatim. The summary call sees the previous summary and as much of the newest older turns
   as fits its own request.
"""

from __future__ import annotations

from vance_cli.messages import Message
from vance_cli.text import shorten

SUMMARY_KIND = "summary"
KEEP_TURNS = 2
OLD_RESULT_CHARS = 400
SUMMARY_MAX_TOKENS = 400
SUMMARY_PROMPT = (
    "You compact a conversation between a person and an assistant so that it can go on within a "
    "small context. Write a summary of at most 200 words: what the person wants, the facts found "
    "(file names, values, results), what was decided, and every question still open. Plain text, "
    "no preamble."
)
SUMMARY_HEADER = "Summary of the earlier conversation (compacted; the full history is kept on disk):\n"


def latest_summary(history: list[Message]) -> Message | None:
    for m in reversed(history):
        if m.role == "system" and m.meta.get("kind") == SUMMARY_KIND:
            return m
    return None


def summary_problem(history: list[Message]) -> str | None:
    """Why the latest summary's marker cannot be used (``covers`` is not a count of the messages
    before it), or None: checked before a resume (runtime/checks.py), as ``covered`` trusts it."""
    summary = latest_summary(history)
    if summary is None:
        return None
    covers = summary.meta.get("covers", 0)
    if not isinstance(covers, int) or isinstance(covers, bool) or not 0 <= covers <= len(history):
        return f"its summary marker covers {shorten(repr(covers), 40)}, not a count of its {len(history)} messages"
    return None


def covered(history: list[Message]) -> int:
    """How many messages at the start of the history the latest summary stands for."""
    summary = latest_summary(history)
    return int(summary.meta.get("covers", 0)) if summary is not None else 0


def sent_history(history: list[Message], *, shorten_old: bool = False) -> list[Message]:
    """The history as the model gets it: the latest summary first, then what it does not cover
    (other summary entries left out); with ``shorten_old`` the tool results before the last user
    message shortened."""
    summary = latest_summary(history)
    start = covered(history)
    out: list[Message] = []
    if summary is not None:
        out.append(Message(role="system", content=SUMMARY_HEADER + (summary.content or "")))
    rest = [m for m in history[start:] if not (m.role == "system" and m.meta.get("kind") == SUMMARY_KIND)]
    last_user = max((i for i, m in enumerate(rest) if m.role == "user"), default=-1)
    for i, m in enumerate(rest):
        if shorten_old and m.role == "tool" and i < last_user and len(m.content or "") > OLD_RESULT_CHARS:
            m = m.model_copy(update={"content": shorten(m.content or "", OLD_RESULT_CHARS)})
        out.append(m)
    return out


def cut_point(history: list[Message], keep_turns: int = KEEP_TURNS) -> int | None:
    """The index where the verbatim part starts (the ``keep_turns``-th last user message), or None
    when nothing older than it is left to summarise."""
    start = covered(history)
    users = [i for i in range(start, len(history)) if history[i].role == "user"]
    if len(users) <= keep_turns - 1 or not users:
        return None
    cut = users[-keep_turns] if len(users) >= keep_turns else users[0]
    return cut if cut > start else None


def summary_input(history: list[Message], cut: int, budget_chars: int) -> str:
    """The text the summary call reads: the previous summary, then the newest older lines that fit."""
    previous = latest_summary(history)
    head = f"Earlier summary:\n{previous.content}\n\n" if previous is not None and previous.content else ""
    lines: list[str] = []
    used = len(head)
    older = [m for m in history[covered(history) : cut] if m.meta.get("kind") != SUMMARY_KIND]
    for m in reversed(older):
        if m.role == "assistant" and m.tool_calls:
            text = "; ".join(f"{c.name}({shorten(c.arguments, 120, one_line=True)})" for c in m.tool_calls)
        else:
            text = shorten(m.content or "", 300, one_line=True)
        if not text:
            continue
        line = f"{m.role}: {text}"
        if used + len(line) + 1 > budget_chars:
            lines.append(f"(… {len(older) - len(lines)} earlier messages left out)")
            break
        lines.append(line)
        used += len(line) + 1
    return head + "Conversation:\n" + "\n".join(reversed(lines))
