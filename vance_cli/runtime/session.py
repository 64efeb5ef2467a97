"""A chat with one process: the ONE send-and-drive, for the line mode (cli/session.py) and the console (tui/).

Sending puts the person's message in the process's inbox; driving runs it under a Scheduler, so
the workers the chat hub starts (process_spawn) run too and wake the hub with their reports. A
``--model`` (or the console's /model) is a switch for the next turn: it is spent once the
process runs on it.

``attach`` turns the ``@path`` words of a message into attached files (tools/attach.py), for
the console and the line mode alike; a path the file tools refuse fails it, before anything is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vance_cli.errors import VanceError
from vance_cli.runtime.runner import Runtime
from vance_cli.store.process import Process

if TYPE_CHECKING:
    from vance_cli.tools.attach import Attached


@dataclass
class ChatSession:
    runtime: Runtime
    pid: str
    # The model to switch the process to before its next turn (an alias or a model string).
    model: str | None = None

    @classmethod
    def open(
        cls,
        runtime: Runtime,
        *,
        recipe: str,
        model: str | None = None,
        resume: str | None = None,
        continue_last: bool = False,
        all_folders: bool = False,
        pick: bool = False,
        first: str | None = None,
    ) -> ChatSession:
        """The process ``--resume`` / ``--continue`` names, or a new one of ``recipe`` on ``model``;
        ``pick``: none yet (pid ""), the person picks one (`vance chat --resume` without an id).
        ``first``: the message that will be sent (`-p`): an ``@path`` in it that cannot be attached
        fails here, before a new process file exists."""
        if pick:
            return cls(runtime=runtime, pid="", model=model)
        pid = runtime.find(resume=resume, continue_last=continue_last, all_folders=all_folders)
        if pid is None:
            if first is not None:
                attach_in(runtime, runtime.scopes.cwd, first)
            pid = runtime.new_process(recipe, model=model).id
            model = None  # already resolved into the new process
        else:
            runtime.check_chat(runtime.store.load(pid))
        return cls(runtime=runtime, pid=pid, model=model)

    def attach(self, process: Process, text: str) -> Attached:
        """``text`` with its ``@path`` files attached, as the model will get it (``Attached.message``);
        AttachmentRefused (a UsageError) when one is outside the workspace or a secret."""
        return attach_in(self.runtime, Path(process.workspace) if process.workspace else self.runtime.scopes.cwd, text)

    def send(self, process: Process, text: str) -> None:
        """Put ``text`` in the inbox; the drive that follows saves it with the turn it opens."""
        self.runtime.send(process, text, save=False)

    async def drive(self, process: Process) -> None:
        """Drive ``process`` (held locked by the caller) and its workers until it waits."""
        from vance_cli.runtime.scheduler import Scheduler

        try:
            await Scheduler(self.runtime).run_loaded(process, root_model=self.model)
        finally:
            if self.model is not None and self._taken_in(process):
                self.model = None

    async def compact(self, process: Process) -> bool:
        """``/compact``: summarise the older turns now (False: nothing to summarise)."""
        return await self.runtime.compact(process)

    async def turn(self, process: Process, text: str | None) -> None:
        """Send ``text`` (None: only continue an open turn) and drive until the process waits."""
        if text is not None:
            self.send(process, text)
        await self.drive(process)

    def _taken_in(self, process: Process) -> bool:
        """The process runs on the switched-to model now (the drive wrote it into the process)."""
        if process.model == self.model:
            return True
        try:
            return process.model == self.runtime.settings.resolve_model(self.model)
        except VanceError:  # an alias that does not resolve: the drive failed on it, nothing was taken in
            return False


def attach_in(runtime: Runtime, workspace: Path, text: str) -> Attached:
    """``text`` with its ``@path`` files of ``workspace`` attached (tools/attach.py)."""
    from vance_cli.tools.attach import attach_files
    from vance_cli.tools.base import ToolContext

    return attach_files(text, ToolContext(workspace=workspace, settings=runtime.settings))
