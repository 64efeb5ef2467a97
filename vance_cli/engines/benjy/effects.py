"""What Benjy's handlers take and give: the step's inputs (Ctx and the impure parts' results), its effects, and Step.

The handlers are pure: a handler gets the forked state in a ``Step`` and adds effects to it
(a journal record, a message for the reader, a status change, a worker to spawn); the engine
saves the new state, then runs the effects (engine.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vance_cli.engines.benjy import render
from vance_cli.engines.benjy.config import RunConfig
from vance_cli.engines.benjy.state import BenjyState, Item, PendingQuestion


@dataclass(frozen=True)
class Ctx:
    cfg: RunConfig
    now: float
    run_started: float = 0.0


@dataclass
class ControllerAnswer:
    status: str  # ok | stale
    data: Any = None
    errors: list[str] = field(default_factory=list)
    tokens: int = 0
    calls: int = 0


@dataclass
class DoInput:
    """DO's impure part: a fresh worker id and the workspace's fingerprint before the worker."""

    child: str
    before: str | None = None


@dataclass
class CheckFacts:
    command: str
    exit_code: int | None
    output: str
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass
class Journal:
    text: str
    level: str = "info"


@dataclass
class Say:
    """An assistant turn for the reader: a question, a diagnosis, the final synthesis."""

    text: str
    kind: str  # question | diagnosis | synthesis


@dataclass
class Dialog:
    """A person's (or parent's) message, recorded verbatim in the history."""

    text: str
    inbox_id: str


@dataclass
class SetStatus:
    status: str  # IDLE | BLOCKED | DONE | RUNNING
    reason: str | None = None


@dataclass
class Spawn:
    child: str
    item: int
    recipe: str
    prompt: str
    title: str


@dataclass
class Outcome:
    state: BenjyState
    effects: list = field(default_factory=list)

    def of(self, kind: type) -> list:
        return [e for e in self.effects if isinstance(e, kind)]


class Step:
    """One step's working set: the forked state, its effects and its journal records."""

    def __init__(self, state: BenjyState, ctx: Ctx) -> None:
        self.s = state.fork()
        self.ctx = ctx
        self.cfg = ctx.cfg
        self.effects: list = []
        self.records: list[str] = []

    def record(self, text: str) -> None:
        self.records.append(text)

    def outcome(self, level: str = "info") -> Outcome:
        if self.records:
            self.effects.insert(0, Journal(render.journal_entry(self.records, self.s), level))
        return Outcome(self.s, self.effects)

    # helpers shared by handlers

    def cap(self, item: Item) -> int:
        return self.cfg.params.maxItemAttempts + (1 if item.escalated and self.cfg.stages.get("escalation") else 0)

    def ask(self, reason: str, diagnosis: str, *, checkpoint: bool = True) -> None:
        text = diagnosis
        if checkpoint:
            text += '\n\nAnswer to continue (the limits are granted again), or answer "stop" to leave the run stopped.'
        self.s.pendingQuestion = PendingQuestion(text=text, reason=reason, asked=self.ctx.now)
        self.s.counters.questions += 1
        self.effects += [Say(text, "question"), SetStatus("BLOCKED", f"question ({reason})")]
        self.record(f"QUESTION ({reason}): {render.one_line(diagnosis, 200)}")

    def block(self, diagnosis: str, reason: str) -> None:
        self.s.outcome = "blocked"
        self.s.diagnosis = diagnosis
        self.effects += [Say(diagnosis, "diagnosis"), SetStatus("BLOCKED", reason)]
        self.record(f"BLOCKED: {render.one_line(diagnosis, 300)}")

    def push_chain_rest(self, item_id: int, after: str) -> None:
        chain = self.cfg.chain(self.s.taskType)
        rest = chain[chain.index(after) + 1 :] if after in chain else ()
        self.s.push_front(*(self.s.task(t, item_id) for t in rest))  # type: ignore[arg-type]

    def limits(self) -> dict[str, int]:
        return {"max_stagnation": self.cfg.params.maxStagnation, "max_reflect": self.cfg.params.maxReflectNo}
