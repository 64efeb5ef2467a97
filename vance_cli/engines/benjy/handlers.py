"""Benjy's pure handlers: (state, task, input) → (new state, effects). No I/O, no clock, no ids.

The engine does the impure part of a task first (a controller call, the check command, a fresh
worker id), then calls ``step`` with its result. ``step`` forks the state (the input state is never
modified), removes the task from the head of the queue, runs the task's handler, counts progress
for the stagnation net, fires the safety nets, applies the gates when the queue runs empty, and
writes one journal record. The engine saves the new state, then runs the effects.

``inbound`` translates inbox items into queue operations (spec §3 table); ``head_nets`` checks the
budgets that are measured before a task runs (wallclock per phase, controller tokens).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from vance_cli.engines.benjy import render
from vance_cli.engines.benjy.config import RunConfig
from vance_cli.engines.benjy.state import TERMINAL_ITEM, BenjyState, InFlight, Item, PendingQuestion, Task

ROUTE_OPS = ("retry", "split", "revise", "escalate", "ask_parent", "done", "reset", "blocked")
STUCK_REPEATS = 3
STOP_WORDS = ("stop",)


# --- inputs and effects ---------------------------------------------------------------------------


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


class _Step:
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
            text += "\n\nAnswer to continue (the limits are granted again), or answer \"stop\" to leave the run stopped."
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
        rest = chain[chain.index(after) + 1:] if after in chain else ()
        self.s.push_front(*(self.s.task(t, item_id) for t in rest))  # type: ignore[arg-type]

    def limits(self) -> dict[str, int]:
        return {"max_stagnation": self.cfg.params.maxStagnation, "max_reflect": self.cfg.params.maxReflectNo}


# --- the step -------------------------------------------------------------------------------------


def tick(state: BenjyState, ctx: Ctx) -> float:
    """Seconds of work in the current wallclock phase, counting only time inside runs."""
    c = state.counters
    start = max(c.lastTick, ctx.run_started)
    return c.phaseElapsed + max(0.0, ctx.now - start) if start else c.phaseElapsed


def _advance_clock(s: BenjyState, ctx: Ctx) -> None:
    s.counters.phaseElapsed = tick(s, ctx)
    s.counters.lastTick = ctx.now


def step(state: BenjyState, task: Task, inp: Any, ctx: Ctx) -> Outcome:
    """Run ``task`` (the head of the queue) with the result of its impure part."""
    if not state.queue or state.queue[0].id != task.id:
        raise ValueError(f"task {task.id} is not the head of the queue")
    st = _Step(state, ctx)
    s = st.s
    _advance_clock(s, ctx)
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
    if _running(s) and s.counters.stagnation >= ctx.cfg.params.maxStagnation:
        _stagnation_net(st)
    if _running(s) and s.inFlight is None and not s.queue:
        _gate(st)
    return st.outcome("error" if s.outcome == "blocked" else "info")


def _running(s: BenjyState) -> bool:
    return s.outcome is None and s.pendingQuestion is None


def _stagnation_net(st: _Step) -> None:
    s = st.s
    escalation = st.cfg.stages.get("escalation")
    open_items = [i for i in s.open_items() if not i.escalated]
    if not s.counters.stagnationEscalated and escalation and open_items:
        for item in open_items:
            s.edit_item(item.id).escalated = True
        s.counters.stagnationEscalated = True
        s.counters.stagnation = 0
        ids = ", ".join(f"#{i.id}" for i in open_items[:8])
        st.record(f"STAGNATION: {st.cfg.params.maxStagnation} tasks without progress; open items {ids} go to {escalation}")
        return
    st.ask(
        "stagnation",
        f"The run made no progress for {s.counters.stagnation} tasks in a row (maxStagnation "
        f"{st.cfg.params.maxStagnation}): no item finished, no criterion changed, nothing new arose.",
    )


def _gate(st: _Step) -> None:
    """The queue ran empty: route the open items, else reflect (or finish when reflect is off)."""
    s = st.s
    open_items = s.open_items()
    if open_items:
        s.push_back(s.task("ROUTE", trigger="queue_empty", open=[i.id for i in open_items[:20]]))
    elif st.cfg.stages.get("reflect"):
        s.push_back(s.task("REFLECT"))
    else:
        s.push_back(s.task("DONE"))


# --- handlers, one per task type ------------------------------------------------------------------


def on_interpret(st: _Step, task: Task, ans: ControllerAnswer) -> None:
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
        refs = [ids[n - 1] for n in raw.get("criteria") or [] if isinstance(n, int) and 1 <= n <= len(ids) and ids[n - 1]]
        item = s.add_item(str(raw.get("title", "")), str(raw.get("description") or ""), refs)  # type: ignore[arg-type]
        s.push_back(s.task("DO", item.id))
        new.append(item)
    s.note(f"interpret: {s.taskType}, {len(ids)} criteria, {len(new)} items")
    st.record(f"INTERPRET: {s.taskType} · {len(s.criteria)} criteria · {len(new)} new item{'s' if len(new) != 1 else ''}")


def on_do(st: _Step, task: Task, child_id: str) -> None:
    s, cfg = st.s, st.cfg
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
    s.inFlight = InFlight(child=child_id, item=item.id, attempt=item.attempts, escalated=escalated, recipe=recipe)
    s.counters.workerSpawns += 1
    error = task.payload.get("error")
    prompt = render.doer_prompt(s, item, attempt=item.attempts, cap=cap, error=error)
    st.effects += [
        Spawn(child_id, item.id, recipe, prompt, f"#{item.id} {render.one_line(item.title, 60)}"),
        SetStatus("IDLE", f"waiting on worker {child_id} (item #{item.id})"),
    ]
    st.record(f"DO #{item.id}: worker `{child_id}` ({recipe}, attempt {item.attempts}/{cap})")


def on_check(st: _Step, task: Task, facts: CheckFacts) -> None:
    s = st.s
    s.counters.checks += 1
    item = s.item(task.item)
    code = "timed out" if facts.timed_out else f"exit {facts.exit_code}"
    last = render.one_line((facts.output or "").strip().splitlines()[-1] if (facts.output or "").strip() else "", 160)
    fact = f"check `{render.one_line(facts.command, 80)}`: {code}" + (f" — {last}" if last else "")
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


def on_evaluate(st: _Step, task: Task, ans: ControllerAnswer) -> None:
    s = st.s
    data = ans.data or {}
    verdict = data.get("verdict", "fail")
    reasons = [str(r) for r in data.get("reasons") or []]
    for upd in data.get("criteria") or []:
        cid = upd.get("id")
        if isinstance(cid, int) and s.item(task.item) and 1 <= cid <= len(s.criteria) and upd.get("status") in ("pass", "fail"):
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


def on_close(st: _Step, task: Task, _inp: Any) -> None:
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


def on_reflect(st: _Step, task: Task, ans: ControllerAnswer) -> None:
    s, params = st.s, st.cfg.params
    data = ans.data or {}
    achieved = data.get("achieved", "no")
    gaps = [render.one_line(str(g), 300) for g in data.get("gaps") or [] if str(g).strip()]
    s.note(f"reflect: {achieved}" + (f" — gaps: {'; '.join(gaps[:3])}" if gaps else ""))
    if achieved == "yes":
        for crit in s.criteria:
            # the model's "yes" does not pass a criterion an unfinished item concerns: the report
            # must not say "[pass] the check passes" for an item whose check never passed
            unfinished = [i.id for i in s.items if crit.id in i.criteria and i.status != "done"]
            if crit.status == "open" and not unfinished:
                s.set_criterion(crit.id, "pass", "reflect: the goal is achieved")
        s.push_front(s.task("DONE"))
        st.record("REFLECT: achieved")
        return
    s.counters.reflectNo += 1
    st.record(f"REFLECT: {achieved} ({s.counters.reflectNo}/{params.maxReflectNo})" + (f" — gaps: {render.one_line('; '.join(gaps), 200)}" if gaps else ""))
    if s.counters.reflectNo >= params.maxReflectNo:
        gap_text = "".join(f"\n- {g}" for g in gaps[:8])
        st.ask(
            "convergence",
            f"The reflection judged the goal '{achieved}' {s.counters.reflectNo} times without reaching DONE "
            f"(maxReflectNo {params.maxReflectNo}).{(' Open gaps:' + gap_text) if gaps else ''}",
        )
        return
    s.push_front(s.task("ROUTE", trigger="reflect_gaps", gaps=gaps, achieved=achieved))


def on_done(st: _Step, task: Task, _inp: Any) -> None:
    s = st.s
    s.outcome = "done"
    s.queue = []
    st.effects += [Say(render.synthesis(s), "synthesis"), SetStatus("DONE", "goal achieved")]
    st.record(f"DONE: {sum(1 for i in s.items if i.status == 'done')} items done")


def on_route(st: _Step, task: Task, ans: ControllerAnswer | None) -> None:
    decision = mechanical_route(st.s, task, st.cfg) if ans is None else dict(ans.data or {})
    apply_route(st, task, decision, mechanical=ans is None)


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


# --- route: the queue operations ------------------------------------------------------------------


def mechanical_route(s: BenjyState, task: Task, cfg: RunConfig) -> dict[str, Any]:
    """The fallback policy when route is off (§4): retry until the cap, escalate once, then BLOCKED."""
    trigger = task.payload.get("trigger")
    item = s.item(task.item)
    if trigger in ("check_failed", "worker_ended", "item_cap") and item is not None:
        if item.attempts < cfg.params.maxItemAttempts + (1 if item.escalated and cfg.stages.get("escalation") else 0):
            return {"op": "retry", "item": item.id, "reason": "mechanical: retry until the attempt cap"}
        if cfg.stages.get("escalation") and not item.escalated:
            return {"op": "escalate", "item": item.id, "reason": "mechanical: the attempt cap is reached, escalating"}
        return {"op": "blocked", "item": item.id,
                "reason": f"item #{item.id} failed {item.attempts} times and there is nothing left to escalate to"}
    if trigger == "reflect_gaps":
        gaps = task.payload.get("gaps") or []
        if gaps:
            return {"op": "split", "items": [{"title": g, "description": ""} for g in gaps], "reason": "mechanical: one item per gap"}
        return {"op": "blocked", "reason": "the reflection found the goal not achieved but named no gaps"}
    if trigger == "queue_empty":
        return {"op": "retry", "reason": "mechanical: retry the open items"}
    return {"op": "continue", "reason": f"mechanical: {trigger} noted"}


def _fingerprint(s: BenjyState, decision: dict[str, Any]) -> str:
    items = "".join(f"{i.status[0]}{i.attempts}" for i in s.items)
    crit = "".join(c.status[0] for c in s.criteria)
    key = f"{decision.get('op')}|{decision.get('item')}|{len(decision.get('items') or [])}|{items}|{crit}|{len(s.queue)}"
    return hashlib.sha1(key.encode()).hexdigest()[:16]


def _new_items(st: _Step, raw: list[Any], what: str, criteria: list[int]) -> list[Item]:
    s, cap = st.s, st.cfg.params.maxInitialItems
    raw = [r for r in raw if isinstance(r, dict) and str(r.get("title", "")).strip()]
    if cap >= 1 and len(raw) > cap:
        st.record(f"TRUNCATED: {what} gave {len(raw)} items; maxInitialItems keeps the first {cap}")
        raw = raw[:cap]
    return [s.add_item(str(r["title"]), str(r.get("description") or ""), criteria) for r in raw]


def _retry_open(st: _Step, task: Task) -> list[str]:
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
        parts.append(f"The person was asked: {render.one_line(task.payload.get('question'), 300)}\nThey answered: {task.payload['answer']}")
    elif task.payload.get("text"):
        parts.append(f"The person wrote: {task.payload['text']}")
    return "\n\n".join(parts) or None


def apply_route(st: _Step, task: Task, decision: dict[str, Any], *, mechanical: bool = False) -> None:
    s, cfg = st.s, st.cfg
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
            st.record(f"{where}: retry — {', '.join(done) if done else 'nothing open to retry'}" + (f" ({reason})" if reason else ""))
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
            st.record(f"{where}: escalate #{item.id} to {cfg.stages['escalation']}" + (f" — {reason}" if reason else ""))
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
            s.mark_progress()  # the item's definition changed
            s.drop_item_tasks(item.id)
            s.push_front(s.task("DO", item.id, error=error))
            st.record(f"{where}: revise #{item.id} — {render.one_line(edited.title, 120)}")
            return
        if not raw:
            st.record(f"{where}: {op} without items — nothing changed" + (f" ({reason})" if reason else ""))
            return
        parent_criteria = list(item.criteria) if item is not None else []
        new = _new_items(st, raw, f"route {op}", parent_criteria)
        if item is not None and item.status not in TERMINAL_ITEM:
            s.set_item_status(item.id, "dropped")
            s.drop_item_tasks(item.id)
        s.push_front(*(s.task("DO", n.id) for n in new))
        st.record(f"{where}: {op}{f' #{item.id}' if item else ''} into " + ", ".join(f"#{n.id}" for n in new))
    elif op == "ask_parent":
        question = str(decision.get("question") or decision.get("reason") or "How should I continue?")
        st.record(f"{where}: ask_parent")
        st.ask("ask_parent", question, checkpoint=False)
    elif op == "done":
        s.push_front(s.task("REFLECT" if cfg.stages.get("reflect") else "DONE"))
        st.record(f"{where}: done → {'REFLECT' if cfg.stages.get('reflect') else 'DONE'}" + (f" ({reason})" if reason else ""))
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


# --- inbound: the inbox → queue operations (spec §3 table) ---------------------------------------


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


def inbound(state: BenjyState, item: dict[str, Any], ctx: Ctx) -> Outcome:
    """One inbox item (``id``, ``kind``, ``sender``, ``content``, ``meta``) as queue operations."""
    st = _Step(state, ctx)
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
            st.push_chain_rest(target.id, "DO")
            st.record(f"REPLY #{target.id}: {render.one_line(summary, 200)}")
        else:
            why = f"worker {flight.child} ended {meta.get('status')} without a reply" + (f": {meta.get('reason')}" if meta.get("reason") else "")
            edited.lastError = why
            s.note(f"#{target.id} {why}")
            s.push_front(s.task("ROUTE", target.id, trigger="worker_ended", error=why))
            st.record(f"ENDED #{target.id}: {render.one_line(why, 200)} → ROUTE")
        if not s.queue and _running(s):
            _gate(st)
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


# --- nets measured before a task runs -------------------------------------------------------------


def head_nets(state: BenjyState, ctx: Ctx) -> Outcome | None:
    """Wallclock per phase and the controller token budget: a checkpoint question when spent."""
    params = ctx.cfg.params
    elapsed = tick(state, ctx)
    used = state.counters.controllerTokens - state.counters.grantBaseline
    if elapsed > params.maxWallclockMinutes * 60:
        st = _Step(state, ctx)
        _advance_clock(st.s, ctx)
        st.ask("wallclock", f"This phase of the run has worked {elapsed / 60:.1f} minutes (maxWallclockMinutes {params.maxWallclockMinutes:g}).")
        return st.outcome()
    if used > params.maxTokens:
        st = _Step(state, ctx)
        _advance_clock(st.s, ctx)
        st.ask(
            "tokens",
            f"The controller calls used {used} tokens since the last grant (maxTokens {params.maxTokens}; "
            f"{state.counters.controllerTokens} in total).",
        )
        return st.outcome()
    return None
