"""What the screens show of a process: its status line (``StatusInfo``) and the question it waits on.

``status_info`` is the one place a process becomes a status line; the chat's controller and every
run source build theirs with it. Widgets get the plain value and never hold the process.
"""

from __future__ import annotations

from dataclasses import dataclass

from vance_cli.store.process import Process
from vance_cli.store.transcript import entries


@dataclass(frozen=True)
class StatusInfo:
    """What the status bar shows; a plain value so widgets never hold the process."""

    process_id: str = ""
    recipe: str = ""
    model: str = ""
    status: str = ""
    calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    running_since: float | None = None
    folder: str = ""  # the folder the process works in (its workspace), ~ for the home folder


def folder_label(workspace: str | None) -> str:
    """A folder as the screens show it: ~ for the home folder."""
    if not workspace:
        return ""
    from pathlib import Path

    home = str(Path.home())
    if workspace == home or workspace.startswith(home.rstrip("/") + "/"):
        return "~" + workspace[len(home.rstrip("/")):]
    return workspace


def status_info(process: Process, *, model: str | None = None, running_since: float | None = None) -> StatusInfo:
    """The status line of ``process``; ``model``: the one the next turn uses, when it is not the process's."""
    u = process.usage
    return StatusInfo(
        process_id=process.id,
        recipe=process.recipe_name or "",
        model=model or process.model or "",
        status=process.status.value,
        calls=u.calls,
        tokens=u.prompt_tokens + u.completion_tokens,
        cost=u.cost,
        running_since=running_since,
        folder=folder_label(process.workspace),
    )


def pending_question(process: Process) -> str | None:
    """The question a BLOCKED run waits on (benjyState.pendingQuestion; a chat's last message)."""
    if process.status.value != "BLOCKED":
        return None
    if any(item.kind == "user" for item in process.inbox):
        return None  # answered: the answer waits in the inbox for the run to take it in
    from vance_cli.engines import pending_question as engine_question

    question = engine_question(process)
    if question is not None:
        return question
    delivered = [e.text for e in entries(process) if e.kind == "message"]
    return delivered[-1] if delivered else None
