"""The app's side of the runtime: which process the chat shows, its lock, and the person's intents.

Screens call this from workers (``turn``) or for quick, local reads (``status``, ``processes``);
widgets never see it. It holds the one-writer lock of the process on screen for as long as the
chat shows it, as the line mode does, and releases it when the chat switches or closes.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from vance_cli.engines.base import turn_open
from vance_cli.events import Event, EventBus
from vance_cli.runtime.runner import Runtime
from vance_cli.runtime.session import ChatSession, attach_in
from vance_cli.store.process import Process
from vance_cli.tools.attach import Attached
from vance_cli.tui.status import StatusInfo, status_info


class ChatController:
    def __init__(self, runtime: Runtime, pid: str | None, *, model_override: str | None = None) -> None:
        self.runtime = runtime
        # the send-and-drive shared with the line mode; its model is the switch for the next turn
        self.chat = ChatSession(runtime, pid or "", model=model_override)
        self.process: Process | None = None
        self._lock: contextlib.ExitStack | None = None
        self._turn_started: float | None = None
        self._pending_pid = pid

    @classmethod
    def from_session(cls, session: ChatSession) -> ChatController:
        runtime = session.runtime
        runtime.stream = True
        return cls(runtime, session.pid or None, model_override=session.model)  # "": none yet (the picker)

    @property
    def model_override(self) -> str | None:
        return self.chat.model

    @model_override.setter
    def model_override(self, model: str | None) -> None:
        self.chat.model = model

    # --- the process on screen ----------------------------------------------------------------

    @property
    def process_id(self) -> str | None:
        return self.process.id if self.process is not None else self._pending_pid

    @property
    def bus(self) -> EventBus:
        return self.runtime.bus

    def subscribe(self, listener) -> None:
        self.runtime.bus.subscribe(listener)

    def open(self, pid: str | None = None) -> Process:
        """Lock and load ``pid`` (default: the one the session chose); releases the previous one."""
        pid = pid or self._pending_pid
        if pid is None:
            raise RuntimeError("no process to open")
        stack = contextlib.ExitStack()
        stack.enter_context(self.runtime.store.lock(pid))  # ProcessLocked names the holder
        try:
            process = self.runtime.store.load(pid)
        except BaseException:
            stack.close()
            raise
        self.close()
        self._lock, self.process, self._pending_pid = stack, process, pid
        self.chat.pid = pid
        return process

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()
        self._lock = None
        if self.process is not None:
            self._pending_pid = self.process.id
        self.process = None

    def new(self, recipe: str | None = None, model: str | None = None) -> Process:
        """A new process, opened: the current recipe unless one is named; the current model unless
        the named recipe sets its own."""
        current = self.process
        name = recipe or (current.recipe_name if current is not None else None) or "arthur"
        if model is None:
            model = self.model_override
        if model is None and current is not None:
            from vance_cli.config.recipes import load_recipe

            # a recipe that names its own model gets it; otherwise the chat keeps its model
            if recipe is None or not load_recipe(name, self.runtime.scopes).model:
                model = current.model
        process = self.runtime.new_process(name, model=model)
        self.model_override = None
        return self.open(process.id)

    @property
    def workspace(self) -> Path:
        """The folder the open process works in (this folder while none is open)."""
        process = self.process
        return Path(process.workspace) if process is not None and process.workspace else self.runtime.scopes.cwd

    def attach(self, text: str) -> Attached:
        """``text`` with its ``@path`` files attached, as the line mode does (runtime/session.py)."""
        return attach_in(self.runtime, self.workspace, text)

    def workspace_paths(self) -> list[str]:
        """The files and folders of the workspace, for ``@`` completion."""
        from vance_cli.tools.attach import workspace_listing
        from vance_cli.tools.base import ToolContext

        return workspace_listing(ToolContext(workspace=self.workspace, settings=self.runtime.settings))

    def resolve(self, prefix: str) -> str:
        return self.runtime.store.resolve_id(prefix)

    def set_model(self, name: str) -> str:
        """Use ``name`` for the next turns of this process; fails before anything changes."""
        resolved = self.runtime.settings.resolve_model(name)
        self.runtime.model(resolved)
        self.model_override = resolved
        return resolved

    def processes(self) -> list[Process]:
        return self.runtime.store.list()[0]

    def has_open_turn(self) -> bool:
        process = self.process
        return bool(process and (process.inbox or turn_open(process)))

    def status(self) -> StatusInfo:
        p = self.process
        if p is None:
            return StatusInfo(process_id=self._pending_pid or "")
        return status_info(p, model=self.model_override, running_since=self._turn_started)

    # --- turns (called inside a worker) -------------------------------------------------------

    async def prepare_model(self) -> None:
        """Import the model's heavy client off the event loop (litellm costs seconds)."""
        process = self.process
        if process is None:
            return
        name = self.model_override or process.model
        if not name:
            return
        await self.runtime.model(self.runtime.settings.resolve_model(name)).prepare()

    async def turn(self, text: str | None) -> None:
        """Send ``text`` (None: only continue an open turn) and drive until the engine waits."""
        process = self.process
        if process is None:
            raise RuntimeError("no process open")
        if text is not None:
            self.chat.send(process, text)
        self._turn_started = time.time()
        try:
            await self.prepare_model()
            # the workers this chat starts run too; their events reach this screen tagged with their ids
            await self.chat.drive(process)
        finally:
            self._turn_started = None

    def emit(self, event: Event) -> None:
        self.runtime.bus.emit(event)
