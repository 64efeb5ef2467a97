"""The resume picker: this folder's chats, newest first, each with its status and first message.

Opened by `vance chat --resume` without an id (before any chat is open) and by ``/resume``
without one. Enter resumes the highlighted chat, Esc cancels (the screen returns None).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from vance_cli.output.chats import ChatRow
from vance_cli.tui.widgets import clean


class ResumeScreen(ModalScreen[str | None]):
    CSS_PATH = "resume_screen.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, rows: list[ChatRow], *, folder: str = "") -> None:
        super().__init__()
        self.rows = rows
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = clean(f"resume a chat{' in ' + self.folder if self.folder else ''}")
            yield OptionList(*[Option(self._prompt(r), id=r.id) for r in self.rows], id="chats")
            yield Static(Text.assemble(("↑/↓", "bold"), " choose · ", ("Enter", "bold"), " resume · ",
                                       ("Esc", "bold"), " cancel"), id="keys")

    @staticmethod
    def _prompt(row: ChatRow) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(row.id, style="bold")
        text.append(f"  {row.status:<9} ", style="italic" if row.status in ("DONE", "FAILED") else "")
        text.append(f"{row.when}  ", style="dim")
        text.append(clean(row.first))
        if row.current:
            text.append("  (this chat)", style="dim")
        return text

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def interrupt(self) -> None:
        """Ctrl+C on the picker: cancel, as Esc."""
        self.dismiss(None)
