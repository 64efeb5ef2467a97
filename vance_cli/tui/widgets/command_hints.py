"""The slash commands that match what is typed, shown above the prompt (Tab completes)."""

from __future__ import annotations

from textual.widgets import Static

from vance_cli.tui import commands
from vance_cli.tui.widgets import tcss


class CommandHints(Static):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.matches: list[commands.Command] = []

    def on_mount(self) -> None:
        self.display = False

    def show_for(self, text: str) -> None:
        self.matches = commands.completions(text)
        self.display = bool(self.matches)
        self.update("\n".join(f"/{c.name}{' ' + c.arg if c.arg else ''}  {c.help}" for c in self.matches))
