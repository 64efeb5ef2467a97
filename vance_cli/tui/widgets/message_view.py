"""One message of the transcript: the engine's respond message as Markdown, the person's as typed
(its lines kept: Markdown would join them into one paragraph).

A long reply is Markdown in pieces (``MarkdownPieces``), parsed once each; a streamed reply
(``StreamingMessage``) is built the same way while it arrives and becomes the message in place.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from vance_cli.tui.widgets import clean, tcss
from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces


class MessageView(Vertical, can_focus=True):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = [Binding("enter", "copy", "Copy message")]  # not a letter: letters go to the prompt

    def __init__(self, text: str, role: str = "assistant", *, label: str | None = None) -> None:
        super().__init__(classes=f"message -{role}")
        self.text = clean(text)
        self.role = role
        self.label = label or ("you" if role == "user" else "vance")

    def compose(self) -> ComposeResult:
        yield Static(f"{self.label}  [@click=copy]⧉ copy[/]", classes="message-header", markup=True)
        if self.role == "user":
            yield Static(self.text, classes="message-body", markup=False)
        else:
            yield MarkdownPieces(self.text, classes="message-body")

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.text)
        self.app.notify("message copied", timeout=2)
