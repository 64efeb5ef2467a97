"""Benjy's pure handlers: (state, task, input) → (new state, effects). No I/O, no clock, no ids.

The engine does the impure part of a task first (a controller call, the check command, a fresh
worker id), then calls ``step`` with its result. ``step`` forks the state (the input state is never
modified), removes the task from the head of the queue, runs the task's handler (one per stage
below; route's in routing.py), counts progress for the stagnation net, fires the safety nets and
applies the gates when the queue runs empty (nets.py), and writes one journal record. The engine
saves the new state, then runs the effects (effects.py). Inbox items go through inbound.py.
"""

from __future__ import annotations

from typing import Any

from vance_cli.engines.benjy import render
from vance_cli.engines.benjy.effects import (
    CheckFacts,
    ControllerAnswer,
    Ctx,
    DoInput,
    Outcome,
    Say,
    SetStatus,
    Spawn,
    Step,
)
from vance_cli.engines.benjy.nets import advance_clock, gate, running, stagnation_net
from vance_cli.engines.benjy.routing import on_route
from vance_cli.engines.benjy.state import TERMINAL_ITEM, BenjyState, InFlight, LastCheck, Task


def step(state: BenjyState, task: Task, inp: Any, ctx: Ctx) -> Outcome:
    """Run ``task`` (the head of the queue) with the result of its impure part."""
    if not state.queue or state.queue[0].id != task.id:
        raise ValueError(f"task {task.id} is not the head of the queue")
    st = Step(state, ctx)
    s = st.s
    advance_clock(s, ctx)
    if isinstance(inp, ControllerAnswer):
        s.counters.controllerCalls += inp.calls
        s.counters.controllerTokens += inp.tokens
        if inp.status != "ok":
            # Schema exhaustion (§6): the task stays at the head; a later message can retry it.
            errors = "; ".join(inp.errors[:3]) or "no valid answer"
            st.block(
                f"The {task.type.lower()} controller call gave no valid answer after its retries "
                f"(schema exhaustion): {render.one_line(errors, 500)}. A stronger model for this stage "
                "(its recipe's model, or --model) is the usual fix; send a message to retry.",
                f"schema exhaustion ({task.type})",
            )
            return st.outcome("error")
    s.queue.pop(0)
    s.counters.tasks += 1
    HANDLERS[task.type](st, task, inp)
    if task.type in ("REFLECT", "DONE"):
        s.mark_progress()  # the terminal gates always count (§6)
    s.counters.stagnation = 0 if s.progressed else s.counters.stagnation + 1
    if running(s) and s.counters.stagnation >= ctx.cfg.params.maxStagnation:
        stagnation_net(st)
    if running(s) and s.inFlight is None and not s.queue:
        gate(st)
    return st.outcome("error" if s.outcome == "blocked" else "info")


def on_interpret(st: Step, task: Task, ans: ControllerAnswer) -> None:
    s, params = st.s, st.cfg.params
    data = ans.data or {}
    task_type = data.get("taskType")
    s.taskType = task_type if task_type in params.taskTypes else params.taskTypes[0]
    ids: list[int | None] = []
    for crit in data.get("criteria") or []:
        added = s.add_criterion(str(crit.get("text", "")), crit.get("sourceRef"))
        if added is None:
            text = " ".join(str(crit.get("text", "")).split())
            added = next((c for c in s.criteria if c.text == text), None)
        ids.append(added.id if added else None)
    items = list(data.get("items") or [])
    cap = params.maxInitialItems
    if cap >= 1 and len(items) > cap:
        st.record(f"TRUNCATED: interpret gave {len(items)} items; maxInitialItems keeps the first {cap}")
        items = items[:cap]
    new = []
    for raw in items:
        refs = [
            ids[n - 1] for n in raw.get("criteria") or [] if isinstance(n, int) and 1 <= n <= len(ids) and ids[n - 1]
        ]
        item = s.add_item(str(raw.get("title", "")), str(raw.get("description") or ""), refs)  # type: ignore[arg-type]
        s.push_back(s.task("DO", item.id))
        new.append(item)
    s.note(f"interpret: {s.taskType}, {len(ids)} criteria, {len(new)} items")
    st.record(
        f"INTERPRET: {s.taskType} · {len(s.criteria)} criteria · {len(new)} new item{'s' if len(new) != 1 else ''}"
    )


def on_do(st: Step, task: Task, inp: DoInput | str) -> None:
    s, cfg = st.s, st.cfg
    do = inp if isinstance(inp, DoInput) else DoInput(inp)
    child_id = do.child
    item = s.item(task.item)
    if item is None or item.status in TERMINAL_ITEM:
        st.record(f"DO #{task.item}: skipped (the item is {item.status if item else 'gone'})")
        return
    cap = st.cap(item)
    if item.attempts >= cap:
        s.push_front(s.task("ROUTE", item.id, trigger="item_cap", error=item.lastError or ""))
        st.record(f"DO #{item.id}: attempt cap reached ({item.attempts}/{cap}) → ROUTE")
        return
    escalated = bool(item.escalated and cfg.stages.get("escalation"))
    recipe = cfg.stages["escalation"] if escalated else cfg.params.doRecipe
    item = s.edit_item(item.id)
    item.attempts += 1
    item.status = "in_progress"
    s.inFlight = InFlight(child=child_id, item=item.id, attempt=item.attempts, escalated=escalated, recipe=recipe, before=do.before)
    s.counters.workerSpawns += 1
    error = task.payload.get("error")
    prompt = render.doer_prompt(s, item, attempt=item.attempts, cap=cap, error=error)
    st.effects += [
        Spawn(child_id, item.id, recipe, prompt, f"#{item.id} {render.one_line(item.title, 60)}"),
        SetStatus("IDLE", f"waiting on worker {child_id} (item #{item.id})"),
    ]
    st.record(f"DO #{item.id}: worker `{child_id}` ({recipe}, attempt {item.attempts}/{cap})")


def check_fact(facts: CheckFacts) -> tuple[str, str]:
    """(the exit in words, the one-line fact) of one run of the check command."""
    code = "timed out" if facts.timed_out else f"exit {facts.exit_code}"
    last = render.one_line((facts.output or "").strip().splitlines()[-1] if (facts.output or "").strip() else "", 160)
    return code, f"check `{render.one_line(facts.command, 80)}`: {code}" + (f" — {last}" if last else "")


def on_check(st: Step, task: Task, facts: CheckFacts) -> None:
    s = st.s
    s.counters.checks += 1
    item = s.item(task.item)
    code, fact = check_fact(facts)
    s.lastCheck = LastCheck(passed=facts.passed, fact=fact, item=task.item)
    s.note(f"#{task.item} {fact}")
    if item is None:
        st.record(f"CHECK #{task.item}: {code} (item gone)")
        return
    item = s.edit_item(item.id)
    item.evidence = (item.evidence + [fact])[-4:]
    if facts.passed:
        st.record(f"CHECK #{item.id}: passed ({code})")
        return
    error = f"The check command `{facts.command}` failed ({code}). Output (tail):\n{render.tail(facts.output, 1500)}"
    item.lastError = error
    s.drop_item_tasks(item.id, frozenset({"EVALUATE", "CLOSE"}))
    s.push_front(s.task("ROUTE", item.id, trigger="check_failed", error=error))
    st.record(f"CHECK #{item.id}: failed ({code}) → ROUTE")


def on_evaluate(st: Step, task: Task, ans: ControllerAnswer) -> None:
    s = st.s
    data = ans.data or {}
    verdict = data.get("verdict", "fail")
    reasons = [str(r) for r in data.get("reasons") or []]
    for upd in data.get("criteria") or []:
        cid = upd.get("id")
        if (
            isinstance(cid, int)
            and s.item(task.item)
            and 1 <= cid <= len(s.criteria)
            and upd.get("status") in ("pass", "fail")
        ):
            s.set_criterion(cid, upd["status"], upd.get("evidence") or "; ".join(reasons)[:300])
    item = s.item(task.item)
    text = render.one_line("; ".join(reasons) or "(no reasons)", 200)
    s.note(f"#{task.item} evaluate: {verdict} — {text}")
    if item is None:
        st.record(f"EVALUATE #{task.item}: {verdict} (item gone)")
        return
    item = s.edit_item(item.id)
    if verdict == "pass":
        item.evidence = (item.evidence + [f"evaluate: pass — {text}"])[-4:]
        st.record(f"EVALUATE #{item.id}: pass — {text}")
        return
    error = f"The reviewer judged the result '{verdict}': " + ("; ".join(reasons) or "no reasons given")
    item.lastError = error
    s.drop_item_tasks(item.id, frozenset({"CLOSE"}))
    if item.attempts < st.cap(item):  # eval-fail is a mechanical retry, no route call (§3)
        s.push_front(s.task("DO", item.id, error=error))
        st.record(f"EVALUATE #{item.id}: {verdict} — {text} → retry")
    else:
        s.push_front(s.task("ROUTE", item.id, trigger="item_cap", error=error))
        st.record(f"EVALUATE #{item.id}: {verdict} — {text} → attempt cap, ROUTE")


def on_close(st: Step, task: Task, _inp: Any) -> None:
    s = st.s
    item = s.item(task.item)
    if item is None or item.status in TERMINAL_ITEM:
        st.record(f"CLOSE #{task.item}: nothing to close")
        return
    done = s.set_item_status(item.id, "done")
    # a finished item keeps what the report shows: the state must not grow faster than needed
    failed = [e for e in done.evidence[:-2] if e.startswith("check ") and "exit 0" not in e]
    done.evidence = failed[-1:] + done.evidence[-2:]  # the last failed check stays on record
    done.summary = None  # the worker's words are in its own process and in the evidence line
    done.description = ""  # so is the item's description (the worker's first message)
    done.lastError = None
    st.record(f"CLOSE #{item.id}: done")


def _unfinished(s: BenjyState, criterion_id: int) -> list[int]:
    """The items of the current plan concerning a criterion that are not done.

    A dropped item was replaced (split, revise, reset) and items before a reset belong to the
    abandoned plan: neither keeps a criterion open.
    """
    return [i.id for i in s.items[s.todoFrom:] if criterion_id in i.criteria and i.status not in ("done", "dropped")]


def open_facts(s: BenjyState) -> list[str]:
    """What the mechanical facts say is not done: failed items, criteria left open, a failing last check.

    Facts outrank the model: while this list is not empty, a reflection's "yes" is a "partially".
    """
    facts = []
    for item in s.items[s.todoFrom:]:
        if item.status == "failed":
            why = f": {render.one_line(item.lastError, 200)}" if item.lastError else ""
            facts.append(f"item #{item.id} ({render.one_line(item.title, 80)}) failed after {item.attempts} attempts{why}")
    for crit in s.criteria:
        if crit.status == "open" and _unfinished(s, crit.id):
            items = ", ".join(f"#{i}" for i in _unfinished(s, crit.id))
            facts.append(f"criterion C{crit.id} ({render.one_line(crit.text, 80)}) is open: item {items} is not done")
    if s.lastCheck is not None and not s.lastCheck.passed:
        facts.append(f"the last {s.lastCheck.fact} (it must pass)")
    return facts


def on_reflect(st: Step, task: Task, ans: ControllerAnswer) -> None:
    s = st.s
    data = ans.data or {}
    achieved = data.get("achieved", "no")
    gaps = [render.one_line(str(g), 300) for g in data.get("gaps") or [] if str(g).strip()]
    s.note(f"reflect: {achieved}" + (f" — gaps: {'; '.join(gaps[:3])}" if gaps else ""))
    facts = open_facts(s)
    if achieved == "yes" and facts:
        # Mechanical facts outrank the model's judgement: a "yes" against them is a "partially".
        st.record(f"REFLECT: yes overruled by the facts → partially — {render.one_line('; '.join(facts), 300)}")
        achieved = "partially"
        gaps = facts + gaps
    elif achieved == "yes":
        for crit in s.criteria:
            # the model's "yes" does not pass a criterion an unfinished item concerns: the report
            # must not say "[pass] the check passes" for an item whose check never passed
            if crit.status == "open" and not _unfinished(s, crit.id):
                s.set_criterion(crit.id, "pass", "reflect: the goal is achieved")
        s.push_front(s.task("DONE"))
        st.record("REFLECT: achieved")
        return
    else:
        gaps = gaps + [f for f in facts if f not in gaps]
    _not_achieved(st, achieved, gaps, "The reflection judged the goal")


def _not_achieved(st: Step, achieved: str, gaps: list[str], who: str, *, trigger: str = "reflect_gaps", **payload: Any) -> None:
    """A gate said "not yet": count it against the convergence cap, then a route branch or the question."""
    s, params = st.s, st.cfg.params
    s.counters.reflectNo += 1
    st.record(
        f"{'REFLECT' if trigger == 'reflect_gaps' else 'DONE GATE'}: {achieved} ({s.counters.reflectNo}/{params.maxReflectNo})"
        + (f" — gaps: {render.one_line('; '.join(gaps), 200)}" if gaps else "")
    )
    if s.counters.reflectNo >= params.maxReflectNo:
        gap_text = "".join(f"\n- {g}" for g in gaps[:8])
        st.ask(
            "convergence",
            f"{who} '{achieved}' {s.counters.reflectNo} times without reaching DONE "
            f"(maxReflectNo {params.maxReflectNo}).{(' Open gaps:' + gap_text) if gaps else ''}",
        )
        return
    s.push_front(s.task("ROUTE", trigger=trigger, gaps=gaps, achieved=achieved, **payload))


def on_done(st: Step, task: Task, facts: CheckFacts | None) -> None:
    """The DONE gate: the person's check runs once more on the final workspace; only a pass is DONE."""
    s = st.s
    if facts is not None:
        s.counters.checks += 1
        code, fact = check_fact(facts)
        s.lastCheck = LastCheck(passed=facts.passed, fact=fact)
        s.note(f"final {fact}")
        if not facts.passed:
            error = f"The check command `{facts.command}` fails on the final workspace ({code}). Output (tail):\n{render.tail(facts.output, 1500)}"
            st.record(f"DONE GATE: final check failed ({code}) — not DONE")
            _not_achieved(st, "not achieved", [f"the final {fact} (it must pass)"], "The final check found the goal",
                          trigger="final_check_failed", error=error)
            return
        st.record(f"DONE GATE: final check passed ({code})")
    facts = open_facts(s)
    if facts:
        # Reached without REFLECT (a route "done" with reflect off): the facts still decide.
        st.record(f"DONE GATE: not DONE, the facts say otherwise — {render.one_line('; '.join(facts), 300)}")
        _not_achieved(st, "partially", facts, "The facts found the goal", trigger="open_facts")
        return
    s.outcome = "done"
    s.queue = []
    st.effects += [Say(render.synthesis(s), "synthesis"), SetStatus("DONE", "goal achieved")]
    st.record(f"DONE: {sum(1 for i in s.items if i.status == 'done')} items done")


HANDLERS = {
    "INTERPRET": on_interpret,
    "DO": on_do,
    "CHECK": on_check,
    "EVALUATE": on_evaluate,
    "CLOSE": on_close,
    "REFLECT": on_reflect,
    "ROUTE": on_route,
    "DONE": on_done,
}
