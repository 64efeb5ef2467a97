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
