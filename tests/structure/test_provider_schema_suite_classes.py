"""One minimal schema per class of issue 15 (found with the JSON Schema Test Suite).

Each test fails on the converter before the fix: the provider schema forbade an answer the
caller's schema accepts, broke the provider's rules, or pointed nowhere.
"""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from tests.structure.instances import provider_reply
from tests.structure.strict_rules import (
    anthropic_problems,
    gemini_problems,
    llama_cpp_problems,
    llama_cpp_reading,
    openai_strict_problems,
)
from tests.structure.suite_driver import FAMILIES, _refs_resolve
from vance_cli.llm.output.plan import build_plan, strip_injected_nulls

DRAFT7 = "http://json-schema.org/draft-07/schema#"
OPENAI, ANTHROPIC_STRICT, GEMINI, OLLAMA = (
    FAMILIES["openai"],
    FAMILIES["anthropic+strict"],
    FAMILIES["gemini"],
    FAMILIES["ollama"],
)


def sendable(plan, value) -> bool:
    """A provider holding plan.schema can send ``value`` (in strict's shape, in the envelope)."""
    reply, dropped = provider_reply(value, plan.schema, envelope=plan.envelope)
    return not dropped and Draft202012Validator(plan.schema).is_valid(reply)


@pytest.mark.parametrize("schema, other", [
    ({"properties": {"a": {"type": "string"}}}, 1),
    ({"items": {"type": "string"}}, {"x": 1}),
])
def test_untyped_properties_or_items_turn_strict_off_instead_of_forcing_a_type(schema, other):
    plan = build_plan(schema, OPENAI)
    assert plan.strict is False
    assert plan.downgrades[0].startswith("strict output off: (root) is a schema with")
    assert sendable(plan, other)


def test_anyof_alternatives_can_combine_keys_declared_in_different_alternatives():
    schema = {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}},
        {"type": "object", "properties": {"b": {"type": "integer"}}},
    ]}
    plan = build_plan(schema, OPENAI)
    assert sendable(plan, {"a": 1, "b": 2})
    # Valid under the first alternative alone (it leaves "b" open): a strict schema could only
    # give "b" the second alternative's integer there, so strict is off (see the oneOf test).
    assert sendable(plan, {"a": 1, "b": "x"})
    assert plan.strict is False


ONE_OF = {"oneOf": [
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
]}


@pytest.mark.parametrize("family", ["openai", "anthropic+strict", "gemini+strict", "other+strict"])
def test_an_open_alternative_that_would_borrow_a_siblings_key_turns_strict_off(family):
    """{"a": 1, "b": "x"} is valid (only the first alternative matches: the second fails on b's
    type), but a strict schema closes each alternative, so the first one could only declare "b"
    with its sibling's integer: every strict provider schema forbade that answer."""
    assert Draft202012Validator(ONE_OF).is_valid({"a": 1, "b": "x"})
    plan = build_plan(ONE_OF, FAMILIES[family], allow_need=True)
    assert plan.strict is False
    assert plan.downgrades[0] == (
        "strict output off: (root) is an anyOf/oneOf whose alternative 0 allows any value for 'b', "
        "which another alternative declares (closed by strict mode, it could only give 'b' that schema, "
        "forbidding valid answers; additionalProperties: false on the alternative keeps strict)"
    )
    assert sendable(plan, {"a": 1, "b": "x"}) and sendable(plan, {"b": 2, "a": [1]})


@pytest.mark.parametrize("schema, where, key", [
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "if": {"properties": {"a": {"const": 1}}},
      "then": {"properties": {"b": {"type": "integer"}}}}, "(root)", "b"),
    ({"type": "object", "properties": {"p": {"type": "object", "properties": {"a": {"type": "integer"}},
                                             "dependentSchemas": {"c": {"properties": {"b": {"type": "integer"}}}}}}},
     "/properties/p", "b"),
])
def test_a_key_only_a_conditional_branch_declares_turns_strict_off(schema, where, key):
    plan = build_plan(schema, OPENAI)
    assert plan.strict is False
    assert plan.downgrades[0].startswith(f"strict output off: {where} is an object that allows any value for {key!r}")


def test_an_alternative_with_an_additional_properties_schema_gives_sibling_keys_that_schema():
    schema = {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {"b": {"type": "integer"}}, "additionalProperties": False},
    ]}
    plan = build_plan(schema, OPENAI)
    assert plan.strict
    assert sendable(plan, {"a": 1, "b": "text"})  # valid under the first alternative only
    assert not sendable(plan, {"a": 1, "b": 2})  # invalid: the first gives b a string, the second is closed
    reply, _ = provider_reply({"a": 1}, plan.schema, envelope=plan.envelope)
    assert strip_injected_nulls(reply["result"], schema) == {"a": 1}


@pytest.mark.parametrize("schema, value", [
    # then and else both declare "b": one of them always applies, so it always has a schema.
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
      "if": {"properties": {"a": {"const": 1}}}, "then": {"properties": {"b": {"type": "integer"}}},
      "else": {"properties": {"b": {"type": "string"}}}}, {"a": 2, "b": "x"}),
    # Closed alternatives borrow nothing.
    ({"anyOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
                {"type": "object", "properties": {"b": {"type": "integer"}}, "additionalProperties": False}]}, {"b": 2}),
    # A sibling that is no object borrows nothing.
    ({"anyOf": [{"type": "string"}, {"type": "object", "properties": {"b": {"type": "integer"}}}]}, {"b": 2}),
])
def test_strict_stays_on_where_every_key_has_a_schema_in_every_case(schema, value):
    plan = build_plan(schema, OPENAI)
    assert plan.strict and openai_strict_problems(plan.schema) == []
    assert sendable(plan, value)


def test_anthropic_strict_merges_allof_instead_of_closing_each_part():
    schema = {
        "type": "object",
        "properties": {"bar": {"type": "integer"}},
        "required": ["bar"],
        "allOf": [
            {"properties": {"foo": {"type": "string"}}, "required": ["foo"]},
            {"properties": {"baz": {"type": "null"}}, "required": ["baz"]},
        ],
    }
    plan = build_plan(schema, ANTHROPIC_STRICT)
    assert plan.strict and "allOf" not in str(plan.schema)
    assert anthropic_problems(plan.schema) == []
    assert sendable(plan, {"foo": "quux", "bar": 2, "baz": None})


@pytest.mark.parametrize("family", ["openai", "anthropic", "gemini", "ollama"])
def test_draft7_ref_ignores_a_sibling_id(family):
    schema = {
        "$schema": DRAFT7,
        "$id": "http://localhost:1234/sibling_id/base/",
        "definitions": {
            "foo": {"$id": "http://localhost:1234/sibling_id/foo.json", "type": "string"},
            "base_foo": {"$id": "foo.json", "type": "number"},
        },
        "allOf": [{"$id": "http://localhost:1234/sibling_id/", "$ref": "foo.json"}],
    }
    plan = build_plan(schema, FAMILIES[family])
    assert sendable(plan, 1)  # base_foo (a number), not foo (a string)


def test_dynamic_ref_keeps_the_properties_its_targets_declare():
    schema = {
        "type": "object",
        "$dynamicRef": "#addons",
        "properties": {"foo": {"type": "string"}},
        "$defs": {"addons": {"$dynamicAnchor": "addons", "properties": {"bar": {"type": "string"}}}},
    }
    plan = build_plan(schema, OPENAI)
    assert plan.strict
    assert sendable(plan, {"foo": "x", "bar": "y"})
    # The one "addons" anchor of the schema is the only possible target: the $dynamicRef is sent
    # as the $ref it then is (merged here), so nothing is removed and "bar" keeps its type.
    assert not any("$dynamicRef" in line for line in plan.downgrades)
    assert not sendable(plan, {"foo": "x", "bar": 1})


def test_a_dynamic_ref_the_dynamic_scope_decides_is_removed_with_a_line():
    schema = {
        "$id": "https://e.com/root", "type": "object", "$ref": "list",
        "$defs": {
            "list": {"$id": "list", "$dynamicAnchor": "addons", "type": "object",
                     "properties": {"x": {"$dynamicRef": "#addons"}}},
            "addons": {"$id": "addons", "$dynamicAnchor": "addons", "properties": {"bar": {"type": "string"}}},
        },
    }
    for caps in (OPENAI, GEMINI, OLLAMA):
        plan = build_plan(schema, caps)  # a target holding the same $dynamicRef: folded once, no RecursionError
        assert any("$dynamicRef" in line and "removed" in line for line in plan.downgrades)
        assert sendable(plan, {"x": {"x": {}}})


@pytest.mark.parametrize("family", ["openai", "anthropic", "gemini", "ollama"])
def test_definition_names_that_need_escaping_give_refs_that_resolve(family):
    schema = {
        "type": "object",
        "properties": {
            "tilde": {"$ref": "#/$defs/tilde~0field"},
            "slash": {"$ref": "#/$defs/slash~1field"},
            "percent": {"$ref": "#/$defs/percent%25field"},
            "quote": {"$ref": "#/$defs/foo%22bar"},
        },
        "$defs": {
            "tilde~field": {"type": "integer"},
            "slash/field": {"type": "integer"},
            "percent%field": {"type": "integer"},
            'foo"bar': {"type": "integer"},
        },
    }
    plan = build_plan(schema, FAMILIES[family])
    assert _refs_resolve(plan.schema) == []
    assert sendable(plan, {"tilde": 1, "slash": 2, "percent": 3, "quote": 4})
    assert not Draft202012Validator(plan.schema).is_valid(
        {"result": {"slash": "x"}} if plan.envelope else {"tilde": None, "slash": "x", "percent": None, "quote": None}
    )


def test_an_integral_float_const_is_sent_as_an_integer():
    plan = build_plan({"const": -2.0}, OPENAI)
    result = plan.schema["properties"]["result"]
    assert result["enum"] == [-2] and type(result["enum"][0]) is int
    assert openai_strict_problems(plan.schema) == []


def test_whole_number_counts_are_sent_as_integers():
    for caps in (OPENAI, GEMINI, OLLAMA):
        plan = build_plan({"type": "array", "items": {"type": "integer"}, "maxItems": 2.0}, caps)
        assert type(plan.schema["properties"]["result"]["maxItems"]) is int


def test_an_empty_enum_is_never_sent():
    for caps in (OPENAI, GEMINI, ANTHROPIC_STRICT):
        plan = build_plan({"enum": []}, caps)
        assert "enum" not in plan.schema["properties"]["result"]
        assert any("empty enum removed" in line for line in plan.downgrades)
    assert build_plan({"enum": []}, OPENAI).strict is False


@pytest.mark.parametrize("schema, values", [
    ({"const": None}, [None]),
    ({"enum": [True, "a", 1]}, [True, "a", 1]),
    ({"type": "object", "properties": {"k": {"enum": [[1], {"x": 1}, "s"]}}}, [{"k": [1]}, {"k": {"x": 1}}, {"k": "s"}]),
])
def test_gemini_gets_enums_of_strings_and_numbers_only(schema, values):
    for allow_need in (False, True):
        plan = build_plan(schema, GEMINI, allow_need=allow_need)
        assert gemini_problems(plan.schema) == []
        for value in values:
            reply, _ = provider_reply(value, plan.schema, envelope=plan.envelope)
            assert Draft202012Validator(plan.schema).is_valid(reply)
        assert any("sent as their types" in line for line in plan.downgrades)


@pytest.mark.parametrize("schema, good, bad", [
    # an $anchor
    ({"$ref": "#foo", "$defs": {"A": {"$anchor": "foo", "type": "integer"}}}, 1, "x"),
    # a URN root $id and a ref through it
    ({"$id": "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed", "properties": {"foo": {"$ref": "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed#/$defs/bar"}}, "$defs": {"bar": {"type": "string"}}}, {"foo": "x"}, {"foo": 1}),
    # a relative ref against the root $id
    ({"$id": "http://example.com/root.json", "$ref": "item.json", "$defs": {"i": {"$id": "item.json", "type": "integer"}}}, 1, "x"),
    # a draft-07 pointer into a tuple `items` (llama.cpp reads a tuple as exactly that many items,
    # so Ollama is sent the array without it: nothing left to constrain)
    ({"$schema": DRAFT7, "type": "array", "items": [{"type": "integer"}, {"$ref": "#/items/0"}]}, [1, 2], None),
])
def test_ollama_gets_refs_that_resolve_where_they_are_sent(schema, good, bad):
    plan = build_plan(schema, OLLAMA)
    assert _refs_resolve(plan.schema) == [] and llama_cpp_problems(plan.schema) == []
    assert plan.downgrades == ([] if bad is not None else ["(root): prefixItems removed (not enforced by ollama; checked locally)"])
    validator = Draft202012Validator(llama_cpp_reading(plan.schema)[0])
    wrap = (lambda v: {"result": v}) if plan.envelope else (lambda v: v)
    assert validator.is_valid(wrap(good))
    assert bad is None or not validator.is_valid(wrap(bad))  # the ref still constrains: it was not just dropped


def test_schema_check_and_builder_escape_the_pointers_they_print():
    from vance_cli.errors import InvalidSchema
    from vance_cli.schema.check import check_schema
    from vance_cli.structure.builder import _draft_check

    with pytest.raises(InvalidSchema, match=r"at /properties/a~1b~0/type"):
        check_schema({"properties": {"a/b~": {"type": 5}}})
    assert _draft_check({"schema": {"properties": {"a/b~": {"type": 5}}}})[0].startswith("/schema/properties/a~1b~0/type:")


def test_downgrade_lines_escape_the_pointers_they_print():
    # Ollama (as written): a `not` with a format under a property named "a/b~".
    schema = {"type": "object", "properties": {"a/b~": {"type": "string", "not": {"format": "email"}}}}
    plan = build_plan(schema, OLLAMA)
    assert any(line.startswith("/properties/a~1b~0: not removed") for line in plan.downgrades), plan.downgrades
    # A definition named with a slash, sent to Ollama: the line points into $defs with it escaped.
    schema = {"$ref": "#/$defs/d", "$defs": {"d": {"type": "string", "not": {"format": "email"}}}}
    assert any(line.startswith("/$defs/d: not removed") for line in build_plan(schema, OLLAMA).downgrades)
    # OpenAI: an enum over the 15,000-character limit under "x/y".
    big = [f"value-{i:04d}-" + "z" * 60 for i in range(300)]
    plan = build_plan({"type": "object", "properties": {"x/y": {"enum": big}}, "required": ["x/y"]}, OPENAI)
    assert any(line.startswith("/properties/x~1y: enum of 300 values") for line in plan.downgrades), plan.downgrades


def _pet_union(extra: str) -> dict:
    from typing import Literal, Union

    from pydantic import BaseModel, ConfigDict, Field, create_model

    config = ConfigDict(extra=extra)
    cat = create_model("Cat", __config__=config, kind=(Literal["cat"], ...), lives=(int, 9))
    dog = create_model("Dog", __config__=config, kind=(Literal["dog"], ...), good_boy=(bool, True))
    pet: type[BaseModel] = create_model("Pet", pet=(Union[cat, dog], Field(discriminator="kind")))  # noqa: UP007
    return pet.model_json_schema()


def test_the_downgrade_lines_fix_keeps_a_pydantic_union_strict():
    """The reason line's advice holds: the same discriminated union turns strict off with open
    models and stays strict with extra="forbid" (additionalProperties: false on each alternative)."""
    open_plan = build_plan(_pet_union("ignore"), OPENAI)
    assert not open_plan.strict
    assert "additionalProperties: false on the alternative keeps strict" in open_plan.downgrades[0]
    assert sendable(open_plan, {"pet": {"kind": "cat", "good_boy": "x"}})
    closed = _pet_union("forbid")
    plan = build_plan(closed, OPENAI)
    assert plan.strict and openai_strict_problems(plan.schema) == []
    assert sendable(plan, {"pet": {"kind": "dog", "good_boy": False}})
    reply, _ = provider_reply({"pet": {"kind": "cat"}}, plan.schema, envelope=plan.envelope)
    assert reply == {"pet": {"kind": "cat", "lives": None}}  # no envelope: the root is an object
    assert strip_injected_nulls(reply, closed) == {"pet": {"kind": "cat"}}
