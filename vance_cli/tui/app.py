"""The Vance app: the chat screen over a ChatController, or the run screen over a RunSource.

It paints first and imports the model's client (litellm) in a thread afterwards. Ctrl+C is the
app's binding (priority: it works wherever the focus is) and goes to the screen's ``interrupt``.

What exists once the app is up and the model's client is imported (modules, classes, the
screen) lives as long as the app: it is frozen out of the garbage collector's full collections
(``gc.freeze``; given back on exit), which otherwise walk it again every second or two while a
reply streams and hold the keys meanwhile (issue 16, bench/bench_stream.py).
"""

from __future__ import annotations

import gc
import sys
import time

from textual import events
from textual.app import App
from textual.binding import Binding

from vance_cli.tui import collector
from vance_cli.tui.controller import ChatController
from vance_cli.tui.history import InputHistory
from vance_cli.tui.keys import KeysInFlight

HANGUP_CHECK_SECONDS = 1.0
IDLE_SECONDS = 2.0  # nothing pressed for this long: a full settle of the collector may run
HANGUP_EXIT = 129  # as for SIGHUP


class VanceApp(App):
    TITLE = "vance"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Stop / quit", priority=True, show=False),
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),
    ]

    def __init__(
        self,
        *,
        controller: ChatController | None = None,
        run_source=None,
        history: InputHistory | None = None,
        preload: bool = True,
        close_when_finished: bool = False,
        pick: bool = False,
        pick_all_folders: bool = False,
    ) -> None:
        """``pick``: open on the resume picker, with no chat open yet (`vance chat --resume`)."""
        super().__init__()
        self.pick = pick
        self.pick_all_folders = pick_all_folders
        self.controller = controller
        self.run_source = run_source
        self.history = history
        self.preload = preload
        self.close_when_finished = close_when_finished
        self.error_text: str | None = None
        self._early_keys: list[events.Key] | None = []  # None once the first screen takes keys
        self._last_input = time.monotonic()
        self._replaying: list[events.Key] = []
        self.keys_in_flight = KeysInFlight()  # the screen's heavy work waits for them (tui/keys.py)
        self.hung_up = False  # the terminal went away (see _check_terminal)
        self.stop_signal: int | None = None  # SIGTERM or SIGHUP stopped the app

    def get_driver_class(self):
        from vance_cli.tui.driver import gone_safe
        from vance_cli.tui.keys import register_alt_enter

        register_alt_enter()
        return gone_safe(super().get_driver_class())

    def get_default_screen(self):
        """The chat (or run) screen is the first screen: keys typed while the app starts (during
        the splash) are queued until it is mounted, and reach its prompt instead of a blank screen."""
        if self.run_source is not None:
            from vance_cli.tui.screens.run_screen import RunScreen

            return RunScreen(self.run_source, close_when_finished=self.close_when_finished)
        if self.controller is not None:
            from vance_cli.tui.screens.chat_screen import ChatScreen

            history = self.history
            if history is None:
                history = InputHistory.load(self.controller.runtime.scopes.state_dir / "tui" / "input-history.json")
            return ChatScreen(self.controller, history, pick=self.pick, pick_all_folders=self.pick_all_folders)
        return super().get_default_screen()

    def on_mount(self) -> None:
        collector.lighter_strips()  # painted lines freed as they go (tui/collector.py)
        self._count_keys_sent()
        gc.freeze()  # the app's long-lived objects (see the module's docstring)
        if self.controller is not None and hasattr(self.controller.runtime.approvals, "approver"):
            self.controller.runtime.approvals.approver = self.ask_approval  # the dialog answers the gate
        if self.controller is not None and self.run_source is None and self.preload:
            self.call_after_refresh(self._preload)
        if not self.is_headless:
            self.set_interval(HANGUP_CHECK_SECONDS, self._check_terminal)
            self._catch_stop_signals()
        self.set_interval(IDLE_SECONDS, self._settle_when_idle)

    def _count_keys_sent(self) -> None:
        """Every key the driver sends is counted in flight as it is sent (its input thread), not
        when the app's loop takes it in: the loop may be about to start a layout."""
        driver = self._driver
        if driver is None:
            return
        send = driver.send_message

        def send_counted(message) -> None:
            if isinstance(message, events.Key):
                self.keys_in_flight.sent(message.time)
            send(message)

        driver.send_message = send_counted  # type: ignore[method-assign]

    def _settle_when_idle(self) -> None:
        """The full settle of the garbage collector (tui/collector.py), when one is due and the
        person has pressed nothing for a while: it walks everything (the model's client too:
        ~0.3-1 s), so never as a reply starts. And what the last reply left (``leftovers``)."""
        idle = time.monotonic() - self._last_input >= IDLE_SECONDS
        if idle and collector.full_settle_due():
            collector.settle(full=True)
        collector.leftovers(idle=idle)  # what the last reply left (after a full settle: nothing)

    def _catch_stop_signals(self) -> None:
        """SIGTERM and SIGHUP stop the app as `vance chat --plain` stops: the running turn is
        cancelled at an await (the runtime saves it SUSPENDED), the terminal is given back, and the
        command exits 128+N. Without this the default action killed the process mid-screen: raw
        mode, alternate screen and mouse tracking were left on, and the file said RUNNING."""
        import asyncio

        from vance_cli.runtime.interrupt import STOP_SIGNALS

        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            try:
                loop.add_signal_handler(signum, lambda n=signum: self.call_later(self._stop_on_signal, n))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
                pass

    async def _stop_on_signal(self, signum: int) -> None:
        if self.stop_signal is not None:
            return
        self.stop_signal = signum
        workers = list(self.workers)
        for worker in workers:
            worker.cancel()
        for worker in workers:
            try:
                await worker.wait()
            except Exception:  # noqa: BLE001 - cancelled or failed: either way it has stopped
                pass
        self.exit(return_code=128 + signum)

    def _check_terminal(self) -> None:
        """Quit when the terminal is gone without a SIGHUP (a closed pty whose session we do not
        lead): reads then return nothing at once, and Textual's input thread would spin on them,
        with the process lock held, forever. The state is on disk; `--continue` comes back to it."""
        import termios

        gone = bool(getattr(self._driver, "terminal_gone", False))
        if not gone:
            try:
                termios.tcgetattr(sys.__stdin__.fileno())
            except (termios.error, OSError, ValueError, AttributeError):
                gone = True
        if gone and not self.hung_up:
            self.hung_up = True
            self.exit(return_code=HANGUP_EXIT)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseEvent, events.Paste)):  # a drag's moves too
            self._last_input = time.monotonic()  # the person is at it (``_settle_when_idle``)
        # Keys typed while the app starts (the person sees the splash's prompt) wait until the
        # first screen has focused its input, then arrive there in order (see take_keys).
        if self._early_keys is not None and isinstance(event, events.Key) and not event.is_forwarded:
            if not any(event is r for r in self._replaying):
                self._early_keys.append(event)
                self.keys_in_flight.handled(event.time)  # kept for the screen: nothing to wait for
                return
            self._replaying = [r for r in self._replaying if r is not event]
        arrived = isinstance(event, events.Key) and not event.is_forwarded  # from the driver (forwarding marks it)
        await super().on_event(event)
        if arrived:
            # Taken by a binding, or handed to its widget: handled once that widget has taken it
            # (a key the prompt never sees: a modal's, the transcript's, Ctrl+C; the prompt marks
            # its own keys sooner). Else the screen's work waited the whole 50 ms (review 16v).
            try:
                target = self.focused or self.screen
            except Exception:  # noqa: BLE001 - no screen any more (the app is closing)
                target = None
            if target is None or not target.call_later(self.keys_in_flight.handled, event.time):
                self.keys_in_flight.handled(event.time)

    def take_keys(self) -> None:
        """The first screen is ready for keys (it calls this once its input has the focus)."""
        if self._early_keys is not None:
            self.run_worker(self._replay_keys, group="early-keys", exit_on_error=False)

    async def _replay_keys(self) -> None:
        # One key at a time, each handled before the next, as typed (a burst stays a burst).
        while self._early_keys:
            key = self._early_keys.pop(0)
            replay = type(key)(key.key, key.character)
            replay.time = key.time
            self._replaying.append(replay)
            self.post_message(replay)
            await _handled(self)  # the app forwarded it (or ran its binding) ...
            if self.focused is not None:
                await _handled(self.focused)  # ... and the widget took it
        self._early_keys = None  # from here on keys go straight through

    def _preload(self) -> None:
        self.run_worker(self._prepare_model, group="preload", exit_on_error=False)

    async def _prepare_model(self) -> None:
        try:
            await self.controller.prepare_model()
        except Exception:  # noqa: BLE001 - the first turn reports model problems properly
            pass
        gc.freeze()  # litellm's modules too (several hundred thousand objects)

    async def ask_approval(self, request):
        """The person's answer to a tool call that needs approval (tui/screens/approval_screen.py)."""
        import asyncio

        from vance_cli.tui.screens.approval_screen import ApprovalScreen

        answer: asyncio.Future = asyncio.get_running_loop().create_future()
        screen = ApprovalScreen(request)
        self.push_screen(screen, callback=lambda d: answer.done() or answer.set_result(d))
        try:
            decision = await answer
        except asyncio.CancelledError:  # the turn was stopped while the dialog was open
            if screen.is_attached:
                screen.dismiss(None)
            raise
        if decision.verdict not in ("allow", "deny"):
            self.notify("not run: it waits for your approval; Enter on an empty prompt (or /retry) asks again",
                        severity="warning", timeout=8)
        return decision

    def action_interrupt(self) -> None:
        interrupt = getattr(self.screen, "interrupt", None)
        if interrupt is not None:
            interrupt()
        else:
            self.exit()

    def watch_process(self, pid: str) -> None:
        """Show another process live (read from its files), on top of the chat."""
        from vance_cli.tui.screens.run_screen import RunScreen
        from vance_cli.tui.sources.files import ProcessFileSource

        store = self.controller.runtime.store if self.controller is not None else self.run_source.store
        self.push_screen(RunScreen(ProcessFileSource(store, pid), closable=True))

    async def on_unmount(self) -> None:
        collector.thaw_all()
        if self.controller is not None:
            await self.controller.runtime.aclose()


async def _handled(node) -> None:
    """Wait until ``node`` has handled the messages queued for it so far."""
    import asyncio

    done = asyncio.Event()
    if node.call_later(done.set):
        await done.wait()
