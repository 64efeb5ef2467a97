"""Builders for Benjy's unit tests: a run config, a state with items, controller answers."""

from __future__ import annotations

from typing import Any

from vance_cli.engines.benjy.config import BenjyParams, RunConfig
from vance_cli.engines.benjy.effects import CheckFacts, ControllerAnswer, Ctx
from vance_cli.engines.benjy.handlers import step
from vance_cli.engines.benjy.state import BenjyState

NOW = 1_000_000.0


def cfg(*, route=True, evaluate=True, reflect=True, escalation=True, check: str | None = "make test",
        task_types=("info", "coding", "planning", "analysis"), **params: Any) -> RunConfig:
    features: dict[str, Any] = {"interpret": {"recipe": "benjy-interpret"}}
    stages: dict[str, str | None] = {"interpret": "benjy-interpret"}
    for name, on, recipe in (("route", route, "benjy-route"), ("evaluate", evaluate, "benjy-evaluate"),
                             ("reflect", reflect, "benjy-reflect"), ("escalation", escalation, "coding")):
        features[name] = {"recipe": recipe} if on else None
        stages[name] = recipe if on else None
    p = BenjyParams(doRecipe="benjy-do-coding", taskTypes=list(task_types), features=features, **params)
    return RunConfig(params=p, stages=stages, checkCommand=check)


def ctx(c: RunConfig | None = None, now: float = NOW) -> Ctx:
    return Ctx(cfg=c or cfg(), now=now, run_started=NOW)


def ans(data: Any, tokens: int = 100, status: str = "ok") -> ControllerAnswer:
    return ControllerAnswer(status=status, data=data, tokens=tokens, calls=1, errors=[] if status == "ok" else ["(root): boom"])


def passed(command: str = "make test") -> CheckFacts:
    return CheckFacts(command=command, exit_code=0, output="all good\n")


def failed(command: str = "make test", output: str = "FAILED test_x: expected 2, got 3\n") -> CheckFacts:
    return CheckFacts(command=command, exit_code=1, output=output)


def state(items: int = 0, task_type: str = "coding", goal: str = "make it work", criteria: int = 1) -> BenjyState:
    s = BenjyState(goal=goal, taskType=task_type)
    for n in range(criteria):
        s.add_criterion(f"criterion {n + 1}")
    for n in range(items):
        s.add_item(f"item {n + 1}", f"details {n + 1}", [1] if criteria else [])
    s.counters.lastTick = NOW
    return s


def queue(s: BenjyState, *specs: tuple) -> BenjyState:
    """Replace the queue: specs are ("DO", 1) or ("ROUTE", 1, {"trigger": ...})."""
    s.queue = []
    for spec in specs:
        kind, item = spec[0], (spec[1] if len(spec) > 1 else None)
        payload = spec[2] if len(spec) > 2 else {}
        s.queue.append(s.task(kind, item, **payload))
    return s


def run(s: BenjyState, inp: Any = None, c: RunConfig | None = None, now: float = NOW):
    """One step on the head of the queue."""
    return step(s, s.queue[0], inp, ctx(c, now))


def types(s: BenjyState) -> list[str]:
    return [t.chip for t in s.queue]
