"""The multi-line prompt: Enter sends, Ctrl+J / Alt+Enter breaks the line, ↑/↓ walk the history,
Ctrl+R searches it, Tab completes a slash command or the ``@path`` being typed (a file of the
workspace, from ``path_source``: the screen's listing), Ctrl+D on an empty prompt quits.

Ctrl+R is a shell's reverse incremental search: what is typed next is the query, the prompt
shows the newest entry that holds it (the match selected, the query in the prompt's border),
Ctrl+R again an older one; Enter takes the entry into the prompt (to edit or send), Esc or Ctrl+G
puts back what was there before; any other key takes the entry and then acts as usual.

Its keys are handled in the order they were typed, by the prompt itself (not by priority
bindings, which the app runs as a key arrives, before the keys ahead of it reach the prompt:
``hello⏎`` in one write sent an empty prompt and left "hello" in the box). An Enter that a
burst key follows (a paste without brackets: see ``tui/keys.py``) is a new line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.timer import Timer
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from vance_cli.tools.attach import at_word, complete_word, mention, path_matches
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
    "ctrl+r": "search",
}


@dataclass
class HistorySearch:
    """A running Ctrl+R search: what the prompt held before, the query, the entry shown."""

    draft: str
    query: str = ""
    index: int | None = None  # the history entry shown (None: none yet)
    failed: bool = False  # the last step found no (older) entry holding the query

    @property
    def title(self) -> str:
        what = "no match for" if self.failed else "history search"
        return f"{what}: “{self.query}” · Ctrl+R older · Enter take · Esc cancel"


class PromptInput(TextArea):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = [  # for the key lists; _on_key acts on these keys before a binding would
        Binding("enter", "submit", "Send"),
        Binding("ctrl+j,alt+enter,shift+enter", "newline", "New line", show=False),
        Binding("ctrl+d", "eof", "Quit on empty", show=False),
        Binding("tab", "complete", "Complete", show=False),
        Binding("ctrl+r", "search", "Search history", show=False),
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
        self.search: HistorySearch | None = None  # a Ctrl+R search in progress
        self.path_source: Callable[[], list[str]] | None = None  # the workspace's paths, for @ completion

    async def _on_key(self, event: events.Key) -> None:
        try:
            await self._take_key(event)
        finally:
            keys = getattr(self.app, "keys_in_flight", None)
            if keys is not None:
                keys.handled(event.time)  # the screen's work may go on (tui/keys.py)

    async def _take_key(self, event: events.Key) -> None:
        if self._pending_enter is not None:
            self._pending_enter.stop()
            self._pending_enter = None
            if is_burst(event) and (event.is_printable or event.key in ("enter", "ctrl+j")):
                self.insert("\n")  # the burst goes on: the Enter was a line of a paste
            else:
                self.action_submit()
        if self.search is not None and self._search_key(event):
            event.stop()
            event.prevent_default()
            return
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

    # --- Ctrl+R: the reverse incremental search of the history ---------------------------------

    def action_search(self) -> None:
        if self.search is None:
            self.search = HistorySearch(draft=self.text)
            self._show_search()
        else:
            self._search_step(older=True)

    def _search_key(self, event: events.Key) -> bool:
        """A key while searching: True when the search took it."""
        search = self.search
        assert search is not None
        if event.key == "ctrl+r":
            self._search_step(older=True)
        elif event.key in ("escape", "ctrl+g"):
            self._end_search(self.search.draft)
        elif event.key == "enter":
            self._end_search(self.text)
        elif event.key == "backspace":
            search.query = search.query[:-1]
            search.index = None
            self._search_step(older=False)
        elif event.is_printable and event.character:
            search.query += event.character
            self._search_step(older=False)
        else:  # any other key takes the entry shown, then does what it does (from the match)
            self._end_search(self.text, at_end=False)
            return False
        return True

    def _search_step(self, *, older: bool) -> None:
        """Find the query: in an older entry than the one shown (Ctrl+R), or from the one shown on."""
        search = self.search
        assert search is not None
        before = search.index if older else (None if search.index is None else search.index + 1)
        found = self.input_history.search(search.query, before)
        search.failed = found is None
        if found is not None:
            search.index = found
        self._show_search()

    def _show_search(self) -> None:
        search = self.search
        assert search is not None
        self.border_title = Content(search.title)
        self.set_class(search.failed, "-search-failed")
        if search.index is None:
            return
        entry = self.input_history.entries[search.index]
        if self.text != entry:
            self.load_text(entry)
        query = search.query
        haystack = entry.lower() if query == query.lower() else entry
        at = haystack.find(query.lower() if query == query.lower() else query)
        if query and at >= 0:
            doc = self.document
            self.selection = Selection(doc.get_location_from_index(at), doc.get_location_from_index(at + len(query)))
        else:
            self.move_cursor(self.document.end)

    def _end_search(self, text: str, *, at_end: bool = True) -> None:
        self.search = None
        self.border_title = None
        self.remove_class("-search-failed")
        self.input_history.reset()
        if self.text != text:
            self.load_text(text)
        self.move_cursor(self.document.end if at_end else self.selection.end)

    def action_newline(self) -> None:
        self.insert("\n")

    def action_eof(self) -> None:
        if not self.text:
            self.post_message(QuitRequested())
        else:
            self.action_delete_right()

    def _before_cursor(self) -> str:
        return self.document.get_text_range((0, 0), self.cursor_location)

    def at_word(self) -> str | None:
        """The ``@path`` fragment being typed before the cursor ("" right after the @), or None."""
        return at_word(self._before_cursor()) if self.path_source is not None else None

    def path_matches(self) -> list[str] | None:
        """The workspace paths the ``@`` word before the cursor may become (None: no such word)."""
        word = self.at_word()
        if word is None or self.path_source is None:
            return None
        return path_matches(word, self.path_source())

    def action_complete(self) -> None:
        word = self.at_word()
        if word is not None:
            self._complete_path(word)
            return
        completed = commands.complete(self.text)
        if completed != self.text:
            self.load_text(completed)
            self.move_cursor(self.document.end)

    def _complete_path(self, word: str) -> None:
        paths = self.path_source() if self.path_source is not None else []
        new = complete_word(word, path_matches(word, paths))
        if new is None:
            return
        start = self._before_cursor().rfind("@")
        whole_file = not new.endswith("/") and new in paths  # a file: the word is done, a space follows
        self.replace(mention(new) + (" " if whole_file else ""), self.document.get_location_from_index(start),
                     self.cursor_location)

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
