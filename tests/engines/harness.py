"""A small harness: a process on a real store, a scripted model, and the events it emitted."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers import respond  # noqa: F401  (the engine tests import it from here)
from vance_cli.config.recipes import Recipe
from vance_cli.engines import engine_class
from vance_cli.engines.base import EngineDeps
from vance_cli.events import Event, EventBus, MessageEvent
from vance_cli.llm.base import Capabilities
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import InboxItem, Process
from vance_cli.tools.base import ToolContext
from vance_cli.tools.registry import builtin_registry


def recipe(**over: Any) -> dict:
    base: dict[str, Any] = {
        "name": "t",
        "engine": "ford",
        "tools": {"allowed": ["respond", "file_read", "file_list"]},
        "systemPrompt": "SYSTEM",
        "validation": True,
        "maxValidationCorrections": 2,
    }
    base.update(over)
    return Recipe.model_validate(base).model_dump(mode="json")


def call(name: str, args: dict | str, id: str | None = None) -> dict:
    c: dict[str, Any] = {"name": name, "arguments": args}
    if id:
        c["id"] = id
    return c


@dataclass
class Run:
    process: Process
    model: ScriptedModel
    store: ProcessStore
    events: list[Event] = field(default_factory=list)

    @property
    def messages(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, MessageEvent)]

    def transcript(self) -> list[tuple]:
        """(role, content-or-calls) for every history entry: the whole turn, asserted whole."""
        out = []
        for m in self.process.history:
            if m.role == "assistant" and m.tool_calls:
                out.append(("assistant", [c.name for c in m.tool_calls]))
            elif m.role == "tool":
                out.append(("tool", m.name, m.content))
            else:
                out.append((m.role, m.content))
        return out

    def reloaded(self) -> Process:
        return self.store.load(self.process.id)


def run_engine(
    tmp_path: Path,
    replies: list,
    *,
    user: str | list[str] = "hi",
    recipe_snapshot: dict | None = None,
    engine: str = "ford",
    process: Process | None = None,
    store: ProcessStore | None = None,
    stream: bool = False,
    capabilities: Capabilities | None = None,
) -> Run:
    store = store or ProcessStore(tmp_path / "processes")
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    if process is None:
        snap = recipe_snapshot or recipe(engine=engine)
        process = Process(engine=snap["engine"], recipe=snap, recipe_name=snap["name"], workspace=str(workspace))
        for text in [user] if isinstance(user, str) else user:
            process.inbox.append(InboxItem(content=text))
        store.create(process)
    model = ScriptedModel(replies, capabilities=capabilities)
    bus = EventBus()
    events: list[Event] = []
    bus.subscribe(events.append)
    deps = EngineDeps(
        model=model,
        tools=builtin_registry(),
        bus=bus,
        persist=store.save,
        tool_context=ToolContext(workspace=workspace, process_id=process.id),
        stream=stream,
    )
    asyncio.run(engine_class(process.engine)(deps).run(process))
    return Run(process=process, model=model, store=store, events=events)
