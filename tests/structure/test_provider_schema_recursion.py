"""A recursive $ref with asserting siblings (issue 15 review, finding 1): build_plan recursed
without end (RecursionError; `vance schemas plan` printed "internal error"). Cycles stay refs: the
siblings beside the recursive ref are dropped with a downgrade line (checked locally), or strict
goes off where dropping them would close out a key they declare."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from tests.structure.suite_driver import EXTRA_CASES, FAMILIES, Problems, run_case
from vance_cli.llm.output.plan import build_plan
from vance_cli.schema.check import check_schema

CASES = {
    # a hand-written tree: "type" beside the recursive "$ref" (OpenAI, the default family, crashed)
    "tree-type-beside-ref": {
        "$defs": {"Node": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"type": "object", "$ref": "#/$defs/Node"}}}}},
        "$ref": "#/$defs/Node",
    },
    # a linked list: "next" is an object or null, the object being the root
    "type-beside-anyOf-ref-root": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "next": {"type": "object", "anyOf": [{"$ref": "#"}, {"type": "null"}]}},
    },
    # the same through a definition
    "type-beside-anyOf-ref-def": {
        "$defs": {"N": {"type": "object", "properties": {"v": {"type": "integer"},
                                                           "next": {"type": "object", "anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}}}},
        "$ref": "#/$defs/N",
    },
    # $ref with an asserting sibling to a recursive target (the issue's "$ref with siblings")
    "ref-with-minProperties": {"type": "object", "properties": {"next": {"$ref": "#", "minProperties": 1}}},
    "ref-with-additionalProperties-false": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "child": {"$ref": "#", "additionalProperties": False}},
    },
    "allOf-ref-root-beside-type": {"type": "object", "properties": {"next": {"type": "object", "allOf": [{"$ref": "#"}]}}},
}


@pytest.mark.parametrize("family", ["openai", "anthropic", "anthropic+strict", "gemini", "gemini+strict", "other+strict"])
@pytest.mark.parametrize("name", list(CASES))
def test_build_plan_never_recurses_without_end(name, family):
    schema = CASES[name]
    check_schema(schema)  # a valid schema
    plan = build_plan(schema, FAMILIES[family], allow_need=True)  # RecursionError before
    assert plan.schema is not None


def test_the_cycle_stays_a_ref_and_the_dropped_sibling_is_said():
    plan = build_plan(CASES["tree-type-beside-ref"], FAMILIES["openai"])
    assert plan.strict
    items = plan.schema["$defs"]["Node"]["properties"]["children"]["anyOf"][0]["items"]
    assert "#/$defs/Node" in json.dumps(items)
    # "type": "object" beside it is what the target says itself: dropped without a line
    other = build_plan(CASES["ref-with-minProperties"], FAMILIES["other+strict"])
    assert any("minProperties beside the recursive $ref # removed" in line for line in other.downgrades)


def test_a_sibling_declaring_a_key_the_target_does_not_turns_strict_off():
    schema = {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#", "properties": {"w": {"type": "string"}}}}}
    plan = build_plan(schema, FAMILIES["openai"])
    assert not plan.strict and "'w'" in plan.strict_off[1]


@pytest.mark.parametrize("case", EXTRA_CASES, ids=lambda c: c.where)
def test_the_driver_cases_of_recursive_refs_with_siblings(case):
    results = {name: Problems() for name in FAMILIES}
    for allow_need in (False, True):
        for name, caps in FAMILIES.items():
            run_case(case, caps, results[name], allow_need=allow_need)
    found = [f"[{name}] {kind}: {line}" for name, p in results.items() for kind, lines in p.found.items() for line in lines]
    assert found == []
    assert sum(p.plans for p in results.values()) == 2 * len(FAMILIES)


def test_schemas_plan_prints_a_plan_not_an_internal_error():
    from vance_cli.cli import schemas_cmd

    app = typer.Typer()
    schemas_cmd.register(app)
    result = CliRunner().invoke(
        app, ["schemas", "plan", json.dumps(CASES["ref-with-additionalProperties-false"]), "--model", "gemini/gemini-2.0-flash"]
    )
    assert "internal error" not in (result.stderr or "") + result.output
    assert result.exit_code == 0
