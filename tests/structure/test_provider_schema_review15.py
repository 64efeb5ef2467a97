"""Issue 15, second review (findings 5-8): the converter's cost on ref chains, object keywords on
non-object nodes, keys only an `if` names, and strict kept where a sound strict schema exists."""

from __future__ import annotations

import pytest

from tests.structure.instances import ref_chain
from tests.structure.strict_rules import openai_strict_problems
from tests.structure.suite_driver import FAMILIES, Case, Problems, run_case
from vance_cli.llm.output.plan import build_plan, strip_injected_nulls

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


# (strict, sha256 of the provider schema, canonical JSON, first 16 hex digits) as the code before
# the chain fix (ca7bcb7) planned them, with `_need`. The fix walks only the definitions the walked
# schema still points at (a chain inlined into its first definition is not walked again from each
# later one: cubic in its length, bench/bench_suite.py); what is sent must not change. The two
# anthropic+strict 60-chains marked fam15 are as fam15's code (Anthropic's 24-optional limit)
# planned them before the fix: strict off, the same schema as gemini's. Every anthropic+strict
# plan is that plan with its refs inlined (anthropic.inline_refs, review 15b: litellm inlines them
# before Anthropic sees them, and the limits are counted there). Those that are not strict send
# every object they leave open with additionalProperties: true (review 15c: else litellm sends
# output_format and closes them), so litellm uses its json_tool_call tool: the 60-chains, past 24
# optional, no longer need their root opened (it stays closed, as the envelope has it).
CHAIN_PLANS = {
    "3/minProperties/openai": (True, "7c0456e64eb42cde"),
    "3/minProperties/other+strict": (True, "7c0456e64eb42cde"),
    "3/minProperties/anthropic+strict": (True, "279f4d4c0e4ceea7"),
    "3/minProperties/gemini": (False, "63a58bf927afebae"),
    "3/required/openai": (False, "ce33f91b7f9d556d"),
    "3/required/other+strict": (False, "ce33f91b7f9d556d"),
    "3/required/anthropic+strict": (False, "a7c1a8b43cc2c9d2"),
    "3/required/gemini": (False, "ce33f91b7f9d556d"),
    "3/description/openai": (True, "b71fe20e5c60031e"),
    "3/description/other+strict": (True, "b71fe20e5c60031e"),
    "3/description/anthropic+strict": (True, "b8fc6fc4ae2ca53f"),
    "3/description/gemini": (False, "1be1c4f30d06506f"),
    "60/minProperties/openai": (False, "60465002fe19b167"),
    "60/minProperties/other+strict": (False, "60465002fe19b167"),
    "60/minProperties/anthropic+strict": (False, "1ebda43db799eec5"),  # fam15: past 24 optional
    "60/minProperties/gemini": (False, "611b8a7116c62e6a"),
    "60/required/openai": (False, "bfb739e4aecb12c7"),
    "60/required/other+strict": (False, "bfb739e4aecb12c7"),
    "60/required/anthropic+strict": (False, "3d80694f5cac63f5"),
    "60/required/gemini": (False, "bfb739e4aecb12c7"),
    "60/description/openai": (False, "9d1a32200b25330d"),
    "60/description/other+strict": (False, "9d1a32200b25330d"),
    "60/description/anthropic+strict": (False, "c751b5f1bd9125cc"),  # fam15: past 24 optional
    "60/description/gemini": (False, "7862f6bf9ef36441"),
}


@pytest.mark.parametrize("key", sorted(CHAIN_PLANS))
def test_the_plan_of_a_ref_chain_is_what_it_was_before_the_speedup(key):
    import hashlib
    import json

    n, beside, family = key.split("/")
    value = {"minProperties": 1, "required": ["v"], "description": "next"}[beside]
    plan = build_plan(ref_chain(int(n), {beside: value}), FAMILIES[family], allow_need=True)
    digest = hashlib.sha256(json.dumps(plan.schema, sort_keys=True).encode()).hexdigest()[:16]
    assert (plan.strict, digest) == CHAIN_PLANS[key]


def test_a_chain_inlined_into_its_first_definition_sends_no_other_and_says_nothing_of_them():
    plan = build_plan(ref_chain(3, {"minProperties": 1}), FAMILIES["openai"])
    assert plan.strict and list(plan.schema["$defs"]) == ["D0"]
    # the lines point into what is sent (D0 with the chain inlined), not at D1..D3 walked alone
    assert not any("/$defs/D1" in line or "/$defs/D2" in line for line in plan.downgrades), plan.downgrades



# github-issue-forms' form_item in small: if/then without else, one per value of the required `type`
# enum (through a $ref, as there). Every value has its `then`, so "id" has a schema (type a) or is
# forbidden (type b) in every case: a closed object declaring it as a string forbids no valid answer.
FORM_ITEM = {
    "$defs": {"type": {"type": "string", "enum": ["a", "b"]}},
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"$ref": "#/$defs/type"}},
    "allOf": [
        {"if": {"properties": {"type": {"const": "a"}}},
         "then": {"properties": {"type": {}, "id": {"type": "string"}}, "additionalProperties": False}},
        {"if": {"properties": {"type": {"const": "b"}}},
         "then": {"properties": {"type": {}, "n": {"type": "integer"}}, "additionalProperties": False}},
    ],
}
FORM_ITEM_CASES = [
    ("a-id", {"type": "a", "id": "x"}, True),
    ("b-n", {"type": "b", "n": 3}, True),
    ("a-bare", {"type": "a"}, True),
    ("a-id-int", {"type": "a", "id": 1}, False),
    ("b-id", {"type": "b", "id": "x"}, False),
]


@pytest.mark.parametrize("family", ["openai", "other+strict", "anthropic+strict"])
def test_if_then_over_every_value_of_a_required_enum_keeps_strict(family):
    plan = build_plan(FORM_ITEM, FAMILIES[family])
    assert plan.strict, plan.downgrades[0]
    assert openai_strict_problems(plan.schema) == [] or family == "anthropic+strict"
    assert {"id", "n"} <= set(plan.schema["properties"])
    problems = Problems()
    run_case(Case("form-item", FORM_ITEM, FORM_ITEM_CASES), FAMILIES[family], problems)
    assert all(v == [] for v in problems.found.values()), problems.found


@pytest.mark.parametrize(
    "variant",
    [
        # a value of the enum no `if` takes: "id" is free there (the object is open)
        {"$defs": {"type": {"type": "string", "enum": ["a", "b", "c"]}}},
        # the discriminator not required: without it no `if` fails... nor any then applies
        {"required": []},
        # an `if` that looks at another key too: not decided by the discriminator alone
        {"allOf": [
            {"if": {"properties": {"type": {"const": "a"}, "x": {"const": 1}}},
             "then": {"properties": {"type": {}, "id": {"type": "string"}}, "additionalProperties": False}},
            FORM_ITEM["allOf"][1],
        ]},
    ],
)
def test_if_then_that_leaves_a_case_open_still_turns_strict_off(variant):
    schema = {**FORM_ITEM, **variant}
    plan = build_plan(schema, FAMILIES["openai"])
    assert not plan.strict
    assert "'id'" in plan.downgrades[0] or "'n'" in plan.downgrades[0], plan.downgrades[0]


@pytest.mark.parametrize(
    "name,answer",
    [
        ("pydantic-Pet", {"pet": {"kind": "cat", "good_boy": "x"}, "owner": "Ann"}),
        ("codex-hooks", {"hooks": {"Stop": [{"hooks": [{"type": "prompt", "command": 5}]}]}}),
        ("openai-ChatCompletionMessage", {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}, "custom": 5}]}),
    ],
)
@pytest.mark.parametrize("family", ["openai", "other+strict", "anthropic+strict"])
def test_a_union_of_open_models_stays_relaxed_where_strict_would_forbid_a_valid_answer(name, answer, family):
    """The borrowed key is valid with any value in the alternative that does not declare it (the
    model is open), so no closed strict object can accept every such answer: strict stays off,
    and the relaxed plan takes the review's probes."""
    from tests.structure.test_schema_corpus import corpus

    from vance_cli.schema.reasons import make_validator

    schema = corpus()[name]
    assert make_validator(schema).is_valid(answer)
    plan = build_plan(schema, FAMILIES[family], allow_need=True)
    assert not plan.strict and "allows any value" in plan.downgrades[0]
    problems = Problems()
    run_case(Case(name, schema, [("probe", answer, True)]), FAMILIES[family], problems, allow_need=True)
    assert all(v == [] for v in problems.found.values()), problems.found


# The way back for discriminators whose value may be null (found by fuzzing the case split above;
# the strict plans are new, the way back's faults were not).
NULL_DISCRIMINATOR = {
    "type": "object",
    "required": ["t"],
    "properties": {"t": {"enum": ["a", None]}},
    "additionalProperties": False,
    "allOf": [{"if": {"properties": {"t": {"const": "a"}}}, "then": {"properties": {"id": {"type": "string"}}}}],
}
NULL_DISCRIMINATOR_CLOSED_THEN = {
    "type": "object",
    "required": ["t"],
    "properties": {"t": {"enum": ["a", None]}},
    "if": {"properties": {"t": {"const": None}}},
    "then": {"properties": {"t": {}, "k": {"type": "string"}}, "additionalProperties": False},
    "else": {"properties": {"n": {"type": ["string", "null"]}}, "additionalProperties": {"type": "string"}},
}


def test_a_null_an_if_tests_is_not_taken_for_an_injected_one():
    """{"t": null} is valid; the `if` tests "t" against "a" (a test, not a constraint on "t"), so
    the way back must not drop the required null because the `if`'s schema rejects it."""
    plan = build_plan(NULL_DISCRIMINATOR, FAMILIES["openai"])
    assert plan.strict
    assert strip_injected_nulls({"t": None, "id": None}, NULL_DISCRIMINATOR) == {"t": None}


def test_a_closed_branch_refusing_an_injected_null_keeps_the_required_one():
    """For t null the `then` is closed to t and k: the injected null of "n" (declared by the
    `else`) is refused there and dropped; the required null of "t" beside it stays."""
    plan = build_plan(NULL_DISCRIMINATOR_CLOSED_THEN, FAMILIES["openai"])
    assert plan.strict
    assert strip_injected_nulls({"t": None, "k": None, "n": None}, NULL_DISCRIMINATOR_CLOSED_THEN) == {"t": None}
    problems = Problems()
    cases = [("null", {"t": None}, True), ("a-n", {"t": "a", "n": "x"}, True), ("null-n", {"t": None, "n": "x"}, False)]
    run_case(Case("null-disc", NULL_DISCRIMINATOR_CLOSED_THEN, cases), FAMILIES["openai"], problems)
    assert all(v == [] for v in problems.found.values()), problems.found


def test_a_key_named_by_an_if_without_then_or_else_can_be_sent():
    """An `if` with neither then nor else constrains nothing, but the key it names is declared by
    the suite driver's bar: {"a": 7} is valid and was forbidden by the closed root (fuzz seed 1068)."""
    schema = {"type": "object", "properties": {"d": {"type": "string"}}, "if": {"properties": {"a": {"const": 1}}, "required": ["a"]}}
    for family in ("openai", "other+strict", "anthropic+strict"):
        problems = Problems()
        run_case(Case("if-alone", schema, [("a7", {"a": 7}, True), ("ax", {"a": "x", "d": "y"}, True)]), FAMILIES[family], problems)
        assert all(v == [] for v in problems.found.values()), (family, problems.found)


def test_a_key_a_branch_declares_inside_a_property_can_be_sent():
    """The `then` gives "c" a key "y" of its own; where the `if` fails, "c" is an open object and
    "y" may hold anything: {"t": 2, "c": {"y": "zz"}} is valid, and the strict "c" closed to "x"
    forbade it (fuzz seed 546, there through a recursive $ref). Strict goes off, saying why."""
    schema = {
        "type": "object",
        "properties": {"t": {"type": "integer"}, "c": {"type": "object", "properties": {"x": {"type": "string"}}}},
        "if": {"properties": {"t": {"const": 1}}, "required": ["t"]},
        "then": {"properties": {"c": {"properties": {"y": {"type": "integer"}}}}},
    }
    plan = build_plan(schema, FAMILIES["openai"])
    assert not plan.strict and "'y'" in plan.downgrades[0], plan.downgrades[:1]
    for family in ("openai", "other+strict", "anthropic+strict"):
        problems = Problems()
        run_case(Case("inner-key", schema, [("y", {"t": 2, "c": {"y": "zz"}}, True)]), FAMILIES[family], problems)
        assert all(v == [] for v in problems.found.values()), (family, problems.found)


def test_a_required_null_stays_whatever_part_of_the_schema_looks_at_it():
    """The root requires "t"; an allOf part's `then` gives "t" a type without null (it applies only
    for t "a"). {"t": null} is valid and was stripped to {} by the part (fuzz, discriminator split)."""
    schema = {
        "type": "object",
        "required": ["t"],
        "properties": {"t": {"enum": [None, "a"]}, "k": {"type": "integer"}},
        "additionalProperties": False,
        "allOf": [{"if": {"properties": {"t": {"const": "a"}}, "required": ["t"]},
                   "then": {"properties": {"t": {"type": "string"}, "k": {"type": "integer"}}}}],
    }
    assert strip_injected_nulls({"t": None, "k": None}, schema) == {"t": None}
    problems = Problems()
    run_case(Case("req-null", schema, [("null", {"t": None}, True), ("a", {"t": "a", "k": 1}, True)]), FAMILIES["openai"], problems)
    assert all(v == [] for v in problems.found.values()), problems.found
