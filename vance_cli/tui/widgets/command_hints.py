"""What Tab would complete, shown above the prompt: the slash commands that match what is typed,
or the workspace files an ``@path`` being typed may name."""

from __future__ import annotations

from textual.widgets import Static

from vance_cli.tools.attach import mention
from vance_cli.tui import commands
from vance_cli.tui.widgets import tcss


class CommandHints(Static):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.matches: list[commands.Command] = []
        self.paths: list[str] = []

    def on_mount(self) -> None:
        self.display = False

    def show_for(self, text: str) -> None:
        self.paths = []
        self.matches = commands.completions(text)
        self.display = bool(self.matches)
        self.update("\n".join(f"/{c.name}{' ' + c.arg if c.arg else ''}  {c.help}" for c in self.matches))

    def show_paths(self, word: str, paths: list[str]) -> None:
        """The files ``@word`` may name, best first (Tab takes what they share, else the first)."""
        self.matches = []
        self.paths = paths
        self.display = True
        if not paths:
            self.update(f"no file of the workspace matches @{word}")
            return
        self.update("\n".join(mention(path) for path in paths))
