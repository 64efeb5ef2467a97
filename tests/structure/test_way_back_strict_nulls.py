"""Issue 15 review, finding 2: valid answers that a strict provider must send with injected
nulls come back from the way back (strip_injected_nulls) as INVALID values ("mangled"), so the
structure call fails validation on every try.

"""

from __future__ import annotations

import pytest

from tests.structure.conftest import OPENAI
from tests.structure.instances import provider_reply
from tests.structure.suite_driver import FAMILIES, Case, Problems, run_case
from vance_cli.llm.output.json_call import call_for_json
from vance_cli.llm.output.plan import build_plan
from vance_cli.messages import Message

# 1. A property whose object schema is in `properties` and which a `then` (or allOf part, else,
#    dependentSchemas) mentions again: strip_injected_nulls sees two schemas for the key and does
#    not recurse into its value, so the nested injected nulls stay.
CONDITIONAL_REQUIRED = {
    "type": "object",
    "properties": {
        "kind": {"enum": ["A", "B"]},
        "p": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}},
    },
    "required": ["kind", "p"],
    "if": {"properties": {"kind": {"const": "A"}}},
    "then": {"properties": {"p": {"required": ["x"]}}},
}
# 2. A key that only an anyOf/oneOf inside a removed branch declares: the walker folds it into the
#    closed object (Merger.declared looks into anyOf/oneOf), the way back does not (its declared()
#    does not), so the null is kept where additionalProperties forbids it.
BRANCH_ANYOF_KEY = {
    "type": "object",
    "properties": {"a": {"type": "integer"}},
    "additionalProperties": {"type": "string"},
    "if": {"required": ["a"]},
    "then": {"anyOf": [{"properties": {"d": {"type": "string"}}}, {"type": "object"}]},
}
# 3. A parent closed by additionalProperties: false whose anyOf alternative declares a nullable key:
#    the key can never be present, but strict requires it and the null comes back.
CLOSED_PARENT_ALT_KEY = {
    "type": "object",
    "properties": {"c": {"type": "string"}},
    "additionalProperties": False,
    "anyOf": [{"properties": {"a": {"type": ["string", "null"]}}}, {"type": "object"}],
}

ROWS = [
    ("conditional-required", CONDITIONAL_REQUIRED, [{"kind": "B", "p": {"y": 1}}, {"kind": "A", "p": {"x": 1}}]),
    ("branch-anyOf-key", BRANCH_ANYOF_KEY, [{"a": 1}, {}]),
    ("closed-parent-alt-key", CLOSED_PARENT_ALT_KEY, [{}, {"c": "x"}]),
]


@pytest.mark.parametrize("family", ["openai", "other+strict"])
@pytest.mark.parametrize("name, schema, valid", ROWS, ids=[r[0] for r in ROWS])
def test_a_faithful_strict_answer_comes_back_valid(name, schema, valid, family):
    problems = Problems()
    run_case(Case(name, schema, [(f"v{i}", v, True) for i, v in enumerate(valid)]), FAMILIES[family], problems, allow_need=True)
    assert problems.found["mangled"] == []


async def test_call_for_json_end_to_end_the_conditional_schema(scripted):
    """The model sends exactly what the strict provider schema makes it send for a valid answer."""
    plan = build_plan(CONDITIONAL_REQUIRED, OPENAI)
    assert plan.strict
    reply, dropped = provider_reply({"kind": "B", "p": {"y": 1}}, plan.schema, envelope=plan.envelope)
    assert dropped == [] and reply == {"kind": "B", "p": {"x": None, "y": 1}}
    model = scripted(reply, reply, reply)
    out = await call_for_json(model, messages=[Message(role="user", content="B with y 1")], schema=CONDITIONAL_REQUIRED, max_loops=3)
    assert out.status == "ok", out  # today: every loop fails on /p/x: None is not of type 'integer'
    assert out.data == {"kind": "B", "p": {"y": 1}}


def test_a_valid_value_is_returned_as_it_is_and_an_invalid_one_is_not_made_valid():
    from vance_cli.llm.output.plan import strip_injected_nulls

    # a null the schema allows for a key it declares: kept (the value is valid with it)
    schema = {"type": "object", "properties": {"a": {"type": ["integer", "null"]}}, "additionalProperties": False}
    assert strip_injected_nulls({"a": None}, schema) == {"a": None}
    # a null of a key no schema declares is never dropped to make a value valid
    assert strip_injected_nulls({"zz": None}, schema) == {"zz": None}
    # nor one of a required key
    req = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert strip_injected_nulls({"a": None}, req) == {"a": None}
