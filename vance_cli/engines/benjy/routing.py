"""The route stage: its decision (the controller's, or the mechanical fallback) applied as queue operations.

``on_route`` is the ROUTE task's handler; ``apply_route`` turns one decision (retry, split,
revise, escalate, ask_parent, done, reset, blocked) into the new queue and items, and stops a
route that repeats itself on an unchanged state.
"""

from __future__ import annotations

import hashlib
from typing import Any

from vance_cli.engines.benjy import render
from vance_cli.engines.benjy.config import RunConfig
from vance_cli.engines.benjy.effects import ControllerAnswer, Step
from vance_cli.engines.benjy.state import TERMINAL_ITEM, BenjyState, Item, Task

ROUTE_OPS = ("retry", "split", "revise", "escalate", "ask_parent", "done", "reset", "blocked")


STUCK_REPEATS = 3


def on_route(st: Step, task: Task, ans: ControllerAnswer | None) -> None:
    decision = mechanical_route(st.s, task, st.cfg) if ans is None else dict(ans.data or {})
    apply_route(st, task, decision, mechanical=ans is None)


def mechanical_route(s: BenjyState, task: Task, cfg: RunConfig) -> dict[str, Any]:
    """The fallback policy when route is off (§4): retry until the cap, escalate once, then BLOCKED."""
    trigger = task.payload.get("trigger")
    item = s.item(task.item)
    if trigger in ("check_failed", "worker_ended", "item_cap") and item is not None:
        if item.attempts < cfg.params.maxItemAttempts + (1 if item.escalated and cfg.stages.get("escalation") else 0):
            return {"op": "retry", "item": item.id, "reason": "mechanical: retry until the attempt cap"}
        if cfg.stages.get("escalation") and not item.escalated:
            return {"op": "escalate", "item": item.id, "reason": "mechanical: the attempt cap is reached, escalating"}
        return {
            "op": "blocked",
            "item": item.id,
            "reason": f"item #{item.id} failed {item.attempts} times and there is nothing left to escalate to",
        }
    if trigger == "reflect_gaps":
        gaps = task.payload.get("gaps") or []
        if gaps:
            return {
                "op": "split",
                "items": [{"title": g, "description": ""} for g in gaps],
                "reason": "mechanical: one item per gap",
            }
        return {"op": "blocked", "reason": "the reflection found the goal not achieved but named no gaps"}
    if trigger == "final_check_failed":
        return {
            "op": "split",
            "items": [{"title": f"Make the check `{render.one_line(cfg.checkCommand, 80)}` pass",
                       "description": task.payload.get("error") or ""}],
            "reason": "mechanical: the final check fails; one item to make it pass",
        }
    if trigger == "queue_empty":
        return {"op": "retry", "reason": "mechanical: retry the open items"}
    return {"op": "continue", "reason": f"mechanical: {trigger} noted"}


def _fingerprint(s: BenjyState, decision: dict[str, Any]) -> str:
    items = "".join(f"{i.status[0]}{i.attempts}" for i in s.items)
    crit = "".join(c.status[0] for c in s.criteria)
    key = (
        f"{decision.get('op')}|{decision.get('item')}|{len(decision.get('items') or [])}|{items}|{crit}|{len(s.queue)}"
    )
    return hashlib.sha1(key.encode()).hexdigest()[:16]


def _new_items(st: Step, raw: list[Any], what: str, criteria: list[int]) -> list[Item]:
    s, cap = st.s, st.cfg.params.maxInitialItems
    raw = [r for r in raw if isinstance(r, dict) and str(r.get("title", "")).strip()]
    if cap >= 1 and len(raw) > cap:
        st.record(f"TRUNCATED: {what} gave {len(raw)} items; maxInitialItems keeps the first {cap}")
        raw = raw[:cap]
    return [s.add_item(str(r["title"]), str(r.get("description") or ""), criteria) for r in raw]


def _retry_open(st: Step, task: Task) -> list[str]:
    """Re-queue every open item without a pending task; capped ones fail. Returns what happened."""
    s, done = st.s, []
    queued = s.queued_items()
    for item in s.open_items():
        if item.id in queued or (s.inFlight and s.inFlight.item == item.id):
            continue
        if item.attempts >= st.cap(item):
            s.set_item_status(item.id, "failed")
            done.append(f"#{item.id} failed (attempt cap)")
        else:
            s.push_back(s.task("DO", item.id, error=_retry_context(task, item)))
            done.append(f"#{item.id} re-queued")
    return done


def _retry_context(task: Task, item: Item | None) -> str | None:
    """What the next worker of an item is told: the error, and the person's words when they led here."""
    parts = []
    error = task.payload.get("error") or (item.lastError if item is not None else None)
    if error:
        parts.append(error)
    if task.payload.get("answer"):
        parts.append(
            f"The person was asked: {render.one_line(task.payload.get('question'), 300)}\nThey answered: {task.payload['answer']}"
        )
    elif task.payload.get("text"):
        parts.append(f"The person wrote: {task.payload['text']}")
    return "\n\n".join(parts) or None


def invalid_route(decision: Any) -> str | None:
    """Why a route answer is not a decision (None: it is one): a split or revise names its items.

    The engine's controller call rejects such an answer with this reason (and the model tries
    again); one that still arrives here is not counted as a decision: route-stuck counts decisions.
    """
    if not isinstance(decision, dict):
        return None
    op = decision.get("op")
    if op in ("split", "revise"):
        raw = decision.get("items")
        if not isinstance(raw, list) or not any(isinstance(r, dict) and str(r.get("title", "")).strip() for r in raw):
            what = "the new smaller items" if op == "split" else "the one rewritten item"
            return (f"items: op {op!r} needs {what} as items: [{{title, description}}]; "
                    "to run an item again unchanged use op 'retry'")
    return None


def apply_route(st: Step, task: Task, decision: dict[str, Any], *, mechanical: bool = False) -> None:
    s, cfg = st.s, st.cfg
    problem = None if mechanical else invalid_route(decision)
    if problem is not None:
        st.record(f"ROUTE ({task.payload.get('trigger', '?')}): invalid answer, not a decision — {problem}; the mechanical policy decides")
        decision, mechanical = mechanical_route(s, task, cfg), True
    op = decision.get("op")
    reason = render.one_line(str(decision.get("reason") or ""), 300)
    trigger = task.payload.get("trigger", "?")
    item_id = decision.get("item") if isinstance(decision.get("item"), int) else task.item
    item = s.item(item_id)
    where = f"ROUTE ({trigger}{f' #{task.item}' if task.item else ''})"
    if op not in (*ROUTE_OPS, "continue"):
        op, reason = "retry", f"unknown operation {op!r}: retrying"
    if not mechanical:
        fp = _fingerprint(s, {**decision, "item": item_id})
        recent = (s.counters.routeRecent + [fp])[-STUCK_REPEATS:]
        s.counters.routeRecent = recent
        if len(recent) == STUCK_REPEATS and len(set(recent)) == 1:
            st.record(f"{where}: {op} — the same decision {STUCK_REPEATS}× on an unchanged state")
            st.block(
                f"Route is stuck: it decided '{op}'{f' for item #{item_id}' if item_id else ''} {STUCK_REPEATS} times "
                f"in a row while nothing changed ({reason or 'no reason given'}).",
                "route stuck",
            )
            return
    s.note(f"route {trigger}: {op}{f' #{item_id}' if item_id else ''} — {reason}")
    error = _retry_context(task, item)
    if op == "retry":
        if item is None:
            done = _retry_open(st, task)
            st.record(
                f"{where}: retry — {', '.join(done) if done else 'nothing open to retry'}"
                + (f" ({reason})" if reason else "")
            )
        elif item.status in ("done", "dropped"):
            st.record(f"{where}: retry #{item.id} ignored — the item is {item.status}")
        elif item.attempts >= st.cap(item):
            if item.status != "failed":
                s.set_item_status(item.id, "failed")
            s.drop_item_tasks(item.id)
            st.record(f"{where}: retry #{item.id} discarded — the attempt cap is reached, the item failed")
        else:
            s.set_item_status(item.id, "open")
            s.drop_item_tasks(item.id)
            s.push_front(s.task("DO", item.id, error=error))
            st.record(f"{where}: retry #{item.id}" + (f" — {reason}" if reason else ""))
    elif op == "escalate":
        if item is None or item.status in ("done", "dropped"):
            st.record(f"{where}: escalate without an open item — ignored")
        elif not cfg.stages.get("escalation") or item.escalated:
            why = "escalation is off" if not cfg.stages.get("escalation") else "already escalated"
            if item.attempts >= st.cap(item):
                s.set_item_status(item.id, "failed")
                st.record(f"{where}: escalate #{item.id} impossible ({why}); the item failed")
            else:
                s.drop_item_tasks(item.id)
                s.push_front(s.task("DO", item.id, error=error))
                st.record(f"{where}: escalate #{item.id} impossible ({why}) → retry")
        else:
            edited = s.edit_item(item.id)
            edited.escalated = True
            edited.status = "open"
            s.drop_item_tasks(item.id)
            s.push_front(s.task("DO", item.id, error=error))
            st.record(
                f"{where}: escalate #{item.id} to {cfg.stages['escalation']}" + (f" — {reason}" if reason else "")
            )
    elif op in ("split", "revise"):
        raw = list(decision.get("items") or [])
        if op == "revise" and item is not None and raw:
            first = raw[0] if isinstance(raw[0], dict) else {}
            if item.attempts >= st.cap(item):
                s.set_item_status(item.id, "failed")
                st.record(f"{where}: revise #{item.id} discarded — the attempt cap is reached, the item failed")
                return
            edited = s.edit_item(item.id)
            edited.title = str(first.get("title") or edited.title)
            edited.description = str(first.get("description") or edited.description)
            edited.status = "open"
            # not progress (§6: the list is exclusive): a route that keeps rewording one item
            # must trip the stagnation net
            s.drop_item_tasks(item.id)
            s.push_front(s.task("DO", item.id, error=error))
            st.record(f"{where}: revise #{item.id} — {render.one_line(edited.title, 120)}")
            return
        if not raw:
            st.record(f"{where}: {op} without items — nothing changed" + (f" ({reason})" if reason else ""))
            return
        parent_criteria = list(item.criteria) if item is not None else []
        new = _new_items(st, raw, f"route {op}", parent_criteria)
        if item is not None and (item.status not in TERMINAL_ITEM or item.status == "failed"):
            s.set_item_status(item.id, "dropped")  # a failed item split into parts is replaced by them
            s.drop_item_tasks(item.id)
        s.push_front(*(s.task("DO", n.id) for n in new))
        st.record(f"{where}: {op}{f' #{item.id}' if item else ''} into " + ", ".join(f"#{n.id}" for n in new))
    elif op == "ask_parent":
        question = str(decision.get("question") or decision.get("reason") or "How should I continue?")
        st.record(f"{where}: ask_parent")
        st.ask("ask_parent", question, checkpoint=False)
    elif op == "done":
        s.push_front(s.task("REFLECT" if cfg.stages.get("reflect") else "DONE"))
        st.record(
            f"{where}: done → {'REFLECT' if cfg.stages.get('reflect') else 'DONE'}" + (f" ({reason})" if reason else "")
        )
    elif op == "reset":
        for open_item in s.open_items():
            s.set_item_status(open_item.id, "dropped")
        s.todoFrom = len(s.items)  # the projection is cleared; the new plan's items follow
        s.queue = [s.task("INTERPRET", reset=reason or "route decided to reset")]
        st.record(f"{where}: reset — open items dropped, interpreting again" + (f" ({reason})" if reason else ""))
    elif op == "blocked":
        st.record(f"{where}: blocked")
        st.block(f"Route decided to stop here: {reason or 'no reason given'}", "route: blocked")
    else:  # continue (mechanical only)
        st.record(f"{where}: continue" + (f" ({reason})" if reason else ""))
