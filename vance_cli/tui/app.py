"""The Vance app: the chat screen over a ChatController, or the run screen over a RunSource.

It paints first and imports the model's client (litellm) in a thread afterwards. Ctrl+C is the
app's binding (priority: it works wherever the focus is) and goes to the screen's ``interrupt``.
"""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from vance_cli.tui.controller import ChatController
from vance_cli.tui.history import InputHistory


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
    ) -> None:
        super().__init__()
        self.controller = controller
        self.run_source = run_source
        self.history = history
        self.preload = preload
        self.error_text: str | None = None

    def on_mount(self) -> None:
        if self.run_source is not None:
            from vance_cli.tui.screens.run_screen import RunScreen

            self.push_screen(RunScreen(self.run_source))
        elif self.controller is not None:
            from vance_cli.tui.screens.chat_screen import ChatScreen

            history = self.history
            if history is None:
                history = InputHistory.load(self.controller.runtime.scopes.state_dir / "tui" / "input-history.json")
            self.push_screen(ChatScreen(self.controller, history))
            if self.preload:
                self.call_after_refresh(self._preload)

    def _preload(self) -> None:
        self.run_worker(self._prepare_model, group="preload", exit_on_error=False)

    async def _prepare_model(self) -> None:
        try:
            await self.controller.prepare_model()
        except Exception:  # noqa: BLE001 - the first turn reports model problems properly
            pass

    def action_interrupt(self) -> None:
        interrupt = getattr(self.screen, "interrupt", None)
        if interrupt is not None:
            interrupt()
        else:
            self.exit()

    def watch_process(self, pid: str) -> None:
        """Show another process live (read from its files), on top of the chat."""
        from vance_cli.tui.run_source import ProcessFileSource
        from vance_cli.tui.screens.run_screen import RunScreen

        store = self.controller.runtime.store if self.controller is not None else self.run_source.store
        self.push_screen(RunScreen(ProcessFileSource(store, pid), closable=True))

    async def on_unmount(self) -> None:
        if self.controller is not None:
            await self.controller.runtime.aclose()
