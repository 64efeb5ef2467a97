"""A run's pending question with an answer box; Enter sends the answer."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Markdown

from vance_cli.tui.messages import AnswerSubmitted
from vance_cli.tui.widgets import clean, tcss


class QuestionBox(Vertical):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "the run asks"
        self.question: str | None = None

    def compose(self) -> ComposeResult:
        yield Markdown("", classes="question-text")
        yield Input(placeholder="your answer (Enter sends)", classes="answer")

    def on_mount(self) -> None:
        self.display = False

    def ask(self, question: str | None) -> None:
        if question is not None:
            question = clean(question)
        if question == self.question:
            return
        self.question = question
        self.display = question is not None
        if question is not None:
            self.query_one(".question-text", Markdown).update(question)
            self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text:
            event.input.value = ""
            self.post_message(AnswerSubmitted(text))
