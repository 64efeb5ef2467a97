"""The host protocols (tools.base.WorkerHost, engines.base.EngineHost) against the real host, the
Scheduler; and the engine contract's optional ``compact`` (engines.base.Compacting)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Protocol

import pytest

from tests.engines.harness import recipe
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.engines import engine_class
from vance_cli.engines.base import Compacting, EngineDeps, EngineHost
from vance_cli.errors import UsageError
from vance_cli.events import EventBus
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.runtime.runner import Runtime, _compact
from vance_cli.runtime.scheduler import Scheduler
from vance_cli.store.process import Process
from vance_cli.tools.base import ToolContext, WorkerHost
from vance_cli.tools.registry import builtin_registry


def _runtime(tmp_path):
    scopes = Scopes.discover(cwd=tmp_path)
    return Runtime(scopes, Settings.load(scopes, env={"VANCE_MODEL": "fn"}), bus=EventBus())


def _members(protocol: type) -> dict[str, object]:
    """Every member a protocol declares, its bases' too (not Protocol's own machinery)."""
    found: dict[str, object] = {}
    for klass in reversed(protocol.__mro__):
        if klass in (object, Protocol) or not getattr(klass, "_is_protocol", False):
            continue
        found.update({k: v for k, v in vars(klass).items() if not k.startswith("_")})
        found.update({k: None for k in getattr(klass, "__annotations__", {})})
    return found


def test_the_scheduler_is_a_worker_host_and_an_engine_host(tmp_path):
    scheduler = Scheduler(_runtime(tmp_path))
    assert isinstance(scheduler, WorkerHost) and isinstance(scheduler, EngineHost)
    assert not isinstance(object(), WorkerHost) and not isinstance(_runtime(tmp_path), EngineHost)


@pytest.mark.parametrize("protocol", [WorkerHost, EngineHost], ids=["WorkerHost", "EngineHost"])
def test_the_schedulers_methods_take_what_the_protocol_declares(protocol, tmp_path):
    # isinstance only sees that a name is there; a changed signature must fail too.
    scheduler = Scheduler(_runtime(tmp_path))
    members = _members(protocol)
    assert {"find", "spawn", "save", "send", "scopes"} <= set(members)
    for name, declared in members.items():
        if declared is None or isinstance(declared, property):  # data: an attribute or a property will do
            assert hasattr(scheduler, name), f"Scheduler has no {name}"
            continue
        real = inspect.getattr_static(Scheduler, name, None)
        assert callable(real), f"Scheduler has no method {name}"
        want = [(p.name, p.kind) for p in inspect.signature(declared).parameters.values()]
        got = [(p.name, p.kind) for p in inspect.signature(real).parameters.values()]
        assert got == want, f"Scheduler.{name}{inspect.signature(real)} != {protocol.__name__}.{name}{inspect.signature(declared)}"


def _engine(name, tmp_path):
    deps = EngineDeps(model=ScriptedModel([]), tools=builtin_registry(), bus=EventBus(), persist=lambda p: None,
                      tool_context=ToolContext(workspace=tmp_path))
    return engine_class(name)(deps)


def test_the_chat_engines_compact_and_benjy_does_not(tmp_path):
    assert isinstance(_engine("ford", tmp_path), Compacting)
    assert isinstance(_engine("arthur", tmp_path), Compacting)
    benjy = _engine("benjy", tmp_path)
    assert not isinstance(benjy, Compacting)
    process = Process(engine="benjy", recipe=recipe(), recipe_name="t", model="fn", workspace=str(tmp_path))
    with pytest.raises(UsageError, match="has no chat history to compact"):
        asyncio.run(_compact(benjy, process))
