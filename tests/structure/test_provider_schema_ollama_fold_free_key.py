"""Issue 15, review 15d finding 3: a non-strict plan that spreads an anyOf folds the removed
if/then parts into each alternative. Where some case leaves a key free (no ``if`` holds), the fold
must send any value for it, not the thens' schemas: Ollama's grammar (llama.cpp) would otherwise
forbid a valid answer. Where every case gives the key a schema, that schema is still sent."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest
from jsonschema import Draft202012Validator

from tests.structure.strict_rules import llama_cpp_problems, llama_cpp_reading
from tests.structure.suite_driver import FAMILIES
from vance_cli.llm.output.plan import build_plan
from vance_cli.schema.reasons import make_validator

OLLAMA = FAMILIES["ollama"]


def _then(value: str) -> dict:
    return {
        "if": {"properties": {"t": {"const": value}}, "required": ["t"]},
        "then": {"properties": {"x": {"type": ["string", "null"]}}},
    }


def _schema(*, t_required: bool) -> dict:
    schema = {
        "type": "object",
        "properties": {"t": {"enum": ["a", "b"]}},
        "anyOf": [{"required": ["t"]}, {"required": ["y"]}],
        "allOf": [_then("a"), _then("b")],
    }
    if t_required:
        schema["required"] = ["t"]
    return schema


def _grammar_takes(schema: dict, answer: dict) -> bool:
    plan = build_plan(schema, OLLAMA, name="x")
    assert llama_cpp_problems(plan.schema) == [], plan.schema
    sent = {"result": answer} if plan.envelope else answer
    return Draft202012Validator(llama_cpp_reading(plan.schema)[0]).is_valid(sent)


@pytest.mark.parametrize("answer", [{"y": 1, "x": 5}, {"y": 1, "x": [1]}, {"t": "a", "x": "s"}, {"y": 1, "x": None}])
def test_a_key_free_when_no_if_holds_is_not_narrowed_for_ollama(answer):
    schema = _schema(t_required=False)
    assert make_validator(schema).is_valid(answer)
    assert _grammar_takes(schema, answer), build_plan(schema, OLLAMA, name="x").schema


def test_a_key_every_case_gives_a_schema_keeps_it_for_ollama():
    # t is required and each of its values has a then for x: every valid answer's x is a
    # string or null, so the fold still sends that schema (the grammar guides the model)
    schema = _schema(t_required=True)
    assert make_validator(schema).is_valid({"t": "a", "x": "s"})
    assert _grammar_takes(schema, {"t": "a", "x": "s"})
    assert not make_validator(schema).is_valid({"t": "a", "x": 5})
    assert not _grammar_takes(schema, {"t": "a", "x": 5})
