"""Text mode: the schema builder, its validation, the confidence gate and the cache."""

from __future__ import annotations

import json

import pytest

from vance_cli.config.scopes import Scopes
from vance_cli.structure.builder import (
    BUILDER_SYSTEM_PROMPT,
    SchemaBuilder,
    SchemaCache,
    answer_schema,
    cache_key,
    load_meta_schema,
)

DESCRIPTION = "I need name (string), description (string), and priority (integer 1-5) — all in English."
BUILT = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["name", "description", "priority"],
    "additionalProperties": False,
}


def answer(schema=BUILT, confidence=0.95, questions=()):
    return {"schema": schema, "confidence": confidence, "clarifyingQuestions": list(questions)}


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def cache():
    return SchemaCache(Scopes.discover().data_dir(), ttl_days=7, clock=Clock())


def test_meta_schema_is_a_valid_2020_12_schema_and_accepts_the_bundled_ones():
    from jsonschema import Draft202012Validator

    meta = load_meta_schema()
    Draft202012Validator.check_schema(meta)
    v = Draft202012Validator(meta, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert v.is_valid(BUILT)
    assert not v.is_valid({"type": "object", "properties": {"a": {"type": "string", "allOf": []}}})
    assert not v.is_valid({"type": "array", "items": {"type": "string"}})  # root must be an object


async def test_builder_returns_the_schema_with_its_confidence(scripted, cache):
    model = scripted(answer())
    result = await SchemaBuilder(model, model_name="m", cache=cache).build(DESCRIPTION)
    assert result.status == "ok" and result.schema == BUILT and result.confidence == 0.95
    assert result.cached is False and result.iterations == 1
    req = model.requests[0]
    assert req.messages[0].content == BUILDER_SYSTEM_PROMPT
    assert req.messages[0].content.startswith("Convert the following description to JSON Schema 2020-12. Output only the schema, no prose.")
    assert req.messages[-1].content == DESCRIPTION
    # structured output constrained by the meta-schema
    assert req.response_format["type"] == "json_schema"
    assert "objectNode" in json.dumps(req.response_format["json_schema"]["schema"])


async def test_invalid_builder_output_is_retried_once_then_stale(scripted, cache):
    bad = answer(schema={"type": "object", "properties": {"a": {"type": "strin"}}})
    model = scripted(bad, bad)
    result = await SchemaBuilder(model, model_name="m", cache=cache).build(DESCRIPTION)
    assert result.status == "stale" and result.iterations == 2 and len(model.requests) == 2
    assert result.errors and all(e.startswith("schema builder: ") for e in result.errors)
    assert "The previous output did not conform to the schema" in model.requests[1].messages[-1].content
    assert cache.get(DESCRIPTION, "m") is None


async def test_second_attempt_can_recover(scripted, cache):
    bad = answer(schema={"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}})
    model = scripted(bad, answer())
    result = await SchemaBuilder(model, model_name="m", cache=cache).build(DESCRIPTION)
    assert result.status == "ok" and result.iterations == 2


async def test_low_confidence_is_need_more_input(scripted, cache):
    model = scripted(answer(confidence=0.5))
    result = await SchemaBuilder(model, model_name="m", cache=cache, threshold=0.8).build("some fields")
    assert result.status == "need-more-input"
    assert "confidence 0.50 < 0.8" in result.need
    assert cache.get("some fields", "m") is None  # only accepted schemas are cached


async def test_a_clarifying_question_is_the_need_even_with_high_confidence(scripted, cache):
    model = scripted(answer(confidence=0.99, questions=["Is priority 1 the highest or the lowest?"]))
    result = await SchemaBuilder(model, model_name="m", cache=cache).build(DESCRIPTION)
    assert result.status == "need-more-input"
    assert result.need == "Is priority 1 the highest or the lowest?"


async def test_confidence_exactly_at_threshold_passes(scripted, cache):
    model = scripted(answer(confidence=0.8))
    result = await SchemaBuilder(model, model_name="m", cache=cache, threshold=0.8).build(DESCRIPTION)
    assert result.status == "ok"


async def test_cache_hit_makes_no_builder_call(scripted, cache):
    first = scripted(answer())
    await SchemaBuilder(first, model_name="m", cache=cache).build(DESCRIPTION)
    made = []

    def factory():
        made.append(1)
        return scripted()

    # Same description up to whitespace: a hit, and the model is never even made.
    result = await SchemaBuilder(factory, model_name="m", cache=cache).build("  " + DESCRIPTION.replace(" ", "   ") + "\n")
    assert result.status == "ok" and result.cached is True and result.schema == BUILT
    assert made == [] and result.usage.calls == 0


async def test_cache_is_keyed_by_builder_model(scripted, cache):
    await SchemaBuilder(scripted(answer()), model_name="m1", cache=cache).build(DESCRIPTION)
    model = scripted(answer())
    result = await SchemaBuilder(model, model_name="m2", cache=cache).build(DESCRIPTION)
    assert result.cached is False and len(model.requests) == 1
    assert cache_key(DESCRIPTION, "m1") != cache_key(DESCRIPTION, "m2")
    assert cache_key("a  b", "m") == cache_key(" a b ", "m") != cache_key("A B", "m")


async def test_cache_entries_expire_after_the_ttl(scripted):
    clock = Clock()
    cache = SchemaCache(Scopes.discover().data_dir(), ttl_days=7, clock=clock)
    await SchemaBuilder(scripted(answer()), model_name="m", cache=cache).build(DESCRIPTION)
    clock.now += 7 * 86400 - 1
    assert cache.get(DESCRIPTION, "m") is not None
    clock.now += 2
    assert cache.get(DESCRIPTION, "m") is None
    model = scripted(answer())
    result = await SchemaBuilder(model, model_name="m", cache=cache).build(DESCRIPTION)
    assert result.cached is False and len(model.requests) == 1


def test_cache_lives_in_the_state_scope_tinydb_table(vance_home, cache):
    cache.put("d", "m", {"schema": BUILT, "confidence": 1.0, "clarifyingQuestions": []})
    data = json.loads((vance_home / "data" / "structure.json").read_text())
    (row,) = data["structure_schema_cache"].values()
    assert row["key"] == cache_key("d", "m") and row["model"] == "m" and row["schema"] == BUILT


def test_answer_schema_wraps_the_meta_schema():
    schema = answer_schema(load_meta_schema())
    assert schema["required"] == ["schema", "confidence", "clarifyingQuestions"]
    assert schema["properties"]["schema"] == {"$ref": "#/$defs/objectNode"}
