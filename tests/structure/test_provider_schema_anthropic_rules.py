"""Anthropic's documented structured-outputs limits (issue 15 review, finding 3).

Anthropic "JSON Schema limitations" (build-with-claude/structured-outputs; JSON outputs and strict
tool use share them): ``enum`` of strings, numbers, bools or nulls only ("Complex types within
enums" not supported); regex without backreferences, lookaround or word boundaries (``\\b``,
``\\B``). Strict tools: "No more than 24 optional parameters" and "no more than 16 parameters with
union types" per request (PEERS.md "Provider strict-mode limits"; litellm
llms/anthropic/chat/transformation.py NATIVE_OUTPUT_MAX_OPTIONAL_PARAMETERS = 24,
NATIVE_OUTPUT_MAX_UNION_PARAMETERS = 16, counted by json_schema_utils: a parameter is a schema
under ``properties`` anywhere in the schema; optional = not in that object's ``required``; union =
``anyOf``/``oneOf`` or a ``type`` list). A schema past them is a 400 (then ``format_rejected``
steps the model down for the rest of the process), so the plan must not send one: what cannot be
sent is dropped with a downgrade line (checked locally), and strict goes off with the reason where
a limit is passed. ``strict_rules.anthropic_problems`` holds the same rules, so the suite driver
catches a break.
"""

from __future__ import annotations

import pytest

from tests.structure.strict_rules import anthropic_problems
from tests.structure.suite_driver import FAMILIES, Case, Problems, run_case
from vance_cli.llm.output.plan import build_plan
from vance_cli.llm.output.walker import provider_nodes

BOTH = ["anthropic", "anthropic+strict"]


def _closed(props: dict, required: list | None = None) -> dict:
    return {"type": "object", "properties": props, "required": required or [], "additionalProperties": False}


def _enum_values(schema):
    return [v for _, n in provider_nodes(schema) if isinstance(n.get("enum"), list) for v in n["enum"]]


@pytest.mark.parametrize("family", BOTH)
def test_no_enum_of_objects_or_arrays_is_sent(family):
    schema = _closed({"a": {"enum": [{"x": 1}, [1, 2], "s"]}}, ["a"])
    plan = build_plan(schema, FAMILIES[family])
    assert not [v for v in _enum_values(plan.schema) if isinstance(v, (dict, list))]
    assert not [n for _, n in provider_nodes(plan.schema) if isinstance(n.get("const"), (dict, list))]
    assert any("enum" in line and "checked locally" in line for line in plan.downgrades), plan.downgrades
    if plan.strict is False and family == "anthropic+strict":
        assert plan.strict_off is not None and "enum" in plan.strict_off[1]


@pytest.mark.parametrize("family", BOTH)
def test_an_enum_of_objects_still_admits_every_value(family):
    """What is sent instead is a superset: every enum value passes the provider schema."""
    schema = _closed({"a": {"enum": [{"x": 1}, [1, 2], "s"]}}, ["a"])
    problems = Problems()
    case = Case("enum of objects", schema, [("object", {"a": {"x": 1}}, True), ("array", {"a": [1, 2]}, True),
                                             ("string", {"a": "s"}, True), ("other", {"a": "t"}, False)])
    run_case(case, FAMILIES[family], problems)
    assert problems.counts() == dict.fromkeys(problems.counts(), 0), problems.found


@pytest.mark.parametrize("family", BOTH)
@pytest.mark.parametrize("pattern", [r"\bfoo\b", r"^a\Bb$", r"(\d)\1", r"a(?=b)"])
def test_no_word_boundary_backreference_or_lookaround_pattern_is_sent(family, pattern):
    schema = _closed({"p": {"type": "string", "pattern": pattern}}, ["p"])
    plan = build_plan(schema, FAMILIES[family])
    assert "pattern" not in plan.schema["properties"]["p"]
    assert any(line.startswith("/properties/p: pattern removed") for line in plan.downgrades), plan.downgrades


@pytest.mark.parametrize("pattern", [r"^\\b$", r"[a-z]+\.b", r"^\d{3}$"])
def test_an_escaped_backslash_before_b_is_no_word_boundary(pattern):
    schema = _closed({"p": {"type": "string", "pattern": pattern}}, ["p"])
    plan = build_plan(schema, FAMILIES["anthropic+strict"])
    assert plan.schema["properties"]["p"]["pattern"] == pattern


def _optional_count(schema):
    return sum(
        len(set(n["properties"]) - set(n.get("required", [])))
        for _, n in provider_nodes(schema) if isinstance(n.get("properties"), dict)
    )


def _union_count(schema):
    return sum(
        1 for _, n in provider_nodes(schema) for sub in (n.get("properties") or {}).values()
        if isinstance(sub, dict) and ("anyOf" in sub or "oneOf" in sub or isinstance(sub.get("type"), list) and len(sub["type"]) > 1)
    )


@pytest.mark.parametrize("n, strict", [(24, True), (25, False), (30, False)])
def test_strict_stays_within_24_optional_parameters(n, strict):
    schema = {"type": "object", "properties": {f"k{i}": {"type": "string"} for i in range(n)}, "additionalProperties": False}
    plan = build_plan(schema, FAMILIES["anthropic+strict"])
    assert plan.strict is strict
    if strict:
        assert _optional_count(plan.schema) == n
    else:
        assert plan.strict_off is not None and "24 optional" in plan.strict_off[1], plan.strict_off


def test_optional_parameters_are_counted_across_nested_objects_and_definitions():
    half = {f"k{i}": {"type": "string"} for i in range(13)}
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": _closed(half)},
        "required": ["a", "b"],
        "additionalProperties": False,
        "$defs": {"A": _closed(half)},
    }
    plan = build_plan(schema, FAMILIES["anthropic+strict"])
    assert _optional_count(plan.schema) > 24 or plan.strict is False
    assert plan.strict is False and "optional" in plan.strict_off[1]


@pytest.mark.parametrize("n, strict", [(16, True), (17, False), (20, False)])
def test_strict_stays_within_16_union_parameters(n, strict):
    schema = _closed({f"u{i}": {"type": ["string", "integer"]} for i in range(n)}, [f"u{i}" for i in range(n)])
    plan = build_plan(schema, FAMILIES["anthropic+strict"])
    assert plan.strict is strict, plan.downgrades
    if not strict:
        assert plan.strict_off is not None and "16 union" in plan.strict_off[1], plan.strict_off


def test_the_need_envelope_counts_toward_the_union_limit():
    """With the `_need` escape the envelope adds unions of its own (a nullable result and _need)."""
    schema = _closed({f"u{i}": {"type": ["string", "integer"]} for i in range(15)}, [f"u{i}" for i in range(15)])
    assert build_plan(schema, FAMILIES["anthropic+strict"]).strict is True
    plan = build_plan(schema, FAMILIES["anthropic+strict"], allow_need=True)
    assert not plan.strict or _union_count(plan.schema) <= 16, _union_count(plan.schema)


# -- the rule checker itself (the suite driver's bar for this family) ---------------------------


def test_the_checker_sees_complex_enums_and_consts():
    assert anthropic_problems(_closed({"a": {"enum": [{"x": 1}]}})) != []
    assert anthropic_problems(_closed({"a": {"enum": [[1]]}})) != []
    assert anthropic_problems(_closed({"a": {"const": {"x": 1}}})) != []
    assert anthropic_problems(_closed({"a": {"enum": ["s", 1, 2.5, True, None]}})) == []


def test_the_checker_sees_unsupported_patterns():
    for pattern in (r"\bword", r"a\B", r"(a)\1", r"(?<=a)b", r"(?!x)"):
        assert anthropic_problems(_closed({"p": {"type": "string", "pattern": pattern}})) != [], pattern
    assert anthropic_problems(_closed({"p": {"type": "string", "pattern": r"^\\b[a-z]+$"}})) == []


def test_the_checker_counts_the_strict_limits():
    optional = {"type": "object", "properties": {f"k{i}": {"type": "string"} for i in range(25)}, "additionalProperties": False}
    # not strict, closed: litellm still sends it as output_format, with the limits (review 15b); open:
    # as its json_tool_call tool, without them
    assert any("optional" in p for p in anthropic_problems(optional))
    assert anthropic_problems({**optional, "additionalProperties": True}) == []
    assert any("optional" in p for p in anthropic_problems(optional, strict=True))
    unions = _closed({f"u{i}": {"anyOf": [{"type": "string"}, {"type": "null"}]} for i in range(17)})
    assert any("union" in p for p in anthropic_problems(unions, strict=True))
    fine = _closed({f"u{i}": {"type": ["string", "null"]} for i in range(16)}, [f"u{i}" for i in range(16)])
    assert anthropic_problems(fine, strict=True) == []


def test_the_checker_sees_an_open_object_or_recursion_in_strict():
    assert any("additionalProperties" in p for p in anthropic_problems({"type": "object", "properties": {}}, strict=True))
    recursive = {"$defs": {"N": _closed({"n": {"$ref": "#/$defs/N"}})}, **_closed({"n": {"$ref": "#/$defs/N"}})}
    assert any("recursi" in p for p in anthropic_problems(recursive, strict=True))
