"""The local scheduler: drives a process tree serially, delivers each child's end to its parent once.

A parent that spawned a child waits (IDLE) while the child runs. When the child settles (its
final ``respond``, a question it asks, or a terminal status) the scheduler delivers it into the
parent's inbox and the parent wakes. v1 is serial: one process runs at a time, children first.

Exactly-once delivery across crashes, with no record that grows with the number of children:

1. the parent's inbox gets an item whose id is derived from the child (``child-<id>``); saved;
2. the child is marked delivered (``Process.delivery``) and closed (DONE); saved.

The scheduler finishes pending deliveries before it runs anything, so after a crash between 1
and 2 the parent cannot have consumed the item yet: it is still in the inbox, step 1 is skipped
and step 2 is done. A crash before 1 repeats 1. A crash after 2 leaves nothing to do.

Benjy needs neither save of the parent: it records the worker it waits on in its own state and
stops waiting in the same save that consumes the reply, so the item goes into its inbox in memory,
Benjy runs, and the worker is closed once Benjy no longer waits on it (after a crash before
Benjy's save the reply is simply delivered again; after it, the worker is only closed).

A worker (spawned by Benjy: ``Process.worker``) is closed on delivery. Any other child
that asked a question (BLOCKED) stays open: a message to it (``process_steer``) runs it again, and
its next end is delivered under the next id (``child-<id>-<n>``, n = deliveries so far).

The tree is found without scanning every process file: a parent lists its undelivered children
in ``Process.children`` (written before the child's file exists; a delivered child drops out of
the list at the parent's next save).

The scheduler is the host of the processes it drives (engines.base.EngineHost, and
tools.base.WorkerHost for the delegation tools): it lets an engine spawn a child with an id it
recorded before the spawn, look a child up, and get a model for an alias.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vance_cli.crashpoints import crashpoint
from vance_cli.engines import (
    ask_again,
    awaiting_approval,
    awaits_workers,
    has_work,
    pending_question,
    waiting_on,
    worker_params,
)
from vance_cli.errors import ModelError, StoreError, UsageError, VanceError
from vance_cli.events import StatusChanged
from vance_cli.llm.base import ChatModel
from vance_cli.runtime.runner import Runtime
from vance_cli.store.process import Delivery, InboxItem, Process, Status
from vance_cli.store.transcript import child_outcome

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.store.files import ProcessStore


def delivery_id(child_id: str, n: int = 0) -> str:
    return f"child-{child_id}" if n == 0 else f"child-{child_id}-{n}"


def _delivery_text(outcome: dict[str, Any]) -> str:
    who = f"worker {outcome['child']} ({outcome.get('recipe') or 'worker'})"
    if outcome["kind"] == "reply":
        return f"[{who} replied]\n{outcome['message']}"
    why = f": {outcome['reason']}" if outcome.get("reason") else ""
    return f"[{who} ended {outcome['status']} without a reply{why}]"


class Scheduler:
    """Drive the tree under one root until nothing in it can run (the root waits or is finished)."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        model_override: str | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.runtime = runtime
        self.store: ProcessStore = runtime.store
        self.model_override = model_override
        self._should_stop = should_stop or (lambda: False)
        self.tree: dict[str, Process] = {}
        self.root: Process | None = None
        self.started = 0.0  # when this run began: wallclock nets count time inside runs only
        self._root_model: str | None = None
        self._locked: set[str] = set()

    # --- the host interface for engines ----------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @property
    def scopes(self) -> Scopes:
        return self.runtime.scopes

    def stop_requested(self) -> bool:
        return self._should_stop()

    def resolve_model(self, name: str | None) -> str:
        """The model string for a recipe's ``model`` (alias or string); ``--model`` wins over all."""
        return self.runtime.settings.resolve_model(self.model_override or name)

    def model_for(self, name: str | None) -> ChatModel:
        return self.runtime.model(self.resolve_model(name))

    def find(self, pid: str) -> Process | None:
        """A process of the tree, or from disk (None when it does not exist)."""
        if pid in self.tree:
            return self.tree[pid]
        if not self.store.path(pid).is_file():
            return None
        process = self.store.load(pid)
        self.tree[pid] = process
        return process

    def spawn(
        self,
        parent: Process,
        child_id: str,
        recipe: dict[str, Any],
        *,
        message: str,
        title: str | None = None,
        workspace: str | None = None,
        model: str | None = None,
        worker: bool = False,
        engine_params: dict[str, Any] | None = None,
    ) -> Process:
        """Create the child process file (idempotent: an existing ``child_id`` is returned as is).

        ``recipe`` is the snapshot the child runs with; ``message`` its first inbox message. The
        child is listed in the parent's ``children`` first; a parent that already wrote it there
        in its own last save (Benjy does) costs no extra save here.
        """
        existing = self.find(child_id)
        if existing is not None:
            return existing
        if child_id not in parent.children:
            parent.children.append(child_id)
            self._save(parent)
        child = Process(
            id=child_id,
            engine=recipe["engine"],
            recipe=recipe,
            recipe_name=recipe.get("name"),
            model=self.resolve_model(model if model is not None else recipe.get("model")),
            parent=parent.id,
            title=title,
            workspace=workspace or parent.workspace,
        )
        child.inbox.append(InboxItem(kind="user", sender=parent.id, content=message))
        child.engine_params.update(engine_params or {})
        child.worker = worker
        try:
            self.store.create(child)
        except StoreError:  # created by an earlier run that crashed before recording it: adopt it
            child = self.store.load(child_id)
        self.runtime.created_child(parent, child)
        self.tree[child.id] = child
        return child

    def prepare_worker(
        self,
        recipe: str,
        *,
        check: str | None = None,
        parent: Process | None = None,
        grant: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the recipe snapshot, the engine params) of a worker of ``recipe`` (VanceError when it cannot be one).

        The model names the recipe and the check, so both are held to what the person granted:
        the recipe comes from the recipe cascade of trusted scopes (a name, never a file path; a
        project recipe only while the project is trusted as it is now), and a worker never gets
        more than ``parent`` has: no exec_run, no network and no check command (a check runs a
        command) unless the parent runs with exec_run (and the network): ``grant``, what the parent
        really runs with (its ToolContext), not the recipe snapshot its process file claims.
        """
        from vance_cli.config.recipes import load_recipe, looks_like_path

        if looks_like_path(recipe):
            raise VanceError(
                f"process_spawn takes a recipe name, not a file path ({recipe!r}): workers come from the "
                "recipes of the user, the bundled ones and a trusted project's .vance/recipes/",
                hint="name a recipe such as benjy-coding or coding (`vance recipes list`)",
            )
        loaded = load_recipe(recipe, self.scopes)
        if loaded.origin == "project":
            from vance_cli.config.trust import TRUSTED, folder_state

            # Read again now: the trust state of this Scopes was read when the command started,
            # and a command run since may have changed .vance/.
            if folder_state(self.scopes.project, self.scopes.user) != TRUSTED:
                raise VanceError(
                    f"recipe {recipe!r} is in {self.scopes.project}, which changed since it was trusted "
                    "(or is not trusted); it is not used for a worker",
                    hint=f"the person can check it and run `vance trust {self.scopes.project.parent}`",
                )
        if parent is not None:
            _within_parent_grant(loaded, parent, grant, check=check, name=recipe)
        params = worker_params(loaded, self.scopes, check=check, name=recipe)
        return loaded.model_dump(mode="json"), params

    def send(self, process: Process, item: InboxItem) -> None:
        """Put ``item`` in a worker's inbox under its lock, saved (it runs after the caller's turn)."""
        with self.store.lock(process.id):
            process.inbox.append(item)
            self.store.save(process)

    def pending_question(self, process: Process) -> str | None:
        return pending_question(process)

    # --- the loop --------------------------------------------------------------------------

    async def run(self, root_id: str) -> Process:
        """Lock the root, drive its tree until nothing can run; return the root as it ended."""
        with self.store.lock(root_id):
            root = self.store.load(root_id)
            return await self.run_loaded(root)

    async def run_loaded(self, root: Process, *, root_model: str | None = None) -> Process:
        """As ``run``, for a root the caller already holds locked and loaded.

        ``root_model`` switches the root's model (``vance chat --model``) before its next turn.
        """
        if root.status == Status.DONE and root.inbox:
            raise UsageError(f"process {root.id} is DONE", hint="start a new one")
        self.runtime.check_runnable(root)  # before anything changes (ask_again below, a save)
        self.root = root
        self._root_model = root_model
        self.started = time.time()
        self.tree = {root.id: root}
        self._adopt_children(root)
        for process in self.tree.values():  # a call that waited for an approval is asked again
            ask_again(process)
        try:
            while not self._should_stop():
                self._deliver_settled()
                process = self._pick()
                if process is None:
                    break
                await self._drive(process)
        except ModelError as exc:
            self._fail_ancestors(exc)
            raise
        return root

    def _adopt_children(self, root: Process) -> None:
        """Load the open descendants of ``root`` (after a crash, a stop, or a question)."""
        frontier = [root]
        while frontier:
            parent = frontier.pop()
            ids = list(parent.children)
            waited = waiting_on(parent)
            if waited and waited not in ids:
                ids.append(waited)
            for pid in ids:
                if pid in self.tree:
                    continue
                child = self.find(pid)
                if child is None or child.parent != parent.id:
                    continue
                if child.status == Status.DONE and child.delivery is not None:
                    self._forget(parent, child)  # delivered and closed before a crash
                    continue
                frontier.append(child)

    def _forget(self, parent: Process, child: Process) -> None:
        if child.id in parent.children:
            parent.children.remove(child.id)  # saved with the parent's next save
        self.tree.pop(child.id, None)

    def _depth(self, process: Process) -> int:
        depth, seen = 0, set()
        while process.parent and process.parent in self.tree and process.id not in seen:
            seen.add(process.id)
            process = self.tree[process.parent]
            depth += 1
        return depth

    def _runnable(self, process: Process) -> bool:
        if process.status == Status.DONE:
            return False
        if process.inbox:
            return True  # a delivered child that got a message runs again
        if process.delivery is not None:
            return False
        child = waiting_on(process)
        if child is not None:
            # waiting on a child that does not exist yet: the parent spawns it (its id was
            # recorded before a crash cut the spawn off)
            return self.find(child) is None
        return has_work(process)

    def _pick(self) -> Process | None:
        candidates = [p for p in self.tree.values() if self._runnable(p)]
        if not candidates:
            return None
        return max(candidates, key=lambda p: (self._depth(p), -p.created))

    async def _drive(self, process: Process) -> None:
        lock = contextlib.nullcontext() if process is self.root else self.store.lock(process.id)
        with lock:
            self._locked.add(process.id)
            try:
                # a child delivered earlier (its question) runs again: its next end is a new delivery
                process.delivery = None
                override, self._root_model = (
                    (self._root_model, None) if process is self.root else (None, self._root_model)
                )
                await self.runtime.drive(process, host=self, model_override=override)
            finally:
                self._locked.discard(process.id)

    def save(self, process: Process) -> None:
        """Save a process of the tree (a tool's bookkeeping in its caller before an outside effect)."""
        self._save(process)

    def _save(self, process: Process) -> None:
        lock = (
            contextlib.nullcontext() if process is self.root or self._driving(process) else self.store.lock(process.id)
        )
        with lock:
            self.store.save(process)

    def _driving(self, process: Process) -> bool:
        return process.id in self._locked

    # --- delivery --------------------------------------------------------------------------

    def _settled(self, process: Process) -> bool:
        if not process.parent or process is self.root:
            return False
        if process.delivery is not None:
            return False
        if process.status == Status.RUNNING:
            return False
        if process.status in (Status.FAILED, Status.SUSPENDED) and has_work(process):
            return False  # stopped mid-turn: the next run finishes the turn first
        if waiting_on(process) is not None:
            return False
        if awaiting_approval(process):
            return False  # paused on an approval: it goes on once the person answers, not delivered
        return not has_work(process)

    def _deliver_settled(self) -> None:
        for child in [p for p in self.tree.values() if self._settled(p)]:
            parent = self.find(child.parent or "")
            if parent is None:
                continue  # an orphan (its parent's file is gone): nothing to wake
            self.deliver(parent, child)

    def deliver(self, parent: Process, child: Process) -> None:
        """Put ``child``'s outcome into ``parent``'s inbox exactly once, then close (or mark) the child.

        A worker whose parent waits on it (Benjy's in-flight worker) needs no save here: the
        parent's own state says whether it took the reply in (it stops waiting in the same save
        that consumes the item). So the item goes into the parent's inbox in memory; the parent
        runs; once it no longer waits, the worker is closed. A crash before the parent's save
        delivers again from the start; after it, the worker is only closed.
        """
        outcome = child_outcome(child)
        count = child.deliveries
        key = delivery_id(child.id, count)
        tracked = awaits_workers(parent)  # the parent's state records the worker it waits on
        if tracked and waiting_on(parent) == child.id:
            if not any(item.id == key for item in parent.inbox):
                parent.inbox.append(
                    InboxItem(id=key, kind="child", sender=child.id, content=_delivery_text(outcome), meta=outcome)
                )
            return
        if tracked:
            crashpoint("deliver.taken_in")  # a worker its parent took in already: only closing it is left
        elif not any(item.id == key for item in parent.inbox):
            parent.inbox.append(
                InboxItem(id=key, kind="child", sender=child.id, content=_delivery_text(outcome), meta=outcome)
            )
            self._save(parent)
            crashpoint("deliver.parent_saved")
        close = child.status == Status.READY or (child.status == Status.BLOCKED and child.worker)
        with self.store.lock(child.id):
            child.delivery = Delivery(to=parent.id, kind=outcome["kind"], at=time.time())
            child.deliveries = count + 1
            old = child.status
            if close:
                child.transition(Status.DONE, "closed by its parent after delivery")
            self.store.save(child)
        crashpoint("deliver.child_marked")
        if child.status != old:
            self.runtime.bus.emit(StatusChanged(child.id, old.value, child.status.value, child.status_reason))
        if child.status in (Status.DONE, Status.FAILED):
            self._forget(parent, child)

    def _fail_ancestors(self, exc: ModelError) -> None:
        """A child's model failed for good: its waiting ancestors say so (FAILED, resumable)."""
        for process in list(self.tree.values()):
            if process.status == Status.IDLE:
                old = process.status
                process.transition(Status.FAILED, f"a worker's model call failed: {exc.message}")
                lock = contextlib.nullcontext() if process is self.root else self.store.lock(process.id)
                with contextlib.suppress(StoreError), lock:
                    self.store.save(process)
                self.runtime.bus.emit(StatusChanged(process.id, old.value, Status.FAILED.value, process.status_reason))


# Tools a worker may get although the process starting it has none of them: they run nothing,
# and what they change (file_write) the person allows when they approve the spawn.
DELEGABLE_TOOLS = frozenset({"respond", "file_read", "file_list", "file_write", "structure"})


def _within_parent_grant(child: Any, parent: Process, grant: dict[str, Any] | None, *, check: str | None, name: str) -> None:
    """VanceError when a worker of ``child`` would get more than ``parent`` has (see prepare_worker).

    ``grant`` is what the parent really runs with (runtime/runner.py puts it in the ToolContext:
    the tools it may use and its exec settings), never the recipe snapshot in its process file,
    which a cloned repository may ship. No grant: nothing beyond DELEGABLE_TOOLS.
    """
    grant = grant or {}
    tools = set(grant.get("tools") or ())
    parent_exec = dict(grant.get("exec") or {})
    who = parent.recipe_name or parent.engine
    why = f"this process ({who}) may not run commands: its recipe has no exec_run"
    if check and "exec_run" not in tools:
        raise VanceError(
            f"check runs a command ({check!r}); {why}, and a worker never gets more than the process that starts it",
            hint="spawn without check (the person can run `vance benjy run GOAL --check CMD` themselves)",
        )
    if "exec_run" in child.tool_names() and "exec_run" not in tools:
        raise VanceError(
            f"recipe {name!r} grants exec_run; {why}, and a worker never gets more than the process that starts it",
            hint="use a recipe without exec_run, e.g. coding",
        )
    more = [t for t in child.tool_names() if t not in tools and t not in DELEGABLE_TOOLS]
    if more:
        raise VanceError(
            f"recipe {name!r} grants {', '.join(more)}, which this process ({who}) does not have, and a "
            "worker never gets more than the process that starts it",
            hint="use a recipe whose tools the calling process has, e.g. coding",
        )
    # Every exec setting a recipe can give its commands (network today; any later one such as a
    # sandbox mode or passed variables likewise): the worker's must be the parent's or the default.
    defaults = type(child.exec)().model_dump()
    for key, value in child.exec.model_dump().items():
        if value == defaults.get(key) or value == parent_exec.get(key, defaults.get(key)):
            continue
        if key == "network":
            raise VanceError(
                f"recipe {name!r} gives its commands the network (exec: {{network: true}}), which this process does not have",
                hint="use a recipe without exec.network",
            )
        raise VanceError(
            f"recipe {name!r} sets exec.{key} = {value!r} for its commands, which this process ({who}) does not have",
            hint=f"use a recipe without exec.{key}",
        )
