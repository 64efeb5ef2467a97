"""The converter's cases from issue 6, one by one (the corpus test covers them at scale)."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from tests.structure.conftest import ANTHROPIC, GEMINI, OPENAI
from tests.structure.instances import provider_reply
from tests.structure.strict_rules import openai_depth, openai_strict_problems, wellformed_problems
from vance_cli.llm.output.plan import build_plan, strip_injected_nulls
from vance_cli.schema.check import check_schema
from vance_cli.schema.reasons import error_lines, make_validator
from vance_cli.structure.errors import InvalidSchema

DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT4 = "http://json-schema.org/draft-04/schema#"


def target(plan):
    """The provider-side schema of the target inside the envelope (refs resolved)."""
    node = plan.schema["properties"]["result"]
    node = node["anyOf"][0] if "anyOf" in node else node
    while "$ref" in node:
        node = plan.schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def round_trips(schema, plan, value):
    """``value`` (valid for ``schema``) passes the provider schema as a provider sends it, and reads back valid."""
    assert make_validator(schema).is_valid(value)
    reply, dropped = provider_reply(value, plan.schema, envelope=plan.envelope)
    assert Draft202012Validator(plan.schema).is_valid(reply), list(Draft202012Validator(plan.schema).iter_errors(reply))[:2]
    assert dropped == []
    data = reply["result"] if plan.envelope else reply
    back = strip_injected_nulls(data, schema)
    assert make_validator(schema).is_valid(back)
    return back


def strict_ok(plan):
    assert plan.strict is True, plan.downgrades[:1]
    assert openai_strict_problems(plan.schema) == []
    assert wellformed_problems(plan.schema) == []


# -- crash: a closed object without properties ------------------------------------------------


def test_a_closed_object_without_properties_does_not_crash():
    schema = {"type": "object", "properties": {"meta": {"type": "object", "additionalProperties": False}}, "required": ["meta"]}
    plan = build_plan(schema, OPENAI, allow_need=True)
    strict_ok(plan)
    assert target(plan)["properties"]["meta"] == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    round_trips(schema, plan, {"meta": {}})


def test_a_closed_object_whose_keys_are_patterns_is_not_sent_as_an_empty_object():
    schema = {"type": "object", "properties": {"env": {"type": "object", "patternProperties": {"^[A-Z]+$": {"type": "string"}}, "additionalProperties": False}}}
    strict = build_plan(schema, OPENAI, allow_need=True)
    assert strict.strict is False and "only given by patterns" in strict.downgrades[0]
    loose = build_plan(schema, GEMINI, allow_need=True)
    round_trips(schema, loose, {"env": {"HOME": "/root"}})


# -- strict outputs OpenAI rejects --------------------------------------------------------------


def test_a_ref_with_a_description_is_inlined_for_openai():
    schema = {
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/Address", "description": "Where the person lives"}},
        "required": ["home"],
        "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    }
    plan = build_plan(schema, OPENAI, allow_need=True)
    strict_ok(plan)
    home = target(plan)["properties"]["home"]
    assert home["description"] == "Where the person lives" and home["properties"]["city"] == {"type": "string"}
    round_trips(schema, plan, {"home": {"city": "Berlin"}})


def test_a_recursive_ref_keeps_the_ref_and_drops_its_annotations():
    schema = {
        "$defs": {"Node": {"type": "object", "properties": {"label": {"type": "string"}, "next": {"$ref": "#/$defs/Node", "description": "the next node"}}, "required": ["label"]}},
        "$ref": "#/$defs/Node",
    }
    plan = build_plan(schema, OPENAI, allow_need=True)
    strict_ok(plan)
    assert any(n.get("$ref") == "#/$defs/Node" for n in _nodes(plan.schema))
    round_trips(schema, plan, {"label": "a", "next": {"label": "b", "next": {"label": "c", "next": {"label": "d"}}}})


def test_a_constraint_moved_into_a_description_never_sits_beside_a_ref():
    schema = {"type": "object", "properties": {"code": {"$ref": "#/$defs/s", "minLength": 2}}, "required": ["code"], "$defs": {"s": {"type": "string"}}}
    plan = build_plan(schema, OPENAI, allow_need=False)
    strict_ok(plan)
    assert plan.schema["properties"]["code"] == {"type": "string", "description": "Constraints: minLength=2."}


def _chain(levels: int) -> dict:
    defs = {f"L{i}": {"type": "object", "properties": {"next": {"$ref": f"#/$defs/L{i + 1}"}}, "required": ["next"]} for i in range(levels)}
    defs[f"L{levels}"] = {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/L0"}


def test_depth_is_counted_through_refs_and_the_envelope():
    deep = build_plan(_chain(15), OPENAI, allow_need=True)
    assert deep.strict is False
    assert "counted through $ref and the reply envelope" in deep.downgrades[0]
    shallow = build_plan(_chain(5), OPENAI, allow_need=True)
    strict_ok(shallow)
    assert openai_depth(shallow.schema) == 7  # 5 levels + result + its nullable anyOf


def test_an_enum_over_openais_limits_is_dropped_and_strict_stays():
    big = {"type": "string", "enum": [f"v{i}" for i in range(1200)]}
    long = {"type": "string", "enum": [f"{i:04d}" + "x" * 60 for i in range(300)]}
    schema = {"type": "object", "properties": {"a": big, "b": long, "c": {"enum": ["p", "q"]}}, "required": ["a", "b", "c"]}
    plan = build_plan(schema, OPENAI, allow_need=False)
    strict_ok(plan)
    props = plan.schema["properties"]
    assert props["a"] == {"type": "string"} and props["b"] == {"type": "string"} and props["c"]["enum"] == ["p", "q"]
    joined = "\n".join(plan.downgrades)
    assert "/properties/a: enum of 1200 values removed" in joined
    assert "/properties/b: enum of 300 values" in joined and "15000 characters" in joined
    round_trips(schema, plan, {"a": "v7", "b": "0001" + "x" * 60, "c": "q"})


def test_enums_over_the_schema_wide_count_are_dropped_largest_first():
    schema = {"type": "object", "properties": {k: {"type": "integer", "enum": list(range(n))} for k, n in (("a", 600), ("b", 500), ("c", 10))}}
    plan = build_plan(schema, OPENAI, allow_need=False)
    strict_ok(plan)
    assert "enum" not in plan.schema["properties"]["a"]
    assert len(plan.schema["properties"]["b"]["enum"]) == 501  # 500 values and the injected null


def test_too_many_properties_turn_strict_off_with_the_count():
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(5001)}}
    plan = build_plan(schema, OPENAI, allow_need=False)
    assert plan.strict is False and "5001 properties (openai takes 5000)" in plan.downgrades[0]


# -- strict schemas no answer could satisfy ------------------------------------------------------

IF_THEN_ELSE = {
    "type": "object",
    "properties": {"kind": {"enum": ["card", "bank"]}},
    "required": ["kind"],
    "if": {"properties": {"kind": {"const": "card"}}},
    "then": {"properties": {"number": {"type": "string", "pattern": "^[0-9]{4}$"}}, "required": ["number"]},
    "else": {"properties": {"iban": {"type": "string"}}, "required": ["iban"]},
}


@pytest.mark.parametrize("caps", [OPENAI, ANTHROPIC.model_copy(update={"strict_json_schema": True})], ids=["openai", "anthropic"])
def test_properties_of_if_then_else_stay_declared(caps):
    # "number" is declared by `then` only: where `else` applies it may hold any value, which a
    # closed strict object could not hold ({"kind": "bank", "iban": "DE00", "number": 5}).
    plan = build_plan(IF_THEN_ELSE, caps, allow_need=True)
    assert plan.strict is False
    assert plan.downgrades[0].startswith("strict output off: (root) is an object that allows any value for 'number'")
    round_trips(IF_THEN_ELSE, plan, {"kind": "bank", "iban": "DE00", "number": 5})
    # With a schema for every other key, strict holds and the branches' keys stay declared.
    closed = {**IF_THEN_ELSE, "additionalProperties": {"type": "string"}}
    plan = build_plan(closed, caps, allow_need=True)
    assert plan.strict is True
    assert {"kind", "number", "iban"} <= set(target(plan)["properties"])
    assert "(root): then removed (not enforced by" in "\n".join(plan.downgrades)
    round_trips(closed, plan, {"kind": "card", "number": "1234"})
    round_trips(closed, plan, {"kind": "bank", "iban": "DE00", "number": "5"})


def test_allof_with_a_ref_is_merged():
    schema = {
        "allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"extra": {"type": "string"}}, "required": ["extra"]}],
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
    }
    plan = build_plan(schema, OPENAI, allow_need=True)
    strict_ok(plan)
    assert set(target(plan)["properties"]) == {"id", "extra"}
    assert not any("allOf" in line for line in plan.downgrades)
    round_trips(schema, plan, {"id": 1, "extra": "x"})


def test_dependent_schemas_keep_their_properties():
    schema = {
        "type": "object",
        "properties": {"card": {"type": "string"}},
        "dependentSchemas": {"card": {"properties": {"billing": {"type": "string"}}, "required": ["billing"]}},
    }
    # Without "card", "billing" may hold any value: strict off rather than a closed object that
    # gives it the dependent schema's string.
    plan = build_plan(schema, OPENAI, allow_need=True)
    assert plan.strict is False and "any value for 'billing'" in plan.downgrades[0]
    round_trips(schema, plan, {"billing": 5})
    closed = {**schema, "additionalProperties": {"type": "string"}}
    plan = build_plan(closed, OPENAI, allow_need=True)
    strict_ok(plan)
    assert "billing" in target(plan)["properties"]
    round_trips(closed, plan, {"card": "4111", "billing": "Main St"})


def test_anyof_beside_properties_is_distributed_into_the_alternatives():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "email": {"type": "string"}, "phone": {"type": "string"}},
        "required": ["name"],
        "anyOf": [{"required": ["email"]}, {"required": ["phone"]}],
    }
    plan = build_plan(schema, OPENAI, allow_need=True)
    strict_ok(plan)
    round_trips(schema, plan, {"name": "a", "email": "e"})
    round_trips(schema, plan, {"name": "a", "phone": "p"})
    round_trips(schema, plan, {"name": "a", "email": "e", "phone": "p"})


def test_alternatives_that_declare_their_own_keys_beside_properties_turn_strict_off():
    # The first alternative leaves "phone" open: {"name": "a", "email": "e", "phone": 5} is valid,
    # and a strict schema could only give "phone" the second alternative's string there.
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "anyOf": [{"properties": {"email": {"type": "string"}}, "required": ["email"]}, {"properties": {"phone": {"type": "string"}}, "required": ["phone"]}],
    }
    plan = build_plan(schema, OPENAI, allow_need=True)
    assert plan.strict is False and "alternative 0 allows any value for 'phone'" in plan.downgrades[0]
    round_trips(schema, plan, {"name": "a", "email": "e", "phone": 5})
    round_trips(schema, plan, {"name": "a", "phone": "p"})


# -- drafts ---------------------------------------------------------------------------------------


def test_draft7_dependencies_are_honoured_not_ignored():
    schema = {
        "$schema": DRAFT7,
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "string"}},
        "dependencies": {"a": ["b"], "c": {"properties": {"d": {"type": "string"}}, "required": ["d"]}},
    }
    check_schema(schema)
    assert error_lines(schema, {"a": 1}) != []  # b is required when a is present
    assert error_lines(schema, {"c": "x"}) != []  # d is required when c is present
    plan = build_plan(schema, OPENAI, allow_need=True)
    # Without "c", "d" may hold any value ({"d": 5}): not strict (a closed object would give "d"
    # the dependency's string), and the dependencies are checked locally.
    assert plan.strict is False and "any value for 'd'" in plan.downgrades[0]
    joined = "\n".join(plan.downgrades)
    assert "dependentRequired removed" in joined and "dependentSchemas removed" in joined
    round_trips(schema, plan, {"a": 1, "b": 2, "c": "x", "d": "y"})
    round_trips(schema, plan, {"d": 5})
    closed = {**schema, "additionalProperties": {"type": "string"}}
    plan = build_plan(closed, OPENAI, allow_need=True)
    strict_ok(plan)
    assert "d" in target(plan)["properties"]
    round_trips(closed, plan, {"a": 1, "b": 2, "c": "x", "d": "y"})


def test_draft4_schemas_are_checked_and_validated_as_draft4():
    schema = {"$schema": DRAFT4, "type": "object", "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}}, "required": ["n"]}
    check_schema(schema)  # a boolean exclusiveMinimum is invalid in 2020-12
    assert error_lines(schema, {"n": 0}) and not error_lines(schema, {"n": 0.5})
    plan = build_plan(schema, OPENAI, allow_need=False)
    strict_ok(plan)
    assert plan.schema["properties"]["n"] == {"type": "number", "exclusiveMinimum": 0}


def test_draft7_tuples_keep_their_meaning():
    schema = {"$schema": DRAFT7, "type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False}
    check_schema(schema)
    assert not error_lines(schema, ["a", 1]) and error_lines(schema, ["a", 1, 2])
    plan = build_plan(schema, OPENAI, allow_need=False)
    strict_ok(plan)
    result = plan.schema["properties"]["result"]
    assert result["maxItems"] == 2 and result["items"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    round_trips(schema, plan, ["a", 1])


def test_no_schema_declared_means_2020_12_and_messages_name_the_draft():
    with pytest.raises(InvalidSchema, match=r"Draft 2020-12 \(no \$schema given\)"):
        check_schema({"items": [{"type": "string"}]})  # tuple items are not 2020-12
    with pytest.raises(InvalidSchema, match=r"\(Draft 7\)") as exc:
        check_schema({"$schema": "https://json-schema.org/draft-07/schema", "type": 5})
    assert '"$schema"' in exc.value.hint


# -- small rewrites that went wrong ---------------------------------------------------------------


def test_closing_an_open_object_is_reported():
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "inner": {"type": "object", "properties": {"b": {"type": "string"}}}}}
    plan = build_plan(schema, OPENAI, allow_need=False)
    strict_ok(plan)
    closing = [line for line in plan.downgrades if "additionalProperties set to false" in line]
    assert closing == ["(root), /properties/inner: additionalProperties set to false (keys the schema does not declare are not produced)"]


def test_a_single_item_allof_wrapping_a_recursive_ref_keeps_the_ref():
    schema = {
        "$defs": {"Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"allOf": [{"$ref": "#/$defs/Node"}], "description": "child"}}}}},
        "allOf": [{"$ref": "#/$defs/Node"}],
    }
    for caps in (OPENAI, GEMINI):
        plan = build_plan(schema, caps, allow_need=True)
        assert not any("allOf" in line and "removed" in line for line in plan.downgrades), plan.downgrades
        assert any(n.get("$ref") == "#/$defs/Node" for n in _nodes(plan.schema))
        round_trips(schema, plan, {"kids": [{"kids": [{"kids": [{"kids": []}]}]}]})


@pytest.mark.parametrize(
    ("node", "enum"),
    [({"const": "x", "enum": ["x", "y"]}, ["x"]), ({"const": "x", "enum": ["y"]}, ["x"]), ({"const": True, "enum": [1]}, [True])],
)
def test_const_with_enum_never_becomes_an_empty_enum(node, enum):
    plan = build_plan({"type": "object", "properties": {"v": node}, "required": ["v"]}, OPENAI, allow_need=False)
    assert plan.schema["properties"]["v"]["enum"] == enum
    assert openai_strict_problems(plan.schema) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"a": {"$anchor": "foo", "type": "string"}}, "type": "object", "properties": {"v": {"$ref": "#foo"}}, "required": ["v"]},
        {"$schema": DRAFT7, "definitions": {"a": {"$id": "#foo", "type": "string"}}, "type": "object", "properties": {"v": {"$ref": "#foo"}}, "required": ["v"]},
        {"$id": "https://example.com/s.json", "$defs": {"a": {"type": "string"}}, "type": "object", "properties": {"v": {"$ref": "https://example.com/s.json#/$defs/a"}}, "required": ["v"]},
        {"type": "object", "properties": {"v": {"$ref": "#/components/text"}}, "required": ["v"], "components": {"text": {"type": "string"}}},
    ],
    ids=["anchor", "draft7-anchor", "base-uri", "pointer-into-components"],
)
def test_refs_resolve_like_the_validator_resolves_them(schema):
    check_schema(schema)
    plan = build_plan(schema, OPENAI, allow_need=True)
    strict_ok(plan)
    round_trips(schema, plan, {"v": "text"})


def test_a_schema_nested_85_levels_is_a_clear_error_not_a_recursion_error():
    schema: dict = {"type": "string"}
    for _ in range(85):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    with pytest.raises(InvalidSchema, match=r"nests 171 levels deep; at most 64") as exc:
        check_schema(schema)
    assert "$defs" in exc.value.hint
    for depth in (85, 400):
        deep: dict = {"type": "string"}
        for _ in range(depth):
            deep = {"type": "object", "properties": {"a": deep}}
        with pytest.raises(InvalidSchema, match=r"at most 64"):
            build_plan(deep, OPENAI, allow_need=True)  # called directly: the same clear error


def test_a_ref_loop_is_found_before_validation_ever_runs():
    with pytest.raises(InvalidSchema, match=r"a \$ref loop"):
        check_schema({"not": {"$ref": "#"}})  # probing it used to crash inside `referencing`
    with pytest.raises(InvalidSchema, match=r"a \$ref loop"):
        check_schema({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"})
    check_schema({"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}})  # descends: fine


def test_a_value_nested_too_deep_is_an_error_line_not_a_crash():
    schema = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    value: dict = {}
    for _ in range(300):
        value = {"kids": [value]}
    assert error_lines(schema, value) == ["(root): the value nests 601 levels deep; at most 100 levels are accepted"]


def test_enum_errors_list_a_few_values_and_count_the_rest():
    schema = {"enum": [f"value-{i}" for i in range(500)]}
    [line] = error_lines(schema, "nope")
    assert "(488 more left out)" in line and len(line) < 600


def test_the_meta_schema_check_runs_once_per_schema(monkeypatch):
    from vance_cli.schema import dialects
    from vance_cli.structure.service import parse_inline

    calls = []
    real = dialects.meta_validator

    def counted(cls):
        calls.append(cls.__name__)
        return real(cls)

    monkeypatch.setattr(dialects, "meta_validator", counted)
    schema = {"$schema": DRAFT7, "type": "object"}
    parse_inline(schema)  # what the CLI does
    parse_inline(schema)  # what the service does with the same object
    assert calls == ["Draft7Validator"]


def _nodes(schema):
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def test_the_callers_schema_is_left_as_it_was():
    schemas = [IF_THEN_ELSE, _chain(3)]
    before = json.dumps(schemas, sort_keys=True)
    for schema in schemas:
        for caps in (OPENAI, GEMINI, ANTHROPIC):
            build_plan(schema, caps, allow_need=True)
    assert json.dumps(schemas, sort_keys=True) == before
