"""Benjy's safety nets and gates (spec §6): the budgets, the stagnation net, the gate when the queue runs empty.

``head_nets`` checks the budgets measured before a task runs (wallclock per phase, controller
tokens); ``stagnation_net`` and ``gate`` run after a step (handlers.step); ``grant`` renews the
budgets when a question is answered (inbound.py).
"""

from __future__ import annotations

from vance_cli.engines.benjy.effects import Ctx, Outcome, Step
from vance_cli.engines.benjy.state import BenjyState


def tick(state: BenjyState, ctx: Ctx) -> float:
    """Seconds of work in the current wallclock phase, counting only time inside runs."""
    c = state.counters
    start = max(c.lastTick, ctx.run_started)
    return c.phaseElapsed + max(0.0, ctx.now - start) if start else c.phaseElapsed


def advance_clock(s: BenjyState, ctx: Ctx) -> None:
    s.counters.phaseElapsed = tick(s, ctx)
    s.counters.lastTick = ctx.now


def running(s: BenjyState) -> bool:
    return s.outcome is None and s.pendingQuestion is None


def stagnation_net(st: Step) -> None:
    s = st.s
    escalation = st.cfg.stages.get("escalation")
    open_items = [i for i in s.open_items() if not i.escalated]
    if not s.counters.stagnationEscalated and escalation and open_items:
        for item in open_items:
            s.edit_item(item.id).escalated = True
        s.counters.stagnationEscalated = True
        s.counters.stagnation = 0
        ids = ", ".join(f"#{i.id}" for i in open_items[:8])
        st.record(
            f"STAGNATION: {st.cfg.params.maxStagnation} tasks without progress; open items {ids} go to {escalation}"
        )
        return
    st.ask(
        "stagnation",
        f"The run made no progress for {s.counters.stagnation} tasks in a row (maxStagnation "
        f"{st.cfg.params.maxStagnation}): no item finished, no criterion changed, nothing new arose.",
    )


def gate(st: Step) -> None:
    """The queue ran empty: route the open items, else reflect (or finish when reflect is off)."""
    s = st.s
    open_items = s.open_items()
    if open_items:
        s.push_back(s.task("ROUTE", trigger="queue_empty", open=[i.id for i in open_items[:20]]))
    elif st.cfg.stages.get("reflect"):
        s.push_back(s.task("REFLECT"))
    else:
        s.push_back(s.task("DONE"))


def grant(s: BenjyState, reason: str, now: float) -> None:
    """An answered question grants anew (§6); only a token checkpoint moves the token baseline."""
    c = s.counters
    c.stagnation = 0
    c.reflectNo = 0
    c.phaseElapsed = 0.0
    c.lastTick = now
    c.routeRecent = []
    if reason == "tokens":
        c.grantBaseline = c.controllerTokens


def head_nets(state: BenjyState, ctx: Ctx) -> Outcome | None:
    """Wallclock per phase and the controller token budget: a checkpoint question when spent."""
    params = ctx.cfg.params
    elapsed = tick(state, ctx)
    used = state.counters.controllerTokens - state.counters.grantBaseline
    if elapsed > params.maxWallclockMinutes * 60:
        st = Step(state, ctx)
        advance_clock(st.s, ctx)
        st.ask(
            "wallclock",
            f"This phase of the run has worked {elapsed / 60:.1f} minutes (maxWallclockMinutes {params.maxWallclockMinutes:g}).",
        )
        return st.outcome()
    if used > params.maxTokens:
        st = Step(state, ctx)
        advance_clock(st.s, ctx)
        st.ask(
            "tokens",
            f"The controller calls used {used} tokens since the last grant (maxTokens {params.maxTokens}; "
            f"{state.counters.controllerTokens} in total).",
        )
        return st.outcome()
    return None
