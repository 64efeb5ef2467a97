"""The multi-line prompt: Enter sends, Ctrl+J / Alt+Enter breaks the line, ↑/↓ walk the history,
Tab completes a slash command, Ctrl+D on an empty prompt quits.

Its keys are handled in the order they were typed, by the prompt itself (not by priority
bindings, which the app runs as a key arrives, before the keys ahead of it reach the prompt:
``hello⏎`` in one write sent an empty prompt and left "hello" in the box). An Enter that a
burst key follows (a paste without brackets: see ``tui/keys.py``) is a new line.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import TextArea

from vance_cli.tui import commands
from vance_cli.tui.history import InputHistory
from vance_cli.tui.keys import BURST_GAP, is_burst
from vance_cli.tui.messages import QuitRequested, Submitted
from vance_cli.tui.splash import PLACEHOLDER
from vance_cli.tui.widgets import tcss

ENTER_WAIT = 3 * BURST_GAP  # how long an Enter inside a burst waits to see whether the burst goes on

# The prompt's own keys, handled in _on_key in typing order (shown by the bindings below).
KEY_ACTIONS = {
    "enter": "submit",
    "ctrl+j": "newline",
    "alt+enter": "newline",
    "shift+enter": "newline",
    "ctrl+d": "eof",
    "tab": "complete",
}


class PromptInput(TextArea):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = [  # for the key lists; _on_key acts on these keys before a binding would
        Binding("enter", "submit", "Send"),
        Binding("ctrl+j,alt+enter,shift+enter", "newline", "New line", show=False),
        Binding("ctrl+d", "eof", "Quit on empty", show=False),
        Binding("tab", "complete", "Complete", show=False),
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
        self._pending_enter: Timer | None = None  # an Enter in a burst, waiting for the next key

    async def _on_key(self, event: events.Key) -> None:
        if self._pending_enter is not None:
            self._pending_enter.stop()
            self._pending_enter = None
            if is_burst(event) and (event.is_printable or event.key in ("enter", "ctrl+j")):
                self.insert("\n")  # the burst goes on: the Enter was a line of a paste
            else:
                self.action_submit()
        action = KEY_ACTIONS.get(event.key)
        if action is None:
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
        if action == "submit" and is_burst(event):
            # it came with the keys before it; wait a moment for more (then it is a new line)
            self._pending_enter = self.set_timer(ENTER_WAIT, self._enter_waited)
            return
        getattr(self, f"action_{action}")()

    def _enter_waited(self) -> None:
        # Keys the app has taken in but not handed on yet are ahead of this check: it goes
        # through the app's queue, then through the prompt's, behind them.
        self.app.call_later(self.call_later, self._enter_ends_burst)

    def _enter_ends_burst(self) -> None:
        if self._pending_enter is not None:
            self._pending_enter = None
            self.action_submit()

    def action_submit(self) -> None:
        text = self.text
        if text.endswith("\\\\"):  # an escaped backslash: the message ends with one
            text = text[:-1]
        elif text.endswith("\\"):  # the shell habit: a trailing backslash continues the line
            self.load_text(text[:-1] + "\n")
            self.move_cursor(self.document.end)
            return
        self.input_history.add(self.text)
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
