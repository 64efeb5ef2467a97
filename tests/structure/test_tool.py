"""The built-in `structure` tool: spec §2.1 parameters and return shape."""

from __future__ import annotations

import json

from tests.structure.conftest import OPENAI
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.tools.base import ToolContext
from vance_cli.tools.registry import builtin_registry
from vance_cli.tools.structure_tool import make_tool

INLINE = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": False}


def ctx(tmp_path, model):
    settings = Settings.load(Scopes.discover(), env={}, overrides={"model.default": "openai/x"})
    return ToolContext(workspace=tmp_path, settings=settings, model_factory=lambda name: model)


def test_tool_is_registered_with_the_spec_parameters():
    assert "structure" in builtin_registry().names()
    tool = make_tool()
    params = tool.parameters
    assert tool.name == "structure"
    assert params["required"] == ["prompt", "schema"]
    assert params["properties"]["schemaMode"]["enum"] == ["json", "named", "text"]
    mode = params["properties"]["schemaMode"]
    assert "default" not in mode  # omitting it means inference, not json
    assert "omitted: inferred — object → json, a registered name → named, else text" in mode["description"].lower()
    loops = params["properties"]["maxLoops"]
    assert (loops["default"], loops["minimum"], loops["maximum"]) == (3, 1, 10)
    types = [alt["type"] for alt in params["properties"]["schema"]["anyOf"]]
    assert types == ["object", "string"]


async def test_ok_result_is_json_text_and_data(tmp_path, scripted):
    model = scripted({"result": {"name": "Mike"}, "_need": None}, caps=OPENAI)
    result = await make_tool().invoke(json.dumps({"prompt": "Mike", "schema": INLINE}), ctx(tmp_path, model))
    assert result.ok
    payload = json.loads(result.content)
    assert payload["status"] == "ok" and payload["data"] == {"name": "Mike"}
    assert payload["schemaOrigin"] == "inline" and payload["iterations"] == 1
    assert result.data == payload


async def test_need_more_input_is_a_result_not_an_error(tmp_path, scripted):
    model = scripted({"result": None, "_need": "the timestamp of the action is not in the input"})
    args = {"prompt": "Mike broke the build", "schema": "user-action-record", "schemaMode": "named"}
    result = await make_tool().invoke(json.dumps(args), ctx(tmp_path, model))
    assert result.ok
    payload = json.loads(result.content)
    assert payload == {**payload, "status": "need-more-input", "need": "the timestamp of the action is not in the input"}
    assert payload["schemaOrigin"] == "registry:bundled"


async def test_string_schema_without_mode_is_inferred(tmp_path, scripted):
    model = scripted({"result": None, "_need": "x"})
    result = await make_tool().invoke(json.dumps({"prompt": "p", "schema": "contact"}), ctx(tmp_path, model))
    payload = json.loads(result.content)
    assert payload["schemaMode"] == "named" and payload["modeInferred"] is True


async def test_omitted_schema_mode_is_inferred_for_an_object_too(tmp_path, scripted):
    model = scripted({"result": {"name": "Mike"}, "_need": None})
    result = await make_tool().invoke(json.dumps({"prompt": "Mike", "schema": INLINE}), ctx(tmp_path, model))
    payload = json.loads(result.content)
    assert payload["schemaMode"] == "json" and payload["modeInferred"] is True


async def test_stated_schema_mode_is_not_reported_as_inferred(tmp_path, scripted):
    model = scripted({"result": {"name": "Mike"}, "_need": None})
    args = {"prompt": "Mike", "schema": INLINE, "schemaMode": "json"}
    payload = json.loads((await make_tool().invoke(json.dumps(args), ctx(tmp_path, model))).content)
    assert payload["schemaMode"] == "json" and payload["modeInferred"] is False


async def test_string_that_is_json_but_no_object_is_an_error_result(tmp_path, scripted):
    model = scripted()
    result = await make_tool().invoke(json.dumps({"prompt": "p", "schema": "[1, 2]"}), ctx(tmp_path, model))
    assert not result.ok and "must be a JSON object" in result.content and model.requests == []


async def test_dangling_ref_is_an_error_result_before_any_model_call(tmp_path, scripted):
    model = scripted()
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}
    result = await make_tool().invoke(json.dumps({"prompt": "p", "schema": schema}), ctx(tmp_path, model))
    assert not result.ok and "$ref '#/$defs/nope'" in result.content and "does not resolve" in result.content
    assert model.requests == []


async def test_invalid_schema_is_an_error_result(tmp_path, scripted):
    model = scripted()
    result = await make_tool().invoke(json.dumps({"prompt": "p", "schema": {"type": 3}}), ctx(tmp_path, model))
    assert not result.ok and "not a valid JSON Schema" in result.content and model.requests == []


async def test_out_of_range_max_loops_is_rejected_by_the_parameters(tmp_path, scripted):
    result = await make_tool().invoke(json.dumps({"prompt": "p", "schema": INLINE, "maxLoops": 11}), ctx(tmp_path, scripted()))
    assert not result.ok and "maxLoops" in result.content
