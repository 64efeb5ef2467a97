"""Runtime: the one place that turns a process file into a running engine and back.

It resolves the model, builds the tool set, holds the process lock for the whole run, saves after
every engine step (the engine calls ``persist``), and maps failures onto the process status: a
model that fails for good leaves the process FAILED with its history intact, Ctrl+C leaves it
SUSPENDED; both resume with ``--resume``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.config.trust import project_trusted
from vance_cli.crashpoints import crashpoint
from vance_cli.errors import ModelError, StoreError, UsageError
from vance_cli.events import EventBus, StatusChanged
from vance_cli.llm.base import ChatModel
from vance_cli.names import MCP_PREFIX
from vance_cli.store.files import ProcessStore, is_future_dated
from vance_cli.store.process import InboxItem, Process, Status

if TYPE_CHECKING:
    from vance_cli.config.recipes import Recipe
    from vance_cli.engines.base import Engine, EngineHost
    from vance_cli.tools.approval import Gate

ModelFactory = Callable[[str, Settings], ChatModel]


def _default_model_factory(model: str, settings: Settings) -> ChatModel:
    from vance_cli.llm.factory import make_model

    return make_model(model, settings)


class Runtime:
    def __init__(
        self,
        scopes: Scopes,
        settings: Settings,
        *,
        store: ProcessStore | None = None,
        bus: EventBus | None = None,
        model_factory: ModelFactory | None = None,
        stream: bool = False,
        approvals: Gate | None = None,
    ) -> None:
        self.scopes = scopes
        self.settings = settings
        self.store = store or ProcessStore.for_scopes(scopes)
        self.bus = bus or EventBus()
        self.model_factory = model_factory or _default_model_factory
        # Stream model calls for a live display (MessageDelta events); what is saved is the same.
        self.stream = stream
        # An async (process_id, path, text) that writes a file_write's file instead of the tool
        # (`vance acp`: the editor's fs/write_text_file); None: the tool writes it.
        self.file_writer: Callable[[str, Path, str], Awaitable[None]] | None = None
        # Decides on every tool call that needs approval (runtime/approvals.py). The default asks
        # nobody: such a call is not run and its turn waits (chat -p without --allow / --yes).
        self._approvals = approvals
        # One model object per model string for the runtime's life: a scripted model keeps its
        # place in the script across turns, an HTTP model keeps its connection pool.
        self._models: dict[str, ChatModel] = {}
        self._tools = None
        # Processes this invocation created (and their children): the user chose their tools on
        # this command line (--recipe, --allow-exec, --check), so an untrusted folder does not
        # narrow them. Process files found on disk there might have come with the repository.
        self._created: set[str] = set()

    @property
    def approvals(self) -> Gate:
        if self._approvals is None:
            from vance_cli.runtime.approvals import ApprovalGate

            self._approvals = ApprovalGate(self.scopes, self.settings, bus=self.bus)
        return self._approvals

    @approvals.setter
    def approvals(self, gate: Gate) -> None:
        self._approvals = gate

    def model(self, name: str) -> ChatModel:
        if name not in self._models:
            self._models[name] = self.model_factory(name, self.settings)
        return self._models[name]

    async def aclose(self) -> None:
        """Close the models' connections; call once, inside the event loop that used them."""
        models, self._models = list(self._models.values()), {}
        for model in models:
            with contextlib.suppress(Exception):
                await model.aclose()

    # --- creating and finding processes -----------------------------------------------------

    def new_process(
        self,
        recipe_name: str,
        *,
        model: str | None = None,
        workspace: Path | None = None,
        parent: str | None = None,
        title: str | None = None,
    ) -> Process:
        from vance_cli.config.recipes import load_recipe

        process = self.process_of(load_recipe(recipe_name, self.scopes), model=model, workspace=workspace, parent=parent, title=title)
        self.create(process)
        return process

    def process_of(
        self,
        recipe: Recipe,
        *,
        model: str | None = None,
        workspace: Path | None = None,
        parent: str | None = None,
        title: str | None = None,
    ) -> Process:
        """A new process of ``recipe``, not yet on disk; a bad model string fails here."""
        resolved = self.model_of(recipe, model)
        return Process(
            engine=recipe.engine,
            recipe=recipe.model_dump(mode="json"),
            recipe_name=recipe.name,
            model=resolved,
            parent=parent,
            title=title,
            workspace=str((workspace or self.scopes.cwd).resolve()),
        )

    def model_of(self, recipe: Recipe, model: str | None = None) -> str:
        """The model a process of ``recipe`` (``model``: an override) calls; a bad model string
        fails here, before a process file exists."""
        resolved = self.settings.resolve_model(model or recipe.model)
        self.model(resolved)
        return resolved

    def create(self, process: Process) -> None:
        """Write the new process's file (StoreError if its id exists); this invocation made it."""
        self.store.create(process)
        self._created.add(process.id)

    def adopt(self, pid: str) -> None:
        """``pid`` was created by this invocation on another Runtime (a batch creates its runs on one
        and drives each on its own, in this process or a Ray task): it keeps the tools chosen there."""
        self._created.add(pid)

    def created_child(self, parent: Process, child: Process) -> None:
        """``child`` was spawned by ``parent`` in this invocation: it is as trusted as its parent."""
        if parent.id in self._created:
            self._created.add(child.id)

    def chats(self, *, all_folders: bool = False) -> list[Process]:
        """The chats a person resumes, newest first: top-level processes that are not Benjy runs,
        started in this folder (``all_folders``: in any folder). A process dated more than a day
        ahead is left out (store.files.is_future_dated): it would stay the newest forever."""
        here = str(self.scopes.cwd)
        return [
            p for p in self.store.list()[0]
            if p.parent is None and p.engine != "benjy" and not is_future_dated(p)
            and (all_folders or p.workspace == here)
        ]

    def find(self, *, resume: str | None, continue_last: bool, all_folders: bool = False) -> str | None:
        """The id ``--resume ID`` names, or ``--continue``'s: this folder's latest chat (``--all``:
        any folder's, as Codex scopes its picker to the folder); None for a new process."""
        if resume and continue_last:
            raise UsageError("--resume and --continue exclude each other", hint="pass one of them")
        if resume is not None:  # --resume "" is a usage error, not a new process
            return self.store.resolve_id(resume)
        if continue_last:
            chats = self.chats(all_folders=all_folders)
            if chats:
                return chats[0].id
            elsewhere = [] if all_folders else self.chats(all_folders=True)
            if elsewhere:
                raise UsageError(
                    f"there is no earlier chat in this folder ({self.scopes.cwd}); the latest chat is "
                    f"{elsewhere[0].id} in {elsewhere[0].workspace or 'an unknown folder'}",
                    hint="`vance chat --continue --all` takes the latest chat of any folder; "
                    "`vance chat --resume` lists this folder's chats",
                )
            raise UsageError("there is no earlier chat to continue", hint="start one without --continue")
        return None

    @contextlib.contextmanager
    def session(self, pid: str) -> Iterator[Process]:
        """Lock and load a process for the duration of the block; the lock names this vance."""
        with self.store.lock(pid):
            yield self.store.load(pid)

    # --- driving ----------------------------------------------------------------------------

    def send(
        self, process: Process, text: str, *, kind: str = "user", sender: str | None = None, save: bool = True
    ) -> None:
        """Put a message in the process's inbox.

        ``save=False`` is for a caller that drives the process right away: the engine's first
        save (inbox taken into the history) then records the message too, one fsync instead of
        two; a crash before it is the same as a crash before the person pressed Enter.
        """
        process.inbox.append(InboxItem(kind=kind, sender=sender, content=text))
        if not process.title and kind == "user":
            process.title = " ".join(text.split())[:60]
        if save:
            self.store.save(process)

    async def compact(self, process: Process) -> bool:
        """Summarise the older turns of a chat now (``/compact``): False when nothing is left to
        summarise. The engine is set up as for a turn (the same model, trust and tools)."""
        return bool(await self.drive(process, compact=True))

    async def drive(
        self, process: Process, *, model_override: str | None = None, host: EngineHost | None = None, compact: bool = False
    ) -> bool | None:
        """Run the engine until the process waits for a person or has nothing left to do
        (``compact``: only compact the chat's history, see ``compact``).

        ``host`` is the scheduler driving a process tree (vance_cli.runtime.scheduler): engines
        that spawn children (Benjy) and the delegation tools reach it as ``deps.host``.
        """
        from vance_cli.engines import engine_class
        from vance_cli.engines.base import EngineDeps
        from vance_cli.tools.base import ToolContext
        from vance_cli.tools.registry import builtin_registry

        self.check_runnable(process)
        if model_override:
            resolved = self.settings.resolve_model(model_override)
            self.model(resolved)  # fail before the process changes
            process.model = resolved
        if process.status in (Status.DONE,):
            raise UsageError(f"process {process.id} is DONE", hint="start a new one")
        if not model_override and process.model and not project_trusted(self.scopes) and process.id not in self._created:
            self._refuse_shipped_brain(process)
        model = self.model(process.model or self.settings.resolve_model(None))
        if self._tools is None:
            self._tools = builtin_registry()
            self._tools.mcp = _mcp_provider(self.scopes)
        tools, recipe_exec = self._tools, process.recipe.get("exec") or {}
        granted = _snapshot_tools(process)
        untrusted = None
        if not project_trusted(self.scopes) and process.id not in self._created:
            tools, recipe_exec, granted = self._untrusted_tools(process)
            untrusted = self._untrusted_where()
        deps = EngineDeps(
            model=model,
            tools=tools,
            bus=self.bus,
            persist=self._persist,
            tool_context=ToolContext(
                workspace=Path(process.workspace or self.scopes.cwd),
                settings=self.settings,
                process_id=process.id,
                # the exec_run policy, and what this process really runs with: a worker it
                # spawns never gets more (runtime/scheduler.py _within_parent_grant)
                extra={"recipe_exec": recipe_exec, "grant": {"tools": granted, "exec": dict(recipe_exec)},
                       **({"file_writer": self.file_writer} if self.file_writer is not None else {})},
                host=host,
                # the structure tool's models, a new one per call as its service makes them without a factory
                model_factory=lambda name: self.model_factory(name, self.settings),
            ),
            stream=self.stream,
            host=host,
            untrusted=untrusted,
            approvals=self.approvals,
        )
        engine = engine_class(process.engine)(deps)
        if compact:
            return await _compact(engine, process)
        try:
            await engine.run(process)
        except ModelError as exc:
            engine.flush_events()
            self._stop(process, Status.FAILED, f"model call failed: {exc.message}")
            raise
        except (KeyboardInterrupt, asyncio.CancelledError):  # CancelledError is no Exception
            engine.flush_events()
            self._stop(process, Status.SUSPENDED, "interrupted")
            raise

    def check_chat(self, process: Process) -> None:
        """UsageError (StoreError) unless ``process`` is a chat this vance can continue: what `vance
        chat --resume` and ACP's session/load accept (a Benjy run goes on with `vance benjy`)."""
        self.check_runnable(process)
        if process.engine == "benjy":
            raise UsageError(
                f"process {process.id} is a Benjy run, not a chat",
                hint=f"continue it with: vance benjy resume {process.id} (or vance benjy answer {process.id} \"...\" when it asks)",
            )
        if process.status == Status.DONE:
            raise UsageError(f"process {process.id} is DONE", hint="start a new one")

    def check_runnable(self, process: Process) -> None:
        """StoreError (before anything changes) when this vance cannot drive ``process``."""
        from vance_cli.runtime.checks import unrunnable_reason

        reason = unrunnable_reason(process)
        if reason is not None:
            raise StoreError(
                f"process {process.id} cannot be run: {reason}",
                hint=f"the file {self.store.path(process.id)} was kept untouched; fix it, or start a new process",
            )

    def _persist(self, process: Process) -> None:
        self.store.save(process)
        crashpoint(f"save.{process.engine}")

    def _refuse_shipped_brain(self, process: Process) -> None:
        """A process file in an untrusted project whose model is a script in that folder (the
        repository ships both) does not choose who drives the turn: UsageError naming --model."""
        from vance_cli.llm.factory import script_file

        script = script_file(process.model)
        if script is None:
            return
        root, command = self._untrusted_where()
        # resolved from the current directory, exactly as the scripted model opens it (never
        # from process.workspace: that field comes from the same shipped file)
        if script.resolve().is_relative_to(root.resolve()):
            raise UsageError(
                f"process {process.id} is driven by {process.model}, a script in {root}, whose .vance/ is not "
                "trusted: it is not used",
                hint=f"resume with --model MODEL, or trust the folder with: {command}",
            )

    def _untrusted_where(self) -> tuple[Path, str]:
        """The untrusted project folder and the command that trusts it."""
        from vance_cli.config.trust import check

        root = self.scopes.project.parent if self.scopes.project else self.scopes.cwd
        return root, check(self.scopes).command

    def _untrusted_tools(self, process: Process):
        """The tools a process file in an untrusted project may use, its exec settings, and the
        names of the tools it really gets (the rest of its snapshot answers with a refusal).

        Such a file may come with the cloned repository, its recipe snapshot granting exec_run.
        It gets what its recipe name grants from the trusted scopes (user, bundled), or the
        engine's default tools; every other tool in the snapshot answers with a refusal. The
        workspace must lie in the project folder.
        """
        from vance_cli.config.recipes import CHAT_DEFAULT_TOOLS, ENGINE_DEFAULT_TOOLS, Recipe, load_recipe
        from vance_cli.errors import VanceError
        from vance_cli.tools.base import Tool, ToolResult
        from vance_cli.tools.registry import builtin_registry

        project_root, command = self._untrusted_where()
        workspace = Path(process.workspace or self.scopes.cwd).resolve()
        if not workspace.is_relative_to(project_root):
            raise UsageError(
                f"process {process.id} works in {workspace}, outside {project_root}, and its file "
                f"is in {project_root}/.vance, which is not trusted",
                hint=f"if you made this process, trust the folder with: {command}",
            )
        try:
            trusted = load_recipe(process.recipe_name or "", self.scopes)
            named_file = trusted.path if trusted.origin is None else None
            if named_file is not None and named_file.resolve().is_relative_to(project_root):
                # A recipe_name that is a path to a file in the repository (outside .vance/ too):
                # the file came with the repository as much as the process file did.
                raise UsageError(f"recipe {process.recipe_name} is in the untrusted folder")
            allowed, exec_spec = set(trusted.tool_names()), trusted.exec.model_dump()
        except VanceError:
            allowed = set(ENGINE_DEFAULT_TOOLS.get(process.engine, CHAT_DEFAULT_TOOLS))
            exec_spec = {}
        try:
            wanted = Recipe.model_validate(process.recipe).tool_names()
        except Exception:  # noqa: BLE001 - the engine reports a broken snapshot itself
            wanted = []
        extra = [name for name in wanted if name not in allowed and self._tools.has(name)]
        blocked_mcp = [name for name in wanted if name not in allowed and name.startswith(MCP_PREFIX)]
        granted = [name for name in wanted if name in allowed]
        if not extra and not blocked_mcp:
            return self._tools, exec_spec, granted
        registry = builtin_registry()
        mcp_source = self._tools.mcp

        async def only_granted(name: str, blocked=frozenset(blocked_mcp)):
            if name in blocked or mcp_source is None:
                return [], f"{name} is not offered: only this process file's recipe in {project_root}/.vance grants it, and the folder is not trusted ({command})"
            return await mcp_source(name)

        registry.mcp = only_granted
        for name in extra:
            base = self._tools.get(name)
            message = (
                f"{name} is not available: this process file is in {project_root}/.vance, which is "
                f"not trusted, and only its recipe there grants {name}. Tell the user; they can "
                f"trust the folder with `{command}` and resume"
            )

            async def refuse(args, ctx, message=message) -> ToolResult:
                return ToolResult.error(message)

            registry.register(
                name,
                lambda base=base, refuse=refuse: Tool(base.name, base.description, base.parameters, refuse),
            )
        return registry, exec_spec, granted

    def _stop(self, process: Process, status: Status, reason: str) -> None:
        from vance_cli.store.process import can_transition

        old = process.status
        if old != status and can_transition(old, status):
            process.transition(status, reason)
            self.bus.emit(StatusChanged(process.id, old.value, status.value, reason))
        self.store.save(process)



def _mcp_provider(scopes):
    """MCP tools for the registry, importing the client (never ``mcp`` itself) on first use."""

    async def resolve(name: str):
        from vance_cli.tools.mcp_client import provider

        return await provider(scopes)(name)

    return resolve


def _snapshot_tools(process: Process) -> list[str]:
    """The tool names of a process's own recipe snapshot (a trusted or self-made process runs with
    them); none when the snapshot does not validate (the engine reports that itself)."""
    from vance_cli.config.recipes import Recipe

    try:
        return Recipe.model_validate(process.recipe).tool_names()
    except Exception:  # noqa: BLE001 - a snapshot that does not validate grants nothing
        return []


async def _compact(engine: Engine, process: Process) -> bool:
    from vance_cli.engines.base import Compacting

    if not isinstance(engine, Compacting):
        raise UsageError(
            f"process {process.id} ({process.engine}) has no chat history to compact",
            hint="/compact works on chats (Arthur, Ford); Benjy's state is never compacted",
        )
    try:
        return await engine.compact(process)
    finally:
        engine.flush_events()
