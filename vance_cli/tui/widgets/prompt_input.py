"""The multi-line prompt: Enter sends, Ctrl+J / Alt+Enter breaks the line, ↑/↓ walk the history,
Tab completes a slash command, Ctrl+D on an empty prompt quits."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import TextArea

from vance_cli.tui import commands
from vance_cli.tui.history import InputHistory
from vance_cli.tui.messages import QuitRequested, Submitted
from vance_cli.tui.splash import PLACEHOLDER
from vance_cli.tui.widgets import tcss


class PromptInput(TextArea):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = [
        Binding("enter", "submit", "Send", priority=True),
        Binding("ctrl+j,alt+enter,shift+enter", "newline", "New line", show=False, priority=True),
        Binding("ctrl+d", "eof", "Quit on empty", show=False, priority=True),
        Binding("tab", "complete", "Complete", show=False, priority=True),
    ]

    def __init__(self, history: InputHistory | None = None, *, id: str | None = None) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder=PLACEHOLDER,  # the splash draws it too, before Textual loads
        )
        self.input_history = history or InputHistory(None)

    def action_submit(self) -> None:
        text = self.text
        if text.endswith("\\"):  # the shell habit: a trailing backslash continues the line
            self.load_text(text[:-1] + "\n")
            self.move_cursor(self.document.end)
            return
        self.input_history.add(text)
        self.load_text("")
        self.post_message(Submitted(text.strip("\n")))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_eof(self) -> None:
        if not self.text:
            self.post_message(QuitRequested())
        else:
            self.action_delete_right()

    def action_complete(self) -> None:
        completed = commands.complete(self.text)
        if completed != self.text:
            self.load_text(completed)
            self.move_cursor(self.document.end)

    # ↑ on the first line and ↓ on the last walk the history; inside a multi-line text they move.
    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0:
            value = self.input_history.previous(self.text)
            if value is not None:
                self._show_entry(value)
                return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == self.document.line_count - 1:
            value = self.input_history.next()
            if value is not None:
                self._show_entry(value)
                return
        super().action_cursor_down(select)

    def _show_entry(self, value: str) -> None:
        self.load_text(value)
        self.move_cursor(self.document.end)
