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


# Which fragments a narrow terminal keeps longest: the status always, then the process id, the
# model, the tokens... (issue 16: at 80 columns the tokens were cut, at 60 the status word).
PRIORITY = {name: rank for rank, name in enumerate(
    ["status", "extra", "process", "model", "tokens", "cost", "time", "folder", "recipe", "calls"])}
SEP = " · "


def fit(parts: list[tuple[int, str]], width: int | None) -> str:
    """Join ``parts`` (priority, text) in their order, leaving out the lowest-priority ones until
    the line fits ``width``; a status alone wider than that is cut with "…"."""
    parts = list(parts)
    line = SEP.join(text for _, text in parts)
    while width is not None and len(line) > width and len(parts) > 1:
        parts.remove(max(parts, key=lambda p: p[0]))
        line = SEP.join(text for _, text in parts)
    if width is not None and len(line) > width:
        line = line[: max(0, width - 1)] + "…"
    return line


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
        self.refresh(layout=False)

    def parts(self, now: float | None = None) -> list[tuple[int, str]]:
        """The bar's fragments in display order, each with its priority (0 is kept longest)."""
        i = self.info
        if i is None:
            return []
        parts = [(PRIORITY["process"], i.process_id or "-")]
        if i.recipe:
            parts.append((PRIORITY["recipe"], i.recipe))
        if i.model:
            parts.append((PRIORITY["model"], i.model))
        parts.append((PRIORITY["status"], STATUS_WORDS.get(i.status, i.status.lower() or "-")))
        if self.extra:  # next to the status ("stopping…")
            parts.append((PRIORITY["extra"], self.extra))
        parts.append((PRIORITY["calls"], f"{i.calls} calls"))
        parts.append((PRIORITY["tokens"], f"{_tokens(i.tokens)} tok"))
        if i.cost:
            parts.append((PRIORITY["cost"], f"${i.cost:.4f}"))
        if i.running_since is not None:
            parts.append((PRIORITY["time"], f"{int((now or time.time()) - i.running_since)}s"))
        if i.folder:  # the folder the tools work in (issue 16)
            parts.append((PRIORITY["folder"], f"in {i.folder}"))
        return [(rank, clean(text)) for rank, text in parts]  # ids, recipe and model names come from files

    def render_text(self, now: float | None = None, width: int | None = None) -> str:
        """The whole line, or what fits in ``width`` cells (``fit``)."""
        return fit(self.parts(now), width)

    def render(self):
        from rich.text import Text

        return Text(self.render_text(width=self.content_size.width or None), no_wrap=True, overflow="ellipsis")

    def _tick(self) -> None:
        if self.info is not None and self.info.running_since is not None:
            self.refresh()
