"""The Benjy loop: drain the inbox, then pop → perform → handle → save → effects, until a boundary.

Boundaries: a worker in flight (IDLE; the scheduler runs the worker and wakes Benjy with its reply),
a question or a diagnosis (BLOCKED), DONE, or a stop request. Crash consistency (spec §3): the new
state, the journal entry and the todos land in the process file in one atomic save; only then are
events emitted and the worker spawned. The worker's id is in that save, so a crash before the
spawn spawns exactly that worker on resume, and a crash after it finds the worker and waits for it.
The impure part of a task (a model call, the check command) runs while the task is still at the
head of the queue on disk: a crash repeats it, never skips it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from vance_cli.crashpoints import crashpoint
from vance_cli.engines.base import Engine, EngineDeps, EngineHost
from vance_cli.engines.benjy import render
from vance_cli.engines.benjy.config import RunConfig, build_run_config, resolve_criteria
from vance_cli.engines.benjy.effects import (
    CheckFacts,
    ControllerAnswer,
    Ctx,
    Dialog,
    DoInput,
    Journal,
    Outcome,
    Say,
    SetStatus,
    Spawn,
)
from vance_cli.engines.benjy.handlers import step
from vance_cli.engines.benjy.inbound import inbound
from vance_cli.engines.benjy.nets import head_nets
from vance_cli.engines.benjy.routing import ROUTE_OPS, invalid_route
from vance_cli.engines.benjy.state import OPTIONS_KEY, RECIPES_KEY, STATE_KEY, BenjyState, Task, load_state
from vance_cli.errors import ConfigError, UsageError, VanceError
from vance_cli.events import JournalEvent, MessageEvent, TodosUpdated, UsageEvent
from vance_cli.messages import Message
from vance_cli.store.process import Process, Status, Todo, new_process_id

JOURNAL_CHUNK = 50  # journal entries per archive file (the history keeps up to twice that)
STAGE_SCHEMAS = {"interpret": "benjy-interpret", "evaluate": "benjy-evaluate", "reflect": "benjy-reflect", "route": "benjy-route"}
_SCHEMA_CACHE: dict[str, dict[str, Any]] = {}


def stage_schema(stage: str) -> dict[str, Any]:
    """The bundled JSON Schema of a controller stage (schemas/benjy-<stage>.json)."""
    if stage not in _SCHEMA_CACHE:
        from vance_cli.config.scopes import bundled_dir

        # Shipped with vance and checked against the meta-schema by the test suite (and by
        # call_for_json's validator); a plain read keeps the meta-schema check off every run.
        path = bundled_dir("schemas") / f"{STAGE_SCHEMAS[stage]}.json"
        _SCHEMA_CACHE[stage] = json.loads(path.read_text(encoding="utf-8"))
    return _SCHEMA_CACHE[stage]


def doer_snapshot(recipe: dict[str, Any], cfg: RunConfig) -> dict[str, Any]:
    """The worker's recipe: the doer (or escalation) snapshot with the item budget and exec policy."""
    out = json.loads(json.dumps(recipe))
    if cfg.params.maxToolCalls > 0:
        out["maxToolIterations"] = cfg.params.maxToolCalls
    tools = out.setdefault("tools", {})
    add, remove = list(tools.get("add") or []), list(tools.get("remove") or [])
    if cfg.allowExec:
        if "exec_run" not in add:
            add.append("exec_run")
        remove = [t for t in remove if t != "exec_run"]
    elif "exec_run" not in remove:
        remove.append("exec_run")  # exec_run only with --allow-exec, whatever the doer recipe says
    tools["add"], tools["remove"] = add, remove
    return out


class BenjyEngine(Engine):
    name = "benjy"

    def __init__(self, deps: EngineDeps) -> None:
        super().__init__(deps)
        self.cfg: RunConfig | None = None
        # Transitions with no effect outside the process file wait for the next save: the one
        # before a check command, a spawn, a question or the end of the run. Their events wait
        # with them, so nothing is shown before it is on disk; a crash repeats them from their
        # inputs, which are on disk (a controller call since the last save runs again: it
        # changes nothing outside, it only costs its tokens once more).
        self._dirty = False
        # The workspace's fingerprint taken when the last worker's reply came in, while nothing
        # that could change a file has run since (the check command clears it): the next DO's
        # "before" without walking the workspace a second time per item. A fresh drive (after a
        # question, a stop, a crash) walks it again.
        self._fingerprint: str | None = None

    @property
    def host(self) -> EngineHost:
        """The scheduler driving this run (``run`` refuses to start without one)."""
        assert self.deps.host is not None
        return self.deps.host

    # --- saving --------------------------------------------------------------------------------

    def _save(self, process: Process) -> None:
        self._archive_journal(process)
        self._persist(process)
        self._dirty = False

    def _flush(self, process: Process) -> None:
        """Save the transitions committed without a save of their own (and emit their events)."""
        if self._dirty:
            self._save(process)

    # --- the loop ------------------------------------------------------------------------------

    def _ctx(self) -> Ctx:
        assert self.cfg is not None
        return Ctx(cfg=self.cfg, now=time.time(), run_started=self.host.started)

    async def run(self, process: Process) -> None:
        if self.deps.host is None:
            raise VanceError(
                f"process {process.id} is a Benjy run; it runs under the scheduler",
                hint=f"continue it with: vance benjy resume {process.id}",
            )
        state = load_state(process)
        if not state.config:
            self._first_entry(process, state)
        self.cfg = RunConfig.model_validate(state.config)
        untrusted = self.deps.untrusted
        if untrusted is not None and self.cfg.checkCommand:
            # The command is read from the process file, which may have come with the repository.
            root, command = untrusted
            raise UsageError(
                f"process {process.id} runs the check command {self.cfg.checkCommand!r} from its file "
                f"in {root}/.vance, which is not trusted",
                hint=f"if you started this run, trust the folder with: {command}",
            )
        for item in list(process.inbox):
            data = item.model_dump(mode="json")
            flight = state.inFlight
            if item.kind == "child" and flight is not None and flight.before is not None and item.sender == flight.child:
                after = self._fingerprint = workspace_fingerprint(Path(process.workspace or "."))
                if after is not None:
                    data["meta"] = {**(data.get("meta") or {}), "workspaceChanged": after != flight.before}
            outcome = inbound(state, data, self._ctx())
            process.inbox.remove(item)  # consumed in the same save as its queue operations
            state = self._commit(process, outcome)
        while True:
            if state.inFlight is not None:
                await self._await_worker(process, state)
                return
            if state.outcome == "done" or process.status == Status.DONE:
                self._flush(process)
                return
            if state.outcome == "blocked" or state.pendingQuestion is not None:
                self._set_status(process, Status.BLOCKED, process.status_reason if process.status == Status.BLOCKED else "waiting for an answer")
                self._save(process)
                return
            if self.host.stop_requested():
                self._set_status(process, Status.SUSPENDED, "stopped; resume with vance benjy resume")
                self._save(process)
                return
            if not state.queue:  # nothing queued and nothing pending: wait for a message
                self._set_status(process, Status.READY, "waiting for a message")
                self._save(process)
                return
            ctx = self._ctx()
            nets = head_nets(state, ctx)
            if nets is not None:
                state = self._commit(process, nets)
                continue
            if process.status != Status.RUNNING:
                self._set_status(process, Status.RUNNING)
            task = state.queue[0]
            if task.type in ("CHECK", "DONE"):
                self._flush(process)  # what led here is on disk before the command runs
            inp = await self._perform(process, state, task)
            try:
                outcome = step(state, task, inp, self._ctx())
            except Exception as exc:  # an engine bug must not spin: stop with the diagnosis (§6)
                outcome = self._engine_error(state, task, exc)
            state = self._commit(process, outcome)

    async def _await_worker(self, process: Process, state: BenjyState) -> None:
        """The worker in flight exists (wait for it) or its spawn was cut off by a crash (spawn it)."""
        flight = state.inFlight
        assert flight is not None
        if self.host.find(flight.child) is None:
            item = state.item(flight.item)
            assert item is not None and self.cfg is not None
            error = item.lastError if flight.attempt > 1 else None
            prompt = render.doer_prompt(state, item, attempt=flight.attempt, cap=self._cap(state, flight.item), error=error)
            self._spawn(process, Spawn(flight.child, flight.item, flight.recipe, prompt, f"#{item.id} {render.one_line(item.title, 60)}"))
        before = (process.status, process.status_reason)
        self._set_status(process, Status.IDLE, f"waiting on worker {flight.child} (item #{flight.item})")
        if self._dirty or (process.status, process.status_reason) != before:
            self._save(process)
        else:
            # The DO step's save (the spawn's) already holds IDLE and the worker in flight: a
            # second save of the same state would double what every item costs (issue 20).
            self.flush_events()

    def _cap(self, state: BenjyState, item_id: int) -> int:
        assert self.cfg is not None
        item = state.item(item_id)
        extra = 1 if item is not None and item.escalated and self.cfg.stages.get("escalation") else 0
        return self.cfg.params.maxItemAttempts + extra

    def _first_entry(self, process: Process, state: BenjyState) -> None:
        """Fail-fast config check and the snapshot of every recipe the run names (§4)."""
        from vance_cli.config.recipes import Recipe

        options = process.engine_params.get(OPTIONS_KEY) or {}
        try:
            recipe = Recipe.model_validate(process.recipe)
            cfg, snapshots = build_run_config(
                recipe,
                self.host.scopes,
                check=options.get("check"),
                allow_exec=bool(options.get("allowExec")),
                criteria_files=resolve_criteria(recipe, options, Path(process.workspace or ".")),
            )
        except VanceError as exc:
            self._set_status(process, Status.FAILED, f"invalid Benjy config: {exc.message.splitlines()[0]}")
            self._save(process)
            raise
        state.config = cfg.model_dump(mode="json")
        process.engine_params[RECIPES_KEY] = snapshots
        now = time.time()
        state.counters.lastTick = now

    def _engine_error(self, state: BenjyState, task: Task, exc: Exception) -> Outcome:
        s = state.fork()
        s.outcome = "blocked"
        text = f"Engine error in {task.type}: {type(exc).__name__}: {exc}. The queue is kept; send a message to retry."
        s.diagnosis = text
        return Outcome(s, [Journal(render.journal_entry([f"ERROR: {text}"], s), "error"), Say(text, "diagnosis"), SetStatus("BLOCKED", "engine error")])

    # --- committing a transition ---------------------------------------------------------------

    def _commit(self, process: Process, outcome: Outcome) -> BenjyState:
        old = load_state(process)
        new = outcome.state
        process.engine_params[STATE_KEY] = new
        spawns: list[Spawn] = []
        for effect in outcome.effects:
            if isinstance(effect, Journal):
                new.counters.journal += 1
                meta = {"kind": "journal", "seq": new.counters.journal}
                process.history.append(Message(role="assistant", content=effect.text, meta=meta))
                self._emit(JournalEvent(process.id, effect.text, effect.level))
            elif isinstance(effect, Say):
                process.history.append(Message(role="assistant", content=effect.text, meta={"delivered": True, "kind": effect.kind}))
                self._emit(MessageEvent(process.id, effect.text, awaiting_user_input=effect.kind != "synthesis"))
            elif isinstance(effect, Dialog):
                process.history.append(Message(role="user", content=effect.text, meta={"inbox_id": effect.inbox_id, "kind": "user"}))
                if not process.title:
                    process.title = " ".join(effect.text.split())[:60]
            elif isinstance(effect, SetStatus):
                self._set_status(process, Status(effect.status), effect.reason)
            elif isinstance(effect, Spawn):
                spawns.append(effect)
                # listed as the parent's open child in the same save that records it in flight
                if effect.child not in process.children:
                    process.children.append(effect.child)
        self._project_todos(process, old, new)
        if spawns or any(isinstance(e, SetStatus) for e in outcome.effects):
            self._save(process)
        else:
            self._dirty = True
        for spawn in spawns:
            self._spawn(process, spawn)
        return new

    def _archive_journal(self, process: Process) -> None:
        """Keep the history bounded: the oldest journal entries move to Markdown files beside it.

        The process file is rewritten at every save, so a history that grows with the run makes
        the run quadratic. Past ``2 * JOURNAL_CHUNK`` entries, the oldest ``JOURNAL_CHUNK`` go to
        ``<id>.journal/<first>-<last>.md`` (written atomically, before the save that drops them:
        a crash in between rewrites the same file) and one line in the history points there.
        """
        from vance_cli.store.atomic import atomic_write_text

        journal = [m for m in process.history if m.meta.get("kind") == "journal" and "seq" in m.meta]
        if len(journal) <= 2 * JOURNAL_CHUNK:
            return
        chunk = journal[:JOURNAL_CHUNK]
        first, last = chunk[0].meta["seq"], chunk[-1].meta["seq"]
        folder = self.host.store.path(process.id).with_suffix(".journal")
        path = folder / f"{first:06d}-{last:06d}.md"
        atomic_write_text(path, "\n\n---\n\n".join(m.content or "" for m in chunk) + "\n")
        moved = {id(m) for m in chunk}
        at = next(i for i, m in enumerate(process.history) if id(m) in moved)
        process.history = [m for m in process.history if id(m) not in moved]
        note = Message(role="assistant", content=f"*Journal entries {first}–{last} are in {path}*",
                       meta={"kind": "journal", "archived": [first, last], "path": str(path)})
        process.history.insert(at, note)

    def _project_todos(self, process: Process, old: BenjyState, new: BenjyState) -> None:
        """Todos follow the items: the changed items only (unchanged ones are the same objects)."""
        if new.outcome == "done":
            if process.todos:
                process.todos = []
                self._emit(TodosUpdated(process.id, []))
            return
        if old.todoFrom != new.todoFrom:  # a reset: the cleared list, then the new items
            process.todos = [Todo(**t) for t in render.todos(new)]
            self._emit(TodosUpdated(process.id, [t.model_dump() for t in process.todos]))
            return
        if not process.todos:
            todos = render.todos(new)
            if todos:
                process.todos = [Todo(**t) for t in todos]
                self._emit(TodosUpdated(process.id, todos))
            return
        changed = [b for a, b in zip(old.items, new.items[: len(old.items)], strict=True) if a is not b] + new.items[len(old.items):]
        if not changed:
            return
        todos = list(process.todos)
        shown = list(self._todo_dicts(process))  # the event's view of them, changed alike
        gone: set[int] = set()
        dirty = False
        for item in changed:
            entry = render.todo_of(item) if item.id > new.todoFrom else None
            pos = _todo_position(todos, item.id)
            if entry is None:
                if pos is not None:
                    gone.add(pos)
                    dirty = True
            elif pos is None:
                todos.append(Todo(**entry))
                shown.append(entry)
                dirty = True
            elif (todos[pos].text, todos[pos].status) != (entry["text"], entry["status"]):
                todos[pos] = Todo(**entry)
                shown[pos] = entry
                dirty = True
        if not dirty:
            return
        if gone:
            todos = [t for i, t in enumerate(todos) if i not in gone]
            shown = [t for i, t in enumerate(shown) if i not in gone]
        process.todos = todos
        _keep_todo_view(process.id, (todos, shown))
        self._emit(TodosUpdated(process.id, list(shown)))

    def _todo_dicts(self, process: Process) -> list[dict[str, str]]:
        """``process.todos`` as the event's dicts, kept from the last update while the list is the
        same object (not built again for every transition and every wake of a long run)."""
        kept = _TODO_VIEWS.get(process.id)
        if kept is None or kept[0] is not process.todos:
            kept = (process.todos, todo_dicts(process.todos))
            _keep_todo_view(process.id, kept)
        return kept[1]

    def _spawn(self, process: Process, spawn: Spawn) -> None:
        assert self.cfg is not None
        recipes = process.engine_params.get(RECIPES_KEY) or {}
        if spawn.recipe not in recipes:
            raise ConfigError(f"the recipe {spawn.recipe!r} is not in this run's snapshot", hint="start a new run")
        crashpoint("benjy.before_spawn")
        self.host.spawn(
            process,
            spawn.child,
            doer_snapshot(recipes[spawn.recipe], self.cfg),
            message=spawn.prompt,
            title=spawn.title,
            workspace=process.workspace,
            worker=True,
        )
        crashpoint("benjy.after_spawn")

    # --- the impure part of a task -------------------------------------------------------------

    async def _perform(self, process: Process, state: BenjyState, task: Task) -> Any:
        assert self.cfg is not None
        kind = task.type
        if kind == "DO":
            before, self._fingerprint = self._fingerprint, None  # the worker may change any file
            if before is None:
                before = workspace_fingerprint(Path(process.workspace or "."))
            return DoInput(new_process_id(), before)
        if kind == "CHECK":
            return await self._check(process)
        if kind == "DONE":  # the DONE gate runs the person's check once more on the final workspace
            return await self._check(process) if self.cfg.checkCommand else None
        if kind in ("INTERPRET", "EVALUATE", "REFLECT") or (kind == "ROUTE" and self.cfg.stages.get("route")):
            return await self._controller(process, state, task)
        return None

    async def _check(self, process: Process) -> CheckFacts:
        from vance_cli.tools.base import ToolContext
        from vance_cli.tools.exec_run import make_tool as make_exec_run

        assert self.cfg is not None
        command = self.cfg.checkCommand
        if not command:
            return CheckFacts(command="(none)", exit_code=0, output="no check command")
        crashpoint("benjy.before_check")
        self._fingerprint = None  # the command may write files
        ctx = ToolContext(workspace=Path(process.workspace or "."), settings=self.host.settings, process_id=process.id)
        result = await make_exec_run().invoke(json.dumps({"command": command, "timeout": self.cfg.checkTimeout}), ctx)
        data = result.data if isinstance(result.data, dict) else {}
        output = result.content
        first, _, rest = output.partition("\n")
        if first.startswith("exit code:"):
            output = rest
        return CheckFacts(command=command, exit_code=data.get("exit_code"), output=output, timed_out=bool(data.get("timed_out")))

    async def _controller(self, process: Process, state: BenjyState, task: Task) -> ControllerAnswer:
        from vance_cli.llm.output.json_call import call_for_json

        assert self.cfg is not None
        stage = task.type.lower()
        recipe = (process.engine_params.get(RECIPES_KEY) or {})[self.cfg.stages[stage]]
        system = "\n\n".join(p for p in (recipe.get("systemPrompt"), recipe.get("promptPrefix")) if p)
        messages = [Message(role="system", content=system), Message(role="user", content=self._prompt(process, state, task))]
        model = self.host.model_for(recipe.get("model"))
        result = await call_for_json(
            model,
            messages=messages,
            schema=stage_schema(stage),
            max_loops=int((recipe.get("params") or {}).get("maxLoops", 3)),
            name=f"benjy_{stage}",
            extra_check=self._extra_check(state, stage),
            purpose="controller",
        )
        usage = result.usage
        process.usage.add(usage)
        self.deps.bus.emit(UsageEvent(process.id, usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.cost))
        crashpoint("benjy.after_controller")
        return ControllerAnswer(
            status="ok" if result.status == "ok" else "stale",
            data=result.data,
            errors=list(result.errors)
            or ([f"need-more-input: {result.need}"] if result.need else [])
            or ([f"refused: the model declined to answer: {result.refusal}"] if result.refusal else []),
            tokens=usage.total_tokens,
            calls=usage.calls,
        )

    def _prompt(self, process: Process, state: BenjyState, task: Task) -> str:
        assert self.cfg is not None
        params = self.cfg.params
        limits = {"max_stagnation": params.maxStagnation, "max_reflect": params.maxReflectNo}
        if task.type == "INTERPRET":
            return render.interpret_prompt(
                state,
                task_types=params.taskTypes,
                max_items=params.maxInitialItems,
                sources=read_sources(self.cfg.criteriaFiles),
                reset_reason=task.payload.get("reset"),
            )
        if task.type == "EVALUATE":
            item = state.item(task.item)
            return render.evaluate_prompt(state, item) if item else render.digest(state, **limits)
        if task.type == "REFLECT":
            return render.reflect_prompt(state, **limits)
        return render.route_prompt(state, task.payload, task.item, **limits)

    def _extra_check(self, state: BenjyState, stage: str):
        assert self.cfg is not None
        allowed = list(self.cfg.params.taskTypes)
        n_items = len(state.items)

        def check(data: Any) -> list[str]:
            if not isinstance(data, dict):
                return []
            if stage == "interpret" and data.get("taskType") not in allowed:
                return [f"taskType: must be one of {', '.join(allowed)} (this run allows only these)"]
            if stage == "route":
                problems = []
                if data.get("op") not in ROUTE_OPS:
                    problems.append(f"op: must be one of {', '.join(ROUTE_OPS)}")
                invalid = invalid_route(data)
                if invalid:
                    problems.append(invalid)
                item = data.get("item")
                if item is not None and not (isinstance(item, int) and 1 <= item <= n_items):
                    problems.append(f"item: {item!r} is not an item id (1..{n_items}) or null")
                return problems
            return []

        return check


FINGERPRINT_SKIP = frozenset({".git", ".hg", ".svn", ".vance", ".venv", "venv", "node_modules", "__pycache__",
                              ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox"})
FINGERPRINT_MAX_FILES = 20_000


def workspace_fingerprint(root: Path) -> str | None:
    """A digest of the workspace's files (path, size, mtime): equal before and after a worker = no file changed.

    Tool and cache folders (.git, .vance, __pycache__, ...) are left out: a check or the run's own
    files must not count as the worker's change. None when the folder is larger than
    FINGERPRINT_MAX_FILES files (the no-change rule is then not applied).

    Runs twice per item over the whole workspace, so it costs one ``lstat`` per file and little
    else (``os.scandir``, paths built once per folder): the walk of ``os.walk`` with its per-file
    ``relpath`` cost ~3x as much (bench/bench_benjy.py). The digest is the one that walk gave
    (folders top-down in name order, each folder's files by name, links to folders not followed),
    so a run in flight across an upgrade compares equal fingerprints.
    """
    import hashlib
    import os

    lines: list[str] = []
    count = 0
    stack = [("", os.fspath(root))]
    while stack:
        rel, folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                found = sorted(it, key=_entry_name)
        except OSError:
            continue  # as os.walk: an unreadable folder is left out
        folders = []
        for entry in found:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name not in FINGERPRINT_SKIP and not entry.is_symlink():
                    folders.append((f"{rel}{entry.name}/", entry.path))
                continue
            count += 1
            if count > FINGERPRINT_MAX_FILES:
                return None
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            lines.append(f"{rel}{entry.name}\0{st.st_size}\0{st.st_mtime_ns}\n")
        stack.extend(reversed(folders))
    return hashlib.sha1("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def _entry_name(entry) -> str:
    return entry.name


def todo_dicts(todos: list[Todo]) -> list[dict[str, str]]:
    """Todos as TodosUpdated carries them."""
    return [{"id": t.id, "text": t.text, "status": t.status} for t in todos]


# process id -> (its todos list as last projected, that list as TodosUpdated's dicts)
_TODO_VIEWS: dict[str, tuple[list[Todo], list[dict[str, str]]]] = {}


def _keep_todo_view(pid: str, view: tuple[list[Todo], list[dict[str, str]]]) -> None:
    _TODO_VIEWS.pop(pid, None)
    if len(_TODO_VIEWS) >= 16:
        _TODO_VIEWS.pop(next(iter(_TODO_VIEWS)))
    _TODO_VIEWS[pid] = view


def _todo_position(todos: list[Todo], item_id: int) -> int | None:
    """Where item ``item_id``'s todo is: todos follow the item order (ids 1, 2, ...) minus the
    dropped items, so it is at ``item_id - 1`` or a little before; O(1) without drops."""
    i = min(item_id - 1, len(todos) - 1)
    while i >= 0:
        current = int(todos[i].id)
        if current == item_id:
            return i
        if current < item_id:
            return None
        i -= 1
    return None


def read_sources(paths: list[str]) -> list[tuple[str, str]]:
    out = []
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            text = f"(unreadable: {exc.strerror})"
        out.append((Path(path).name, text))
    return out
