"""Benjy runs as a service: start, run, resume, answer, status. The CLI and the console both drive it.

A consumer subscribes to ``runtime.bus`` (vance_cli.events) before calling ``run``/``answer``;
journal entries, todos, status changes, worker tool calls and the final synthesis arrive there.
``request_stop()`` (e.g. from a Ctrl+C handler or a console button) ends the run at the next safe
point (between two tasks) with the process SUSPENDED and resumable.

``start`` loads the recipe and resolves its params once, writes the process file once (the goal
in its inbox), and returns the run still locked: the ``run`` that follows drives that same
process, with the config ``start`` resolved, without reading the file again. Nothing can take the
run in between (``vance benjy resume`` in another terminal finds it locked).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.errors import UsageError
from vance_cli.runtime.runner import Runtime
from vance_cli.runtime.scheduler import Scheduler
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import InboxItem, Process, Status

if TYPE_CHECKING:
    from vance_cli.config.recipes import Recipe

DEFAULT_RECIPE = "benjy-coding"


@dataclass
class RunResult:
    process: Process
    stopped: bool = False  # ended by a stop request (Ctrl+C in the console); resumable
    workspace_removed: str | None = None  # the temporary workspace this call disposed of at DONE

    @property
    def status(self) -> Status:
        return self.process.status

    @property
    def state(self) -> dict[str, Any]:
        from vance_cli.engines.benjy.state import encode, load_state

        return encode(load_state(self.process))

    @property
    def question(self) -> str | None:
        from vance_cli.engines import pending_question

        return pending_question(self.process)

    @property
    def diagnosis(self) -> str | None:
        return self.state.get("diagnosis")

    @property
    def synthesis(self) -> str | None:
        for m in reversed(self.process.history):
            if m.meta.get("kind") == "synthesis":
                return m.content
        return None

    @property
    def report(self) -> str | None:
        """The run's report: the synthesis when DONE; when BLOCKED, its question or diagnosis with the items and counters."""
        if self.process.status == Status.DONE:
            return self.synthesis
        if self.process.status == Status.BLOCKED:
            from vance_cli.engines.benjy.render import blocked_report
            from vance_cli.engines.benjy.state import load_state

            return blocked_report(load_state(self.process), self.process.status_reason)
        return None

    def to_dict(self) -> dict[str, Any]:
        """The run's outcome as one JSON object (`vance benjy run --json` ends a BLOCKED run with it;
        `vance mcp serve`'s benjy_run returns it): the report, and how to go on when not DONE."""
        pid, status = self.process.id, self.process.status
        out: dict[str, Any] = {"type": "report", "process_id": pid, "status": status.value, "text": self.report or ""}
        if status == Status.BLOCKED:
            out["question"] = self.question
            out["next"] = f'vance benjy answer {pid} "YOUR ANSWER"'
        elif status != Status.DONE:
            out["reason"] = self.process.status_reason
            out["next"] = f"vance benjy resume {pid}"
        return out


@dataclass(frozen=True)
class RunSetup:
    """A run's recipe and what it names, checked (``BenjyService.setup``), before anything is written."""

    recipe: Recipe
    params: Any  # engines.benjy.config.BenjyParams
    refs: dict[str, Recipe]  # every recipe the params name, by name
    criteria_files: list[str]  # the --criteria file, resolved
    model: str  # the run's model, resolved


@dataclass
class StartedRun:
    """A run ``start`` created, still locked until ``run`` drives it (or the block ends)."""

    process: Process
    temporary: bool  # its workspace is a new temporary folder
    _lock: contextlib.ExitStack = field(repr=False)

    def release(self) -> None:
        self._lock.close()

    def __enter__(self) -> StartedRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class BenjyService:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._stop = False
        self._started: dict[str, StartedRun] = {}

    def request_stop(self) -> None:
        self._stop = True

    @property
    def stop_requested(self) -> bool:
        return self._stop

    def clear_stop(self) -> None:
        """Forget an earlier stop request (the console continues a stopped run in the same service)."""
        self._stop = False

    # --- starting ------------------------------------------------------------------------------

    def resolve_workspace(self, workspace: str | Path | None, target: str | None, recipe_target: str | None) -> tuple[Path, bool]:
        """(the pinned workspace folder, whether it is a new temporary folder)."""
        if workspace is not None and target is not None:
            raise UsageError("--workspace and --target exclude each other", hint="pass one of them")
        if workspace is not None:
            from vance_cli.tools.paths import refuse_secret_workspace, secret_paths_of

            folder = existing_path(workspace, self.runtime.scopes.cwd, folder=True, what="workspace",
                                   hint="create it first, or pass --target NAME for a named workspace")
            refuse_secret_workspace(folder, secret_paths_of(self.runtime.scopes.user))  # before any file is made
            return folder, False
        name = target or recipe_target
        if name:
            if not name.replace("-", "").replace("_", "").replace(".", "").isalnum() or name.startswith("."):
                raise UsageError(f"invalid workspace name {name!r}", hint="use letters, digits, '-', '_' or '.'")
            return self._target_folder(name), False
        return Path(tempfile.mkdtemp(prefix=TEMP_PREFIX)).resolve(), True

    def _target_folder(self, name: str) -> Path:
        """``workspaces/NAME`` in the state folder, made if missing: a real folder, never a link.

        A cloned ``.vance/`` could ship ``workspaces/NAME`` (or ``workspaces`` itself) as a link to
        $VANCE_HOME or ~/.ssh; the run would then work in the person's secrets."""
        from vance_cli.store.atomic import state_folder

        state_folder(self.runtime.scopes.state_dir, what="state folder")  # a linked .vance: refused, nothing made
        base = self.runtime.scopes.state_dir / "workspaces"
        path = base / name
        for folder in (base, path):
            if folder.is_symlink():
                raise UsageError(
                    f"the workspace folder {folder} is a symbolic link; a --target workspace must be a folder of its own",
                    hint=f"remove the link (rm {folder}), or pass --workspace PATH for a folder you chose",
                )
        path.mkdir(parents=True, exist_ok=True)
        real = path.resolve()
        if real != Path(os.path.realpath(self.runtime.scopes.state_dir)) / "workspaces" / name:  # pragma: no cover - a race
            raise UsageError(f"the workspace folder {path} leads to {real}", hint="pass --workspace PATH for a folder you chose")
        return real

    def setup(self, recipe: str, *, criteria: str | Path | None = None, model: str | None = None) -> RunSetup:
        """What ``start`` checks before it writes anything: the recipe (a Benjy recipe, and every
        recipe it names), the criteria file, the model. `vance benjy batch` checks each goal with it."""
        from vance_cli.config.recipes import load_recipe
        from vance_cli.engines.benjy.config import resolve

        loaded = load_recipe(recipe, self.runtime.scopes)
        if loaded.engine != "benjy":
            raise UsageError(f"recipe {loaded.name!r} runs the {loaded.engine} engine, not benjy",
                             hint="pick a Benjy recipe: benjy-coding, benjy-research or benjy-batch")
        params, refs = resolve(loaded, self.runtime.scopes)
        criteria_files: list[str] = []
        if criteria is not None:
            from vance_cli.tools.paths import secret_near, secret_paths_of

            path = existing_path(criteria, self.runtime.scopes.cwd, folder=False, what="criteria file",
                                 hint="check the --criteria path")
            secret = secret_near(path, secret_paths_of(self.runtime.scopes.user))
            if secret is not None:  # its text goes to the model (an MCP client or a goals file may name it)
                raise UsageError(f"criteria file {path} is in {secret}, which holds credentials (the tools never read it)",
                                 hint="point it at a file of acceptance criteria outside $VANCE_HOME, ~/.ssh, ~/.aws and the like")
            criteria_files.append(str(path))
        return RunSetup(loaded, params, refs, criteria_files, self.runtime.model_of(loaded, model))

    def start(
        self,
        goal: str,
        *,
        recipe: str = DEFAULT_RECIPE,
        workspace: str | Path | None = None,
        target: str | None = None,
        check: str | None = None,
        criteria: str | Path | None = None,
        allow_exec: bool = False,
        model: str | None = None,
        keep_workspace: bool = False,
        process_id: str | None = None,
        approved_by: str = "you (vance benjy run)",
    ) -> StartedRun:
        """Validate everything, then create the process with the goal in its inbox, and keep it locked.

        Use it as a context manager: ``run(process.id)`` inside the block drives the run under
        the lock ``start`` took; leaving the block releases a run that was not driven.
        ``process_id``: the id to create it under (a batch records it before the file exists; a
        StoreError if that file exists). ``approved_by`` names who started it (and so approved its
        check and its workers' tools).
        """
        from vance_cli.engines.benjy.config import resolve_criteria, run_config
        from vance_cli.engines.benjy.state import OPTIONS_KEY, RECIPES_KEY, STATE_KEY, BenjyState
        from vance_cli.tools.approval import grant_run

        if not goal.strip():
            raise UsageError("the goal is empty", hint='pass the goal as text: vance benjy run "make the tests pass"')
        if check:  # approved by whoever started the run, but never against the person's deny rules
            from vance_cli.runtime.approvals import deny_rule

            rule = deny_rule(self.runtime.scopes, self.runtime.settings, "exec_run", check)
            if rule is not None:
                raise UsageError(
                    f"the check {check!r} is denied by the rule {rule.text} ({rule.source}): it runs through exec_run",
                    hint="pass another check, or change the rule (vance chat: /permissions lists them)",
                )
        setup = self.setup(recipe, criteria=criteria, model=model)  # fail fast, before any file is written
        ws, temporary = self.resolve_workspace(workspace, target, setup.params.workTarget.targetName)
        options = {"check": check, "allowExec": allow_exec, "criteriaFiles": setup.criteria_files, "model": model}
        if temporary:  # disposed of when the run is DONE (spec §7), unless asked to keep it
            options.update(temporaryWorkspace=True, keepWorkspace=keep_workspace)
        # what the run's first loop entry would resolve (engines/benjy/engine.py: _first_entry)
        cfg, snapshots = run_config(
            setup.params, setup.refs, check=check, allow_exec=allow_exec,
            criteria_files=resolve_criteria(setup.recipe, options, ws),
        )
        process = self.runtime.process_of(setup.recipe, model=model, workspace=ws)
        if process_id is not None:
            process.id = process_id
        process.engine_params[OPTIONS_KEY] = options
        # Whoever started this run (you typed it; an MCP client called benjy_run) approved its check
        # and --allow-exec: its workers' tools are approved once, here.
        grant_run(
            process.engine_params, by=approved_by,
            tools=["file_write", *(["exec_run"] if allow_exec else [])], check=check,
        )
        self.runtime.send(process, goal, save=False)
        lock = contextlib.ExitStack()
        lock.enter_context(self.runtime.store.lock(process.id))
        try:
            self.runtime.create(process)
        except BaseException:
            lock.close()
            raise
        # Handed to the run in memory only: the file holds the goal and the options, so a run
        # taken up from the file (after a crash, or by another vance) resolves its config itself.
        process.engine_params[STATE_KEY] = BenjyState(config=cfg.model_dump(mode="json"))
        process.engine_params[RECIPES_KEY] = snapshots
        started = StartedRun(process, temporary, lock)
        self._started[process.id] = started
        lock.callback(self._started.pop, process.id, None)
        return started

    # --- running -------------------------------------------------------------------------------

    def _scheduler(self, process: Process) -> Scheduler:
        from vance_cli.engines.benjy.state import OPTIONS_KEY

        options = process.engine_params.get(OPTIONS_KEY) or {}
        return Scheduler(self.runtime, model_override=options.get("model"), should_stop=lambda: self._stop)

    def _check_benjy(self, process: Process) -> None:
        if process.engine != "benjy":
            raise UsageError(f"process {process.id} is a {process.engine} process, not a Benjy run",
                             hint="`vance chat --resume ID` continues chats")

    @contextlib.contextmanager
    def _held(self, pid: str) -> Iterator[Process]:
        """The run ``pid`` locked and loaded: the one ``start`` holds, else from its file."""
        started = self._started.get(pid)
        if started is not None:
            with started:
                yield started.process
            return
        with self.runtime.store.lock(pid):
            process = self.runtime.store.load(pid)
            self._check_benjy(process)
            self.runtime.check_runnable(process)  # a corrupt benjyState says so before anything is written
            yield process

    async def run(self, pid: str) -> RunResult:
        """Drive the run (and its workers) until DONE, BLOCKED, a failure or a stop request."""
        pid = pid if pid in self._started else self.runtime.store.resolve_id(pid)
        with self._held(pid) as process:
            self._check_benjy(process)
            try:  # a DONE run still has its scheduler close a worker a crash left unclosed
                await self._scheduler(process).run_loaded(process)
            finally:
                await self.runtime.aclose()
            return RunResult(process, workspace_removed=dispose_workspace(process))

    async def answer(self, pid: str, text: str) -> RunResult:
        """Put the answer (or any message) in the run's inbox and continue it."""
        if not text.strip():
            raise UsageError("the answer is empty", hint='pass the answer as text: vance benjy answer ID "yes, go on"')
        pid = pid if pid in self._started else self.runtime.store.resolve_id(pid)
        with self._held(pid) as process:
            self._check_benjy(process)
            if process.status == Status.DONE:
                raise UsageError(f"process {pid} is DONE", hint="start a new run with vance benjy run")
            self.runtime.send(process, text)
            try:
                await self._scheduler(process).run_loaded(process)
            finally:
                await self.runtime.aclose()
            return RunResult(process, workspace_removed=dispose_workspace(process))

    def status(self, pid: str) -> dict[str, Any]:
        """Todos, counters, the pending question: read from the file, no lock, no model."""
        from vance_cli.engines import pending_question
        from vance_cli.engines.benjy.state import encode, load_state

        store = self.runtime.store
        process = store.load(store.resolve_id(pid))
        self._check_benjy(process)
        self.runtime.check_runnable(process)
        state = encode(load_state(process))
        items: dict[str, int] = {}
        for item in state["items"]:
            items[item["status"]] = items.get(item["status"], 0) + 1
        return {
            "id": process.id,
            "status": process.status.value,
            "reason": process.status_reason,
            "goal": state.get("goal"),
            "taskType": state.get("taskType"),
            "workspace": process.workspace,
            "items": items,
            "todos": [t.model_dump() for t in process.todos],
            "counters": state["counters"],
            "queue": [t["type"] + (f" #{t['item']}" if t.get("item") else "") for t in state["queue"]],
            "inFlight": state.get("inFlight"),
            # the question as the scheduler, the console and `benjy answer` see it (one accessor:
            # a blank one is none); its reason and time from the state
            "pendingQuestion": {**state["pendingQuestion"], "text": question} if (question := pending_question(process)) else None,
            "diagnosis": state.get("diagnosis"),
            "usage": process.usage.model_dump(),
        }


TEMP_PREFIX = "vance-benjy-"


def existing_path(text: str | Path, base: Path, *, folder: bool, what: str, hint: str) -> Path:
    """``text`` (``~`` expanded; relative: to ``base``) resolved, when it is an existing folder
    (``folder``) or file; else a UsageError ("``what`` PATH ..."). The one resolver of a run's
    workspace and criteria paths, for `vance benjy run` and each line of `vance benjy batch`."""
    path = Path(text).expanduser()
    path = (path if path.is_absolute() else base / path).resolve()
    if not (path.is_dir() if folder else path.is_file()):
        raise UsageError(f"{what} {path} {'is not an existing folder' if folder else 'does not exist'}", hint=hint)
    return path


def temporary_workspace(process: Process) -> Path | None:
    """The run's workspace when ``start`` made it as a new temporary folder, else None."""
    from vance_cli.engines.benjy.state import OPTIONS_KEY

    options = process.engine_params.get(OPTIONS_KEY) or {}
    if not options.get("temporaryWorkspace") or not process.workspace:
        return None
    path = Path(process.workspace)
    # only a folder of the form start() makes: <tempdir>/vance-benjy-*
    if not path.name.startswith(TEMP_PREFIX) or path.parent != Path(tempfile.gettempdir()).resolve():
        return None
    return path


def dispose_workspace(process: Process) -> str | None:
    """A DONE run's temporary workspace is removed (spec §7), unless the run was started with keep."""
    from vance_cli.engines.benjy.state import OPTIONS_KEY

    path = temporary_workspace(process)
    if process.status != Status.DONE or path is None or (process.engine_params.get(OPTIONS_KEY) or {}).get("keepWorkspace"):
        return None
    if not path.is_dir():
        return None
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    return None if path.exists() else str(path)


def queue_answer(store: ProcessStore, pid: str, text: str) -> None:
    """Answer a BLOCKED run that this process does not drive: the answer goes into its inbox, under its lock.

    The vance driving the run takes it in; when none does, it waits there for `vance benjy resume ID`.
    """
    with store.lock(pid):
        process = store.load(pid)
        if process.status.value != "BLOCKED":
            raise UsageError(f"process {pid} is {process.status.value}, not waiting for an answer",
                             hint="answer when the run shows a question")
        process.inbox.append(InboxItem(kind="user", content=text))
        store.save(process)
