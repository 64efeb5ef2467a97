"""Provider-side schemas per capability family, checked mechanically against each provider's rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tests.structure.conftest import ANTHROPIC, GEMINI, OPENAI, OTHER
from tests.structure.strict_rules import (
    anthropic_problems,
    gemini_problems,
    openai_strict_problems,
)
from vance_cli.llm.base import Capabilities
from vance_cli.llm.output.plan import (
    build_plan,
    format_chain,
    strip_injected_nulls,
)
from vance_cli.schema.reasons import make_validator

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
UAR = json.loads((SCHEMAS / "user-action-record.json").read_text())

HARD = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 40, "default": "x"},
        "kind": {"oneOf": [{"const": "a"}, {"const": "b"}]},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "multipleOf": 1},
        "site": {"type": "string", "format": "uri"},
        "meta": {
            "type": "object",
            "properties": {"k": {"type": "string", "pattern": "^(?=a)a+$"}},
            "required": ["k"],
            "allOf": [{"properties": {"v": {"type": "number"}}}],
        },
        "list": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 5, "uniqueItems": True},
        "flag": {"not": {"type": "null"}, "type": "boolean"},
        "when": {"type": "string", "format": "date-time"},
    },
    "required": ["name"],
    "if": {"required": ["age"]},
    "then": {"required": ["kind"]},
    "dependentRequired": {"age": ["name"]},
}


def all_bundled():
    return sorted(p for p in SCHEMAS.glob("*.json") if not p.name.startswith("_"))


@pytest.mark.parametrize("path", all_bundled(), ids=lambda p: p.stem)
def test_every_bundled_schema_passes_openai_strict_rules(path):
    schema = json.loads(path.read_text())
    plan = build_plan(schema, OPENAI, allow_need=True, name=path.stem)
    assert plan.strict is True
    assert openai_strict_problems(plan.schema) == []
    Draft202012Validator.check_schema(plan.schema)


def test_openai_strict_envelope_shape():
    plan = build_plan(UAR, OPENAI, allow_need=True, name="user-action-record")
    assert plan.response_format["type"] == "json_schema"
    assert plan.response_format["json_schema"]["strict"] is True
    assert plan.response_format["json_schema"]["name"] == "user-action-record"
    env = plan.schema
    assert env["required"] == ["result", "_need"] and env["additionalProperties"] is False
    assert env["properties"]["_need"]["type"] == ["string", "null"]
    target = env["properties"]["result"]["anyOf"][0]
    assert env["properties"]["result"]["anyOf"][1] == {"type": "null"}
    assert target["required"] == ["userId", "action", "timestamp", "status", "tags"]
    # tags was optional: now required but nullable
    assert {"type": "null"} in target["properties"]["tags"]["anyOf"]
    assert plan.nulls_injected is True
    assert plan.downgrades == ["/properties/tags: uniqueItems removed (not enforced by openai; checked locally)"]
    # pattern and date-time are enforced by OpenAI, so they stay
    assert target["properties"]["userId"]["pattern"] == "^[a-zA-Z0-9_-]{3,16}$"
    assert target["properties"]["timestamp"]["format"] == "date-time"


def test_the_callers_schema_is_never_modified():
    before = json.dumps(HARD, sort_keys=True)
    for caps in (OPENAI, ANTHROPIC, GEMINI, OTHER):
        build_plan(HARD, caps, allow_need=True)
    assert json.dumps(HARD, sort_keys=True) == before


def test_openai_hard_schema_is_cleaned_and_downgrades_are_listed():
    plan = build_plan(HARD, OPENAI, allow_need=True)
    assert plan.strict is True
    assert openai_strict_problems(plan.schema) == []
    joined = "\n".join(plan.downgrades)
    for expected in (
        "/properties/name: minLength removed",
        "/properties/name: maxLength removed",
        "/properties/kind: oneOf relaxed to anyOf",
        "/properties/site: format removed",
        "/properties/list: uniqueItems removed",
        "/properties/flag: not removed",
        "(root): if removed",
        "(root): then removed",
        "(root): dependentRequired removed",
    ):
        assert expected in joined
    target = plan.schema["properties"]["result"]["anyOf"][0]
    # allOf merged into the parent (no collision), so "v" is a real property now
    assert set(target["properties"]["meta"]["anyOf"][0]["properties"]) == {"k", "v"}
    # removed constraints move into the description so the model can still follow them
    name = target["properties"]["name"]
    assert "minLength=2" in name["description"] and "maxLength=40" in name["description"]
    assert "default" not in json.dumps(plan.schema)


def test_openai_free_form_object_turns_strict_off_and_says_why():
    schema = {"type": "object", "properties": {"extra": {"type": "object"}}, "required": ["extra"]}
    plan = build_plan(schema, OPENAI, allow_need=False)
    assert plan.strict is False
    assert plan.response_format["json_schema"]["strict"] is False
    assert plan.downgrades[0].startswith("strict output off: /properties/extra is a free-form object")
    Draft202012Validator.check_schema(plan.schema)


def test_openai_without_need_and_object_root_sends_the_target_itself():
    plan = build_plan(UAR, OPENAI, allow_need=False)
    assert plan.envelope is False
    assert set(plan.schema["properties"]) == set(UAR["properties"])
    assert openai_strict_problems(plan.schema) == []


def test_openai_non_object_root_goes_into_the_envelope():
    plan = build_plan({"type": "array", "items": {"type": "integer"}}, OPENAI, allow_need=False)
    assert plan.envelope is True
    assert plan.schema["properties"]["result"] == {"type": "array", "items": {"type": "integer"}}
    assert openai_strict_problems(plan.schema) == []


def test_defs_are_hoisted_and_recursion_keeps_resolving():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["name", "children"],
        "definitions": {"unused": {"type": "string"}},
    }
    plan = build_plan(schema, OPENAI, allow_need=True)
    assert plan.strict is True
    assert openai_strict_problems(plan.schema) == []
    # unreferenced definitions are not sent (they would only count against the provider's limits)
    assert "__target" in plan.schema["$defs"] and "unused" not in plan.schema["$defs"]
    assert plan.schema["$defs"]["__target"]["properties"]["children"]["items"] == {"$ref": "#/$defs/__target"}
    # the provider schema itself is usable by a validator (refs resolve)
    v = Draft202012Validator(plan.schema)
    assert v.is_valid({"result": {"name": "a", "children": [{"name": "b", "children": []}]}, "_need": None})


def test_anthropic_rules():
    plan = build_plan(HARD, ANTHROPIC, allow_need=True)
    assert anthropic_problems(plan.schema) == []
    target = plan.schema["properties"]["result"]["anyOf"][0]
    props = target["properties"]
    assert "minimum" not in props["age"] and "maximum" not in props["age"]
    assert "minItems" not in props["list"] and "maxItems" not in props["list"]
    assert props["site"]["format"] == "uri"  # Anthropic accepts uri
    joined = "\n".join(plan.downgrades)
    assert "/properties/meta/properties/k: pattern removed" in joined  # lookaround
    assert "/properties/age: minimum removed" in joined
    assert "/properties/list: minItems removed" in joined
    # no strict nulls for Anthropic: optional stays optional
    assert plan.nulls_injected is False
    assert target["required"] == ["name"]


def test_anthropic_strict_refuses_recursion():
    caps = ANTHROPIC.model_copy(update={"strict_json_schema": True})
    schema = {"type": "object", "properties": {"next": {"$ref": "#"}}, "additionalProperties": False}
    plan = build_plan(schema, caps)
    assert plan.strict is False
    assert "recursive" in plan.downgrades[0]


def test_gemini_rules():
    plan = build_plan(HARD, GEMINI, allow_need=True)
    assert gemini_problems(plan.schema) == []
    props = plan.schema["properties"]["result"]["anyOf"][0]["properties"]
    assert props["age"]["minimum"] == 0 and props["age"]["maximum"] == 150
    assert props["when"]["format"] == "date-time"
    assert "format" not in props["site"]
    assert props["kind"]["anyOf"] == [{"enum": ["a"]}, {"enum": ["b"]}]  # const → enum
    joined = "\n".join(plan.downgrades)
    assert "/properties/meta/properties/k: pattern removed (not enforced by gemini" in joined


def test_other_family_passes_the_schema_through_non_strict():
    plan = build_plan(UAR, OTHER, allow_need=True)
    assert plan.strict is False and plan.downgrades == []
    target = plan.schema["properties"]["result"]["anyOf"][0]
    assert target["properties"]["tags"]["uniqueItems"] is True
    assert "$schema" not in target


def test_strict_can_be_switched_off_by_the_setting():
    plan = build_plan(UAR, OPENAI, allow_need=True, require_strict=False)
    assert plan.strict is False and plan.nulls_injected is False


def test_json_object_and_prompt_modes_send_no_schema():
    plan = build_plan(UAR, OPENAI, mode="json_object", allow_need=True)
    assert plan.response_format == {"type": "json_object"} and plan.schema is None and not plan.envelope
    prompt = build_plan(UAR, OPENAI, mode="prompt", allow_need=True)
    assert prompt.response_format is None
    assert build_plan({"type": "array"}, OPENAI, mode="json_object").envelope is True


def test_format_chain_follows_capabilities():
    assert format_chain(OPENAI) == ["json_schema", "json_object", "prompt"]
    assert format_chain(OTHER) == ["json_schema", "prompt"]
    assert format_chain(Capabilities(json_schema=False, json_object=False)) == ["prompt"]


def test_schema_name_is_sanitized_for_openai():
    plan = build_plan(UAR, OPENAI, name="my schema/v2 (draft)")
    assert plan.response_format["json_schema"]["name"] == "my_schema_v2_draft"


def test_injected_nulls_are_stripped_but_allowed_nulls_stay():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": ["string", "null"]},
            "c": {"type": "string"},
            "nested": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
        },
        "required": ["c"],
        "$defs": {"item": {"type": "object", "properties": {"y": {"type": "integer"}}}},
    }
    data = {"a": None, "b": None, "c": None, "nested": {"x": None}, "items": [{"y": None}, {"y": 2}]}
    out = strip_injected_nulls(data, schema, make_validator(schema))
    assert out == {"b": None, "c": None, "nested": {}, "items": [{}, {"y": 2}]}


def test_an_injected_null_a_branch_rejects_is_dropped_even_where_another_branch_allows_null():
    # "note" is a string; only where `then` applies it may also be null. The provider schema (one
    # closed object) makes it required and nullable, so the model sends null for a note it leaves
    # out. For a bank that null was kept because the `then` branch's schema allows null, and the
    # answer came back invalid, so the correction loop could never end (no reply passes).
    schema = {
        "type": "object",
        "properties": {"kind": {"enum": ["card", "bank"]}, "note": {"type": "string"}},
        "required": ["kind"],
        "if": {"properties": {"kind": {"const": "card"}}},
        "then": {"properties": {"note": {"type": ["string", "null"]}}},
    }
    plan = build_plan(schema, OPENAI, allow_need=False)
    assert plan.strict and plan.nulls_injected
    for kind in ("bank", "card"):
        assert strip_injected_nulls({"kind": kind, "note": None}, schema) == {"kind": kind}
    # A null the schema accepts there stays (an absent optional nullable field comes back as null).
    nullable = {**schema, "properties": {**schema["properties"], "note": {"type": ["string", "null"]}}}
    assert strip_injected_nulls({"kind": "bank", "note": None}, nullable) == {"kind": "bank", "note": None}


@pytest.mark.parametrize("caps", [ANTHROPIC.model_copy(update={"strict_json_schema": True}), GEMINI], ids=["anthropic-strict", "gemini"])
def test_families_that_keep_optional_fields_optional_add_and_drop_no_null(caps):
    """The README's null rule: only OpenAI's strict rules make every property required."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}
    plan = build_plan(schema, caps, allow_need=False)
    assert plan.nulls_injected is False
    sent = plan.schema["properties"]["result"] if plan.envelope else plan.schema
    assert sent["required"] == ["a"] and sent["properties"]["b"] == {"type": "integer"}
    assert build_plan(schema, OPENAI, allow_need=False).nulls_injected is True


def test_null_stripping_follows_ref_cycles_only_once_per_level():
    # Used to branch exponentially: each anyOf alternative re-entered the root.
    schema = {"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"type": "object", "properties": {"a": {"type": "string"}}}]}
    assert strip_injected_nulls({"a": None, "b": 1}, schema) == {"b": 1}


def test_make_nullable_never_repeats_null_in_a_type_list():
    """Found by the property test: a null type whose enum excludes null became type [null, null]."""
    from vance_cli.schema.nodes import make_nullable

    out = make_nullable({"type": "null", "enum": [False]})
    assert out["type"] == "null" and out["enum"] == [False, None]


def test_a_not_whose_schema_loses_a_keyword_is_dropped_not_emptied():
    """Found by the property test: {"not": {"format": ...}} became {"not": {}}, which rejects everything."""
    from jsonschema import Draft202012Validator

    from vance_cli.llm.base import Capabilities
    from vance_cli.llm.output.plan import build_plan

    caps = Capabilities(family="other", tools=True, json_schema=True, strict_json_schema=False, json_object=False)
    schema = {"type": "array", "items": {"not": {"format": "date-time"}}}
    plan = build_plan(schema, caps, mode="json_schema", allow_need=False, require_strict=True, name="t")
    sent = plan.response_format["json_schema"]["schema"]
    value = {"result": ["x"]} if plan.envelope else ["x"]
    assert Draft202012Validator(sent).is_valid(value), sent
    assert any("not removed" in d for d in plan.downgrades), plan.downgrades
