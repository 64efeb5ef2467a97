"""Issue 15, second review (findings 5-8): the converter's cost on ref chains, object keywords on
non-object nodes, keys only an `if` names, and strict kept where a sound strict schema exists."""

from __future__ import annotations

import pytest

from tests.structure.strict_rules import openai_strict_problems
from tests.structure.suite_driver import FAMILIES, Case, Problems, run_case
from vance_cli.llm.output.plan import build_plan

# Two allOf parts each with an if/then: the second `then` cannot be merged into the first, so it is
# folded back as optional properties -- onto an integer node, which then got properties,
# additionalProperties and required (OpenAI strict: "unsupported keywords for integer").
INTEGER_WITH_FOLDED_THENS = {
    "type": "object",
    "required": ["c"],
    "properties": {"c": {"allOf": [
        {"type": "integer", "if": {"minimum": 1}, "then": {"properties": {"a": {"type": "string"}}}},
        {"if": {"minimum": 2}, "then": {"properties": {"b": {"type": "string"}}}},
    ]}},
}


@pytest.mark.parametrize("family", ["openai", "other+strict", "anthropic+strict"])
def test_a_non_object_node_gets_no_object_keywords(family):
    plan = build_plan(INTEGER_WITH_FOLDED_THENS, FAMILIES[family])
    assert plan.strict
    assert openai_strict_problems(plan.schema) == []
    assert plan.schema["properties"]["c"] == {"type": "integer"}
    problems = Problems()
    run_case(Case("int-thens", INTEGER_WITH_FOLDED_THENS, [("v", {"c": 3}, True), ("x", {"c": "3"}, False)]), FAMILIES[family], problems)
    assert all(v == [] for v in problems.found.values()), problems.found


# {"a": "x", "d": true} is valid: "a" is named only by the `if` (which fails, so nothing applies).
# The suite driver counts a key an `if` names as declared; the strict plan closed the root to b, d.
IF_ONLY_KEY = {
    "type": "object",
    "properties": {"b": {"type": "integer"}, "d": {"type": "boolean"}},
    "required": ["d"],
    "if": {"properties": {"a": {"const": 1}}, "required": ["a"]},
    "then": {"type": "object"},
}


@pytest.mark.parametrize("family", ["openai", "other+strict", "anthropic+strict", "gemini"])
def test_a_key_only_an_if_names_can_be_sent(family):
    problems = Problems()
    run_case(Case("if-key", IF_ONLY_KEY, [("v", {"a": "x", "d": True}, True), ("w", {"a": 1, "d": False}, True)]), FAMILIES[family], problems)
    assert all(v == [] for v in problems.found.values()), problems.found


def test_a_key_an_if_names_and_every_case_covers_stays_strict():
    """Where then and else both give the `if`'s key a schema, the closed object declares it with
    those (strict stays on) and a value either allows comes through."""
    schema = {
        "type": "object",
        "properties": {"d": {"type": "boolean"}},
        "required": ["d"],
        "if": {"properties": {"a": {"const": 1}}, "required": ["a"]},
        "then": {"properties": {"a": {"type": "integer"}}},
        "else": {"properties": {"a": {"type": "string"}}},
    }
    plan = build_plan(schema, FAMILIES["openai"])
    assert plan.strict and "a" in plan.schema["properties"]
    problems = Problems()
    run_case(Case("if-key-covered", schema, [("v", {"a": "x", "d": True}, True), ("w", {"a": 1, "d": False}, True)]), FAMILIES["openai"], problems)
    assert all(v == [] for v in problems.found.values()), problems.found
