"""The `structure` tool where it is used: added by a recipe, and called by a model in a Ford turn."""

from __future__ import annotations

import asyncio
import json

from tests.engines.harness import call, recipe, respond
from vance_cli.config.recipes import load_recipe, validate_recipe_file
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.engines import engine_class
from vance_cli.engines.base import EngineDeps
from vance_cli.events import EventBus, MessageEvent
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import InboxItem, Process
from vance_cli.tools.base import ToolContext
from vance_cli.tools.registry import builtin_registry

RECIPE_YAML = """\
name: extractor
description: chats, and structures what it hears
engine: ford
tools:
  add: [structure]
systemPrompt: You extract records.
"""

SCHEMA = {
    "type": "object",
    "properties": {"who": {"type": "string"}, "what": {"type": "string"}},
    "required": ["who", "what"],
    "additionalProperties": False,
}


def test_a_recipe_can_add_the_structure_tool(tmp_path, vance_home):
    path = tmp_path / "extractor.yaml"
    path.write_text(RECIPE_YAML)
    validated = validate_recipe_file(path)
    assert "structure" in validated.tool_names() and "respond" in validated.tool_names()
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "extractor.yaml").write_text(RECIPE_YAML)
    loaded = load_recipe("extractor", Scopes.discover())
    assert loaded.tool_names() == validated.tool_names()
    assert loaded.tool_names().count("structure") == 1
    registry = builtin_registry()
    assert all(registry.has(name) for name in loaded.tool_names())


def test_ford_runs_the_structure_tool_and_the_model_answers_with_its_result(tmp_path):
    content_script = tmp_path / "content.json"
    content_script.write_text(json.dumps([{"text": json.dumps({"result": {"who": "Mike", "what": "broke the build"}, "_need": None})}]))
    scopes = Scopes.discover()
    settings = Settings.load(scopes, env={}, overrides={"structure.model": f"scripted:{content_script}"})

    snap = recipe(tools={"allowed": ["respond", "structure"]}, dataRelayCorrection={"enabled": False})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = ProcessStore(tmp_path / "processes")
    process = Process(engine="ford", recipe=snap, recipe_name=snap["name"], workspace=str(workspace))
    process.inbox.append(InboxItem(content="Mike broke the build. Record it."))
    store.create(process)
    args = {"prompt": "Mike broke the build.", "schema": SCHEMA}
    model = ScriptedModel([{"tool_calls": [call("structure", args, id="c1")]}, respond("Recorded: Mike broke the build.", id="c2")])
    bus = EventBus()
    events: list = []
    bus.subscribe(events.append)
    deps = EngineDeps(
        model=model,
        tools=builtin_registry(),
        bus=bus,
        persist=store.save,
        tool_context=ToolContext(workspace=workspace, settings=settings, process_id=process.id),
    )
    asyncio.run(engine_class("ford")(deps).run(process))

    history = process.history
    assert [(m.role, m.name if m.role == "tool" else None) for m in history] == [
        ("user", None),
        ("assistant", None),
        ("tool", "structure"),
        ("assistant", None),
        ("tool", "respond"),
    ]
    payload = json.loads(history[2].content)
    assert payload["status"] == "ok" and payload["data"] == {"who": "Mike", "what": "broke the build"}
    assert payload["schemaOrigin"] == "inline" and payload["model"] == f"scripted:{content_script}"
    # The model saw the tool message before it answered, and its answer reached the user.
    second = model.requests[1].messages
    assert second[-1].role == "tool" and json.loads(second[-1].content)["data"] == payload["data"]
    assert [e.text for e in events if isinstance(e, MessageEvent)] == ["Recorded: Mike broke the build."]
    assert len(model.requests) == 2
