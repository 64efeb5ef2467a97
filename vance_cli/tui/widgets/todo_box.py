"""The pinned todo box: Benjy's (or a worker's) todo projection, live from TodosUpdated.

Collapsible; the title counts done and open items. Several processes' todos (the chat's workers)
show one after another, each under its process id.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Collapsible, Static

from vance_cli.tui.widgets import clean, tcss

MARKS = {"done": "✓", "in_progress": "▶", "failed": "✗", "open": "○"}


class TodoBox(Collapsible):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, collapsed: bool = False, id: str | None = None) -> None:
        self._body = Static("", classes="todo-body", markup=False)
        super().__init__(self._body, title="todos", collapsed=collapsed, id=id)
        self.todos: dict[str, list[dict[str, Any]]] = {}

    def on_mount(self) -> None:
        self.display = bool(self.todos)

    def set_todos(self, process_id: str, todos: list[dict[str, Any]]) -> None:
        if todos:
            self.todos[process_id] = [{**t, "text": clean(str(t.get("text", "")))} for t in todos]
        else:
            self.todos.pop(process_id, None)
        self.display = bool(self.todos)
        self._body.update(self.render_body())
        self.title = self.render_title()

    def counts(self) -> tuple[int, int]:
        items = [t for todos in self.todos.values() for t in todos]
        done = sum(1 for t in items if t.get("status") == "done")
        return done, len(items) - done

    def render_title(self) -> str:
        done, open_ = self.counts()
        return f"todos · {done} done · {open_} open"

    def render_body(self) -> str:
        lines: list[str] = []
        many = len(self.todos) > 1
        for pid, todos in self.todos.items():
            if many:
                lines.append(pid)
            for t in todos:
                mark = MARKS.get(str(t.get("status", "open")), "○")
                lines.append(f"{'  ' if many else ''}{mark} {t.get('text', '')}")
        return "\n".join(lines)
