"""A tool call as one compact line (name, short arguments, result size, duration) that expands."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Static

from vance_cli.text import shorten
from vance_cli.tui.widgets import clean, tcss


def _size(chars: int) -> str:
    return f"{chars} chars" if chars < 1000 else f"{chars / 1000:.1f}k chars"


class ToolLine(Static, can_focus=True):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = [Binding("enter,space", "toggle", "Expand")]

    def __init__(self, call_id: str, name: str, arguments: str) -> None:
        super().__init__(classes="tool-line -running", markup=False)
        self.call_id = call_id
        self.tool_name = clean(name)
        self.arguments = clean(arguments)
        self.ok: bool | None = None
        self.summary = ""
        self.result_size: int | None = None
        self.seconds: float | None = None
        self.expanded = False

    def on_mount(self) -> None:
        self.update(self.render_text())

    def finish(self, ok: bool, summary: str, size: int | None, seconds: float | None) -> None:
        self.ok, self.summary, self.result_size, self.seconds = ok, clean(summary), size, seconds
        self.remove_class("-running")
        self.add_class("-ok" if ok else "-failed")
        self.update(self.render_text())

    def render_text(self) -> str:
        mark = "⋯" if self.ok is None else ("✓" if self.ok else "✗")
        arrow = "▾" if self.expanded else "▸"
        parts = [f"{arrow} {mark} {self.tool_name} {shorten(self.arguments, 60, one_line=True)}"]
        if self.result_size is not None:
            parts.append(_size(self.result_size))
        if self.seconds is not None:
            parts.append(f"{self.seconds:.2f}s")
        line = " · ".join(parts)
        if not self.expanded:
            return line
        detail = [line, f"  arguments: {self.arguments}"]
        if self.summary:
            detail.append(f"  result: {self.summary}")
        return "\n".join(detail)

    def action_toggle(self) -> None:
        self.expanded = not self.expanded
        self.update(self.render_text())

    def on_click(self) -> None:
        self.action_toggle()
