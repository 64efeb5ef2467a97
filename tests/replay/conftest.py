"""The replay suite: real provider response bodies (tests/replay/data, sources in SOURCES.md),
served over loopback by tests/fakeserver.py, through both transports, into the engines.

``recorded(name)`` loads a recording; ``serve(server, name, *indexes)`` queues its responses (status
and body exactly as recorded); ``make_model`` builds the transport under test; ``chat`` runs one
Ford turn on a real process store with a given model and returns what happened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from vance_cli.config.recipes import Recipe
from vance_cli.engines import engine_class
from vance_cli.engines.ford import EngineDeps
from vance_cli.events import Event, EventBus, JournalEvent, MessageEvent
from vance_cli.llm.base import ChatModel
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import InboxItem, Process
from vance_cli.tools.base import ToolContext, builtin_registry

DATA = Path(__file__).with_name("data")
FAST = {"attempts": 2, "base_delay": 0.0, "max_delay": 0.0, "max_total": 30.0}


def recorded(name: str) -> dict[str, Any]:
    """A recording: {"source": ..., "note": ..., "interactions": [{uri, request, status, response}]}."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def response(name: str, index: int = 0) -> dict[str, Any]:
    return recorded(name)["interactions"][index]["response"]


def serve(server, name: str, *indexes: int) -> None:
    """Queue the recorded responses of ``name`` (all of them, or those at ``indexes``), as recorded."""
    interactions = recorded(name)["interactions"]
    for index in indexes or range(len(interactions)):
        item = interactions[index]
        server.enqueue_raw(item["response"], status=item["status"])


@pytest.fixture(scope="session")
def litellm_loaded():
    from vance_cli.llm.litellm_model import _litellm

    return _litellm()


@pytest.fixture
def make_model(request):
    """make_model(kind, model, api_base, **kw): "direct" (OpenAICompatModel) or "litellm"."""
    built: list[Any] = []

    def make(kind: str, model: str, api_base: str | None, **kw: Any) -> ChatModel:
        from vance_cli.llm.profile import build_profile

        kw.setdefault("api_key", "test-key")
        kw.setdefault("retries", FAST)
        kw.setdefault("timeout", 10.0)
        announce = kw.pop("announce", None)
        profile = build_profile(model, api_base=api_base, **kw)
        if kind == "direct":
            from vance_cli.llm.openai_compat import OpenAICompatModel

            instance = OpenAICompatModel(profile, announce=announce)
        else:
            request.getfixturevalue("litellm_loaded")
            from vance_cli.llm.litellm_model import LiteLLMModel

            instance = LiteLLMModel(profile, announce=announce)
        built.append(instance)
        return instance

    yield make


def ford_recipe(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "replay",
        "engine": "ford",
        "tools": {"allowed": ["respond", "file_read", "file_list"]},
        "systemPrompt": "SYSTEM",
        "validation": True,
        "maxValidationCorrections": 2,
    }
    base.update(over)
    return Recipe.model_validate(base).model_dump(mode="json")


@dataclass
class ChatRun:
    process: Process
    store: ProcessStore
    events: list[Event] = field(default_factory=list)

    @property
    def messages(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, MessageEvent)]

    @property
    def journal(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, JournalEvent)]


async def chat(tmp_path: Path, model: ChatModel, user: str = "hi", **recipe_over: Any) -> ChatRun:
    """One Ford turn of a fresh process driven by ``model``."""
    store = ProcessStore(tmp_path / "processes")
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    snap = ford_recipe(**recipe_over)
    process = Process(engine="ford", recipe=snap, recipe_name=snap["name"], workspace=str(workspace), model=model.name)
    process.inbox.append(InboxItem(content=user))
    store.create(process)
    bus = EventBus()
    events: list[Event] = []
    bus.subscribe(events.append)
    deps = EngineDeps(
        model=model, tools=builtin_registry(), bus=bus, persist=store.save,
        tool_context=ToolContext(workspace=workspace, process_id=process.id),
    )
    try:
        await engine_class("ford")(deps).run(process)
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
    return ChatRun(process=process, store=store, events=events)
