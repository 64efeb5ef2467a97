"""One line at the bottom: process id, recipe, model, status, calls, tokens, cost, turn time, folder."""

from __future__ import annotations

import time

from textual.widgets import Static

from vance_cli.tui.widgets import clean, tcss

# What a person reads for each status; BLOCKED means the engine waits for them.
STATUS_WORDS = {
    "BLOCKED": "waiting for you",
    "RUNNING": "working",
    "READY": "ready",
    "IDLE": "waiting on a worker",
    "DONE": "done",
    "FAILED": "failed",
    "SUSPENDED": "stopped",
}


def _tokens(n: int) -> str:
    return str(n) if n < 1000 else f"{n / 1000:.1f}k"


class StatusBar(Static):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.info = None
        self.extra = ""

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    def show(self, info, extra: str = "") -> None:
        """``info`` is a ``tui.status.StatusInfo`` (or any object with the same fields)."""
        self.info = info
        self.extra = extra
        self.set_class(info.status == "BLOCKED", "-waiting")
        self.set_class(info.status in ("FAILED",), "-failed")
        self.set_class(info.running_since is not None, "-running")
        self.update(self.render_text())

    def render_text(self, now: float | None = None) -> str:
        i = self.info
        if i is None:
            return ""
        parts = [i.process_id or "-"]
        if i.recipe:
            parts.append(i.recipe)
        if i.model:
            parts.append(i.model)
        parts.append(STATUS_WORDS.get(i.status, i.status.lower() or "-"))
        if self.extra:  # next to the status: the line is cut at the terminal's width
            parts.append(self.extra)
        parts.append(f"{i.calls} calls")
        parts.append(f"{_tokens(i.tokens)} tok")
        if i.cost:
            parts.append(f"${i.cost:.4f}")
        if i.running_since is not None:
            parts.append(f"{int((now or time.time()) - i.running_since)}s")
        if i.folder:  # the folder the tools work in (issue 16)
            parts.append(f"in {i.folder}")
        return clean(" · ".join(parts))  # ids, recipe and model names come from files

    def _tick(self) -> None:
        if self.info is not None and self.info.running_since is not None:
            self.update(self.render_text())
