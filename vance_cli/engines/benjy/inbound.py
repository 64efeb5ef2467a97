"""Benjy's inbox: each item (a worker's reply or end, the goal, an answer, a message) as queue operations (spec §3 table)."""

from __future__ import annotations

from typing import Any

from vance_cli.engines.benjy import render
from vance_cli.engines.benjy.effects import Ctx, Dialog, Outcome, SetStatus, Step
from vance_cli.engines.benjy.nets import gate, grant, running
from vance_cli.engines.benjy.state import BenjyState, Item

STOP_WORDS = ("stop",)


def no_change(st: Step, item: Item, summary: str) -> None:
    """The worker of a coding item replied without changing a file: a failed attempt (retry, or route at the cap)."""
    s = st.s
    error = ("The previous worker changed no file in the workspace, so the item is not done: a coding "
             "item is done by changing files (file_write), not by describing the change. Its reply was: "
             + render.one_line(summary, 300))
    item.lastError = error
    item.evidence = (item.evidence + ["worker changed no file"])[-4:]
    s.drop_item_tasks(item.id, frozenset({"CHECK", "EVALUATE", "CLOSE"}))
    if item.attempts < st.cap(item):
        s.push_front(s.task("DO", item.id, error=error))
        st.record(f"REPLY #{item.id}: no file changed — not done → retry")
    else:
        s.push_front(s.task("ROUTE", item.id, trigger="item_cap", error=error))
        st.record(f"REPLY #{item.id}: no file changed — not done → attempt cap, ROUTE")


def inbound(state: BenjyState, item: dict[str, Any], ctx: Ctx) -> Outcome:
    """One inbox item (``id``, ``kind``, ``sender``, ``content``, ``meta``) as queue operations."""
    st = Step(state, ctx)
    s = st.s
    kind = item.get("kind") or "user"
    text = str(item.get("content") or "")
    if kind == "child":
        meta = item.get("meta") or {}
        flight = s.inFlight
        if flight is None or item.get("sender") != flight.child:
            st.record(f"IGNORED: a message from process `{item.get('sender')}` (not the in-flight worker)")
            return st.outcome()
        s.inFlight = None
        s.counters.workerTokens += int(meta.get("tokens") or 0)
        target = s.item(flight.item)
        if target is None:
            st.record(f"REPLY #{flight.item}: worker `{flight.child}` replied; the item is gone")
            return st.outcome()
        edited = s.edit_item(target.id)
        if meta.get("kind") == "reply":
            summary = str(meta.get("message") or "")
            edited.summary = render.clip(summary, render.TEXT_CHARS)
            edited.evidence = (edited.evidence + [f"worker: {render.one_line(summary, 200)}"])[-4:]
            s.note(f"#{target.id} worker: {summary}")
            if s.taskType == "coding" and meta.get("workspaceChanged") is False:
                # a fact, not a judgement: a worker that changed no file has not done a coding item
                no_change(st, edited, summary)
            else:
                st.push_chain_rest(target.id, "DO")
                st.record(f"REPLY #{target.id}: {render.one_line(summary, 200)}")
        else:
            why = f"worker {flight.child} ended {meta.get('status')} without a reply" + (
                f": {meta.get('reason')}" if meta.get("reason") else ""
            )
            edited.lastError = why
            s.note(f"#{target.id} {why}")
            s.push_front(s.task("ROUTE", target.id, trigger="worker_ended", error=why))
            st.record(f"ENDED #{target.id}: {render.one_line(why, 200)} → ROUTE")
        if not s.queue and running(s):
            gate(st)
        return st.outcome()
    if kind not in ("user", "steer"):
        st.record(f"IGNORED: inbox item of kind {kind!r}")
        return st.outcome()
    st.effects.append(Dialog(text, str(item.get("id") or "")))
    if s.goal is None:
        s.goal = text.strip()
        s.counters.lastTick = ctx.now
        s.push_back(s.task("INTERPRET"))
        st.record(f"GOAL: {render.one_line(text, 200)}")
        return st.outcome()
    if s.pendingQuestion is not None:
        question = s.pendingQuestion
        if text.strip().lower() in STOP_WORDS:
            st.record("ANSWER: stop — the run stays BLOCKED")
            st.effects.append(SetStatus("BLOCKED", f"question ({question.reason}): stopped by the answer"))
            return st.outcome()
        s.pendingQuestion = None
        grant(s, question.reason, ctx.now)
        s.push_front(s.task("ROUTE", trigger="answer", question=question.text, answer=text))
        st.record(f"ANSWER ({question.reason}): {render.one_line(text, 200)} → ROUTE")
        return st.outcome()
    if s.outcome == "done":
        st.record("IGNORED: a message after DONE")
        return st.outcome()
    if s.outcome == "blocked":
        s.outcome = None
        s.diagnosis = None
    s.push_front(s.task("ROUTE", trigger="message", text=text))
    st.record(f"MESSAGE: {render.one_line(text, 200)} → ROUTE")
    return st.outcome()
