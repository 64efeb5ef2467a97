"""The line-mode chat (`vance chat -p` and --plain): prints the events, reads lines, maps signals.

The send-and-drive itself is runtime/session.py's ChatSession, shared with the full-screen app.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass

from vance_cli.cli.common import model_factory
from vance_cli.config.context import load_context
from vance_cli.engines.base import turn_open
from vance_cli.errors import ModelError, VanceError
from vance_cli.output.printers import HeadlessPrinter, JsonLinesPrinter
from vance_cli.runtime.interrupt import stop_on_signals
from vance_cli.runtime.runner import Runtime
from vance_cli.runtime.session import ChatSession
from vance_cli.store.process import Process
from vance_cli.terminal import err
from vance_cli.text import check_utf8_input


@dataclass
class LineChat:
    chat: ChatSession
    json_out: bool
    quiet: bool = False

    @classmethod
    def open(
        cls,
        *,
        recipe: str,
        model: str | None,
        resume: str | None,
        continue_last: bool,
        all_folders: bool = False,
        json_out: bool,
        quiet: bool,
        printer: bool = True,
        allow: list[str] | tuple[str, ...] = (),
        yes: bool = False,
        pick: bool = False,
        first: str | None = None,
    ) -> LineChat:
        """``printer=False``: no headless printer on the event stream (the full-screen app paints it).

        ``allow`` / ``yes``: tool calls allowed without asking (``--allow``, ``--yes``); the rest ask
        the person where one can answer (the app, a terminal) and wait where none can (``-p``).
        ``first``: the `-p` message (an ``@path`` it cannot attach fails before a process exists)."""
        from vance_cli.runtime.approvals import ApprovalGate

        scopes, settings = load_context()
        runtime = Runtime(scopes, settings, model_factory=model_factory)
        runtime.approvals = ApprovalGate(scopes, settings, allow=allow, yes=yes, bus=runtime.bus)
        chat = ChatSession.open(runtime, recipe=recipe, model=model, resume=resume, continue_last=continue_last,
                                all_folders=all_folders, pick=pick, first=first)
        if printer:
            runtime.bus.subscribe(JsonLinesPrinter() if json_out else HeadlessPrinter(verbose=not quiet, root=chat.pid))
        return cls(chat=chat, json_out=json_out, quiet=quiet)

    @property
    def runtime(self) -> Runtime:
        return self.chat.runtime

    def one_turn(self, text: str) -> bool:
        """One headless turn; True when it stopped on a tool call nobody approved (exit 10)."""
        from vance_cli.engines import awaiting_approval

        with self.runtime.session(self.chat.pid) as process:
            self.chat.send(process, self._attached(process, text))
            asyncio.run(self._drive_and_close(process))
            if not self.json_out and not self.quiet:
                err(f"[{process.id} {process.status.value}]")
            return awaiting_approval(process) is not None

    def _attached(self, process: Process, text: str) -> str:
        """What the model gets for ``text``: its ``@path`` files attached (said on stderr)."""
        attached = self.chat.attach(process, text)
        if attached.summary() and not self.quiet:
            err(attached.summary())
        return attached.message

    async def _drive_and_close(self, process: Process) -> None:
        try:
            await self._drive(process)
        finally:
            await self.runtime.aclose()

    async def _drive(self, process: Process) -> None:
        """One drive: SIGTERM/SIGHUP stop it as Ctrl+C does (saved, SUSPENDED); a failed model
        call says which process is kept and how to resume it."""
        try:
            await stop_on_signals(self.chat.drive(process))
        except ModelError as exc:
            exc.add_note(
                f"the process {process.id} is saved ({process.status.value}); resume it with: vance chat --resume {process.id}"
            )
            raise

    def repl(self) -> None:
        # A line that is not UTF-8 is refused (below) instead of ending the session with a decode error.
        reconfigure = getattr(sys.stdin, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
        with self.runtime.session(self.chat.pid) as process:
            asyncio.run(self._repl(process))
            err(f"bye · resume with: vance chat --resume {process.id}")

    async def _repl(self, process: Process) -> None:
        self.runtime.check_runnable(process)  # an unknown engine says so before the banner
        # --model applies from the next turn on: show the model that turn will use
        model = self.runtime.settings.resolve_model(self.chat.model) if self.chat.model else process.model
        err(f"vance chat · process {process.id} · model {model} · Ctrl+D to quit")
        if sys.stdin.isatty() and hasattr(self.runtime.approvals, "approver"):
            from vance_cli.cli.approve_line import ask_on_the_terminal

            self.runtime.approvals.approver = ask_on_the_terminal  # a person is there to answer
        try:
            if process.inbox or turn_open(process):
                await self._drive(process)
            while True:
                line = await asyncio.to_thread(_read_line)
                if line is None or line.strip() in ("/quit", "/exit"):
                    break
                if not line.strip():
                    continue
                if line.strip().split(" ")[0] == "/permissions":
                    from vance_cli.runtime.approvals import permissions_command

                    err(permissions_command(self.runtime.approvals, line.strip()[len("/permissions"):]))
                    continue
                if line.strip() == "/retry":
                    if turn_open(process):
                        await self._drive(process)
                    else:
                        err("nothing to retry: the last turn finished")
                    continue
                if line.strip() == "/compact":
                    done = await self.chat.compact(process)
                    err("compacted: the older turns are summarised" if done else "nothing to compact")
                    continue
                problem = check_utf8_input(line, "that line")
                if problem:
                    err(f"{problem}; it was not sent")
                    continue
                try:
                    message = self._attached(process, line.rstrip("\n"))
                except VanceError as exc:
                    err(exc.render())
                    continue
                self.chat.send(process, message)
                await self._drive(process)
        finally:
            await self.runtime.aclose()


def check_pickable(*, all_folders: bool, headless: str | None) -> None:
    """`vance chat --resume` without an id: fine when there is a chat to pick and a screen to pick
    it on; else a UsageError that says why and, without a screen (``headless``: why not), lists the
    recent chats' ids to pass."""
    from vance_cli.errors import UsageError
    from vance_cli.output.chats import chat_lines, chat_rows

    scopes, settings = load_context()
    chats = Runtime(scopes, settings).chats(all_folders=all_folders)
    where = "any folder" if all_folders else f"this folder ({scopes.cwd})"
    if not chats:
        raise UsageError(f"there is no chat in {where} to resume",
                         hint="start one with `vance chat`" + ("" if all_folders else "; `vance chat --resume --all` lists every folder's chats"))
    if headless:
        shown = chats[:10]
        more = f"\n    ... and {len(chats) - len(shown)} older (vance ps lists them all)" if len(chats) > len(shown) else ""
        raise UsageError(
            f"--resume without an id picks a chat on the full screen, and {headless}; the recent chats of {where}:\n    "
            + "\n    ".join(chat_lines(chat_rows(shown))) + more,
            hint=f"pass an id (or its first characters): vance chat --resume {shown[0].id}",
        )


def _read_line() -> str | None:
    """One line of input; None at end of input (Ctrl+D)."""
    try:
        if sys.stdin.isatty():
            return input("you> ")
        from vance_cli.cli.common import read_stdin_line

        return read_stdin_line()
    except EOFError:
        return None
