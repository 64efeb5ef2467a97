"""benjyState: Benjy's machine data in ``engine_params["benjyState"]`` (spec §3, §5).

The queue and the items are the authority; the journal and the todos are projections of them.
Nothing here is ever compacted: a compacted counter is a deleted counter.

The handlers are pure: they take a state and return a new one. ``fork()`` makes that cheap with
structural sharing: the containers are copied, the items and criteria are shared until a handler
edits one (``edit_item`` / ``edit_criterion`` replace it with a copy), so a step costs O(items)
pointer copies, not a deep copy of every item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

if TYPE_CHECKING:
    from vance_cli.store.process import Process

STATE_KEY = "benjyState"
OPTIONS_KEY = "benjyOptions"  # run options from the CLI: check, allowExec, criteriaFiles, model
RECIPES_KEY = "benjyRecipes"  # snapshots of the recipes the run config names
BENJY_STATE_VERSION = 1

TaskType = Literal["INTERPRET", "DO", "CHECK", "EVALUATE", "CLOSE", "REFLECT", "ROUTE", "DONE"]
ItemStatus = Literal["open", "in_progress", "done", "failed", "dropped"]
CriterionStatus = Literal["open", "pass", "fail"]
TERMINAL_ITEM = frozenset({"done", "failed", "dropped"})

EVIDENCE_KEEP = 4  # evidence lines kept per item (the newest)
NOTES_KEEP = 8  # recent facts kept for the digest


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Task(_Model):
    id: int
    type: TaskType
    item: int | None = None
    payload: dict[str, Any] = Field(default_factory=dict)

    @property
    def chip(self) -> str:
        return f"{self.type} #{self.item}" if self.item is not None else self.type


class Item(_Model):
    id: int
    title: str
    description: str = ""
    status: ItemStatus = "open"
    attempts: int = 0
    escalated: bool = False
    criteria: list[int] = Field(default_factory=list)  # ids of the criteria that concern it
    evidence: list[str] = Field(default_factory=list)
    summary: str | None = None  # the last worker's reply
    lastError: str | None = None


class Criterion(_Model):
    id: int
    text: str
    status: CriterionStatus = "open"
    sourceRef: str | None = None
    evidence: str | None = None


class Counters(_Model):
    stagnation: int = 0  # tasks in a row without progress (§6)
    stagnationEscalated: bool = False  # the one mechanical escalation on stagnation is spent
    reflectNo: int = 0  # reflect verdicts partially/no since the last grant
    controllerCalls: int = 0
    controllerTokens: int = 0  # the truth: never reset
    grantBaseline: int = 0  # controllerTokens at the last token checkpoint answer
    workerTokens: int = 0
    workerSpawns: int = 0
    checks: int = 0
    tasks: int = 0
    questions: int = 0
    journal: int = 0  # journal entries written (their sequence numbers)
    phaseElapsed: float = 0.0  # seconds of work in the current wallclock phase
    lastTick: float = 0.0
    routeRecent: list[str] = Field(default_factory=list)  # fingerprints of the last route decisions


class InFlight(_Model):
    child: str  # the worker's process id, recorded before the worker is spawned
    item: int
    attempt: int
    escalated: bool = False
    recipe: str
    before: str | None = None  # the workspace's fingerprint before the worker (None: not taken)


class LastCheck(_Model):
    """The newest run of the check command: an item's CHECK or the DONE gate's final check."""

    passed: bool
    fact: str
    item: int | None = None  # None: the final check on the whole workspace


class PendingQuestion(_Model):
    text: str
    reason: str  # stagnation | wallclock | tokens | convergence | ask_parent
    asked: float = 0.0


class BenjyState(_Model):
    version: int = BENJY_STATE_VERSION
    goal: str | None = None
    taskType: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)  # the resolved run config (snapshot)
    queue: list[Task] = Field(default_factory=list)
    items: list[Item] = Field(default_factory=list)  # items[i].id == i + 1, never removed
    criteria: list[Criterion] = Field(default_factory=list)  # criteria[i].id == i + 1
    counters: Counters = Field(default_factory=Counters)
    inFlight: InFlight | None = None
    pendingQuestion: PendingQuestion | None = None
    outcome: Literal["done", "blocked"] | None = None
    lastCheck: LastCheck | None = None
    diagnosis: str | None = None
    notes: list[str] = Field(default_factory=list)  # recent facts, bounded (digest)
    nextTaskId: int = 1
    todoFrom: int = 0  # the todos show items with a greater id (a reset clears the projection)

    # set by handlers during one step; never persisted
    _progress: bool = PrivateAttr(default=False)

    # --- structural sharing ------------------------------------------------------------------

    def fork(self) -> BenjyState:
        new = self.model_copy()
        new.queue = list(self.queue)
        new.items = list(self.items)
        new.criteria = list(self.criteria)
        new.notes = list(self.notes)
        new.counters = self.counters.model_copy(update={"routeRecent": list(self.counters.routeRecent)})
        new.config = self.config  # read-only after the first loop entry
        new._progress = False
        return new

    def item(self, item_id: int | None) -> Item | None:
        if item_id is None or not 1 <= item_id <= len(self.items):
            return None
        return self.items[item_id - 1]

    def edit_item(self, item_id: int) -> Item:
        copy = self.items[item_id - 1].model_copy(update={"evidence": list(self.items[item_id - 1].evidence)})
        self.items[item_id - 1] = copy
        return copy

    def edit_criterion(self, criterion_id: int) -> Criterion:
        copy = self.criteria[criterion_id - 1].model_copy()
        self.criteria[criterion_id - 1] = copy
        return copy

    # --- mutations that count as progress (§6: the stagnation metric) ------------------------

    def add_item(self, title: str, description: str = "", criteria: list[int] | None = None) -> Item:
        item = Item(id=len(self.items) + 1, title=title.strip() or f"item {len(self.items) + 1}",
                    description=description.strip(), criteria=list(criteria or []))
        self.items.append(item)
        self._progress = True
        return item

    def add_criterion(self, text: str, source_ref: str | None = None) -> Criterion | None:
        text = " ".join(text.split())
        if not text or any(c.text == text for c in self.criteria):
            return None
        criterion = Criterion(id=len(self.criteria) + 1, text=text, sourceRef=source_ref or None)
        self.criteria.append(criterion)
        self._progress = True
        return criterion

    def set_item_status(self, item_id: int, status: ItemStatus) -> Item:
        item = self.edit_item(item_id)
        if status != item.status and status in TERMINAL_ITEM:
            self._progress = True
        item.status = status
        return item

    def set_criterion(self, criterion_id: int, status: CriterionStatus, evidence: str | None = None) -> None:
        criterion = self.edit_criterion(criterion_id)
        if criterion.status != status:
            self._progress = True
        criterion.status = status
        if evidence:
            criterion.evidence = evidence

    def mark_progress(self) -> None:
        self._progress = True

    @property
    def progressed(self) -> bool:
        return self._progress

    # --- queue -------------------------------------------------------------------------------

    def task(self, type: TaskType, item: int | None = None, **payload: Any) -> Task:
        task = Task(id=self.nextTaskId, type=type, item=item, payload=payload)
        self.nextTaskId += 1
        return task

    def push_front(self, *tasks: Task) -> None:
        self.queue[:0] = tasks

    def push_back(self, *tasks: Task) -> None:
        self.queue.extend(tasks)

    def drop_item_tasks(self, item_id: int, types: frozenset[str] | None = None) -> None:
        self.queue = [t for t in self.queue if not (t.item == item_id and (types is None or t.type in types))]

    def note(self, text: str) -> None:
        self.notes.append(" ".join(text.split())[:300])
        del self.notes[:-NOTES_KEEP]

    # --- views -------------------------------------------------------------------------------

    def open_items(self) -> list[Item]:
        return [i for i in self.items if i.status not in TERMINAL_ITEM]

    def queued_items(self) -> set[int]:
        return {t.item for t in self.queue if t.item is not None}


# --- the codec ----------------------------------------------------------------------------------


def load_state(process: Process) -> BenjyState:
    """The live state of ``process`` (parsed once, then kept as the object in engine_params)."""
    raw = process.engine_params.get(STATE_KEY)
    if isinstance(raw, BenjyState):
        return raw
    state = BenjyState() if raw is None else decode(raw)
    process.engine_params[STATE_KEY] = state
    return state


def decode(raw: dict[str, Any]) -> BenjyState:
    """The state saved in a process file; CorruptProcessFile when it is not one this vance reads
    (``params_problem`` says why before a run starts)."""
    from pydantic import ValidationError

    from vance_cli.errors import CorruptProcessFile
    from vance_cli.store.files import validation_reason

    if not isinstance(raw, dict):
        raise CorruptProcessFile(f"benjyState is {_json_kind(raw)}, not an object", hint="start a new run")
    version = raw.get("version", BENJY_STATE_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        raise CorruptProcessFile(f"benjyState version {version!r} is not a number", hint="start a new run")
    if version > BENJY_STATE_VERSION:
        raise CorruptProcessFile(
            f"benjyState version {version!r} is newer than this vance reads ({BENJY_STATE_VERSION})",
            hint="upgrade vance to resume this process",
        )
    try:
        return BenjyState.model_validate(raw)
    except ValidationError as exc:
        raise CorruptProcessFile(f"benjyState: {validation_reason(exc)}", hint="start a new run") from None


class RunOptions(_Model):
    """benjyOptions: what ``vance benjy run`` was given (runtime/benjy_service.py start)."""

    model_config = ConfigDict(extra="allow", strict=True)
    check: str | None = None
    allowExec: bool = False
    criteriaFiles: list[str] = Field(default_factory=list)
    model: str | None = None
    temporaryWorkspace: bool = False
    keepWorkspace: bool = False


def params_problem(process: Process) -> str | None:
    """Why the Benjy data of ``process`` (benjyState, benjyOptions, benjyRecipes) cannot drive a
    run or be shown, in one line; None when it can. Checked before anything is written
    (runtime/checks.py), so a hand-edited or planted file is an error naming it, not a crash."""
    from pydantic import ValidationError

    from vance_cli.config.recipes import Recipe, describe_validation_error
    from vance_cli.errors import CorruptProcessFile
    from vance_cli.store.files import validation_reason

    params = process.engine_params
    try:
        state = load_state(process)
    except CorruptProcessFile as exc:
        return exc.message
    options = params.get(OPTIONS_KEY)
    if options is not None:
        try:
            RunOptions.model_validate(options)
        except ValidationError as exc:
            return f"benjyOptions: {validation_reason(exc)}"
    recipes = params.get(RECIPES_KEY)
    if recipes is not None and not isinstance(recipes, dict):
        return f"benjyRecipes is {_json_kind(recipes)}, not an object"
    for name, snapshot in (recipes or {}).items():
        try:
            Recipe.model_validate(snapshot)
        except ValidationError as exc:
            return f"benjyRecipes[{name!r}]: {describe_validation_error(exc)}"
    if not state.config:  # not resolved yet: the first loop entry resolves it and the snapshots
        return None
    from vance_cli.engines.benjy.config import RunConfig

    try:
        cfg = RunConfig.model_validate(state.config)
    except ValidationError as exc:
        return f"benjyState.config: {validation_reason(exc)}"
    needed = [cfg.params.doRecipe, *(name for name in cfg.stages.values() if name)]
    missing = [name for name in needed if name not in (recipes or {})]
    if missing:
        return f"benjyRecipes has no snapshot of the recipe {missing[0]!r} its run config names"
    return None


def _json_kind(value: Any) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def encode(state: BenjyState) -> dict[str, Any]:
    return state.model_dump(mode="json")


def _raw(process: Process) -> Any:
    return process.engine_params.get(STATE_KEY)


def _field(raw: Any, name: str) -> Any:
    return getattr(raw, name) if isinstance(raw, BenjyState) else (raw or {}).get(name)


def has_work(process: Process) -> bool:
    """Tasks to pop now (not waiting on a worker, not waiting on a person)."""
    raw = _raw(process)
    if raw is None or process.status.value in ("BLOCKED", "DONE"):
        return False
    if _field(raw, "inFlight"):
        return False
    return bool(_field(raw, "queue"))


def waiting_on(process: Process) -> str | None:
    raw = _raw(process)
    if raw is None:
        return None
    flight = _field(raw, "inFlight")
    if not flight:
        return None
    return flight.child if isinstance(flight, InFlight) else flight.get("child")


def pending_question(process: Process) -> str | None:
    """The text of the question the run waits on an answer to (``pendingQuestion``), or None.

    Read without decoding the state, from the state object or the file's data (where a
    hand-written file may give the text alone), so a watcher of someone else's run can call it.
    """
    raw = _raw(process)
    if not isinstance(raw, (BenjyState, dict)):
        return None
    question = _field(raw, "pendingQuestion")
    if isinstance(question, PendingQuestion):
        question = question.text
    elif isinstance(question, dict):
        question = question.get("text") or question.get("question")
    return question if isinstance(question, str) and question.strip() else None
