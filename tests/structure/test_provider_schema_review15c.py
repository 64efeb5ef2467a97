"""Issue 15, third review (/tmp/review15c): a key only a then/else requires, the way back against
the object's own rules, the case-by-case cover's cost, keys an `if` names on a closed object, and
a long anyOf ref chain."""

from __future__ import annotations

import signal

import pytest

from tests.structure.suite_driver import FAMILIES, Case, Problems, run_case
from vance_cli.errors import InvalidSchema
from vance_cli.llm.output.plan import build_plan

STRICT = ["openai", "anthropic+strict", "gemini+strict", "other+strict"]


def _found(schema, instances, family, what):
    p = Problems()
    run_case(Case("r", schema, [(f"i{i}", x, True) for i, x in enumerate(instances)]), FAMILIES[family], p)
    return p.found[what]


# 1. A key a then/else names only in `required` is a key a valid answer holds: the closed strict
# object must not leave it out. t is always 2, so the else always applies; it requires x.
ELSE_REQUIRES = {"type": "object", "properties": {"t": {"const": 2}}, "required": ["t"],
                 "if": {"properties": {"t": {"const": "c"}}, "required": ["t"]},
                 "else": {"properties": {"z": {"type": "integer"}}, "required": ["x"]}}
# x is required when t is "a", free otherwise.
THEN_REQUIRES = {"type": "object", "properties": {"t": {"enum": ["a", "b"]}}, "required": ["t"],
                 "if": {"properties": {"t": {"const": "a"}}}, "then": {"required": ["x"]}}


@pytest.mark.parametrize("family", STRICT)
def test_a_key_only_an_else_requires_can_be_sent(family):
    assert _found(ELSE_REQUIRES, [{"t": 2, "x": 5}, {"t": 2, "x": "s", "z": 1}], family, "forbidden") == []


@pytest.mark.parametrize("family", STRICT)
def test_a_key_only_a_then_requires_can_be_sent(family):
    assert _found(THEN_REQUIRES, [{"t": "b", "x": 5}, {"t": "a", "x": "s"}], family, "forbidden") == []


# 2. The way back: an injected null the key's own schema allows but the object rejects for being
# there (maxProperties, dependentRequired, a branch's not/required) is dropped; a real null a
# `then` whose `if` fails would reject stays.
X = {"type": ["string", "null"]}
OBJECT_RULES = {
    "maxProperties": ({"type": "object", "properties": {"a": {"type": "integer"}, "x": X}, "maxProperties": 1}, [{"a": 1}]),
    "dependentRequired": ({"type": "object", "properties": {"a": {"type": "integer"}, "x": X}, "dependentRequired": {"x": ["a"]}}, [{}]),
    "then-not-required": ({"type": "object", "properties": {"t": {"enum": ["a", "b"]}, "x": X}, "required": ["t"],
                           "if": {"properties": {"t": {"const": "a"}}}, "then": {"not": {"required": ["x"]}}}, [{"t": "a"}]),
    "merged-if-then-else": ({"type": "object", "properties": {"t": {"enum": [None, "c"]}}, "allOf": [
        {"if": {"properties": {"t": {"const": "c"}}}, "then": {"not": {"required": ["x"]}}},
        {"if": {"properties": {"t": {"const": "c"}}, "required": ["t"]},
         "then": {"properties": {"x": {"type": "null"}, "y": {"type": "object", "properties": {"w": {"type": "integer"}}}}},
         "else": {"$ref": "#/$defs/D0"}}],
        "$defs": {"D0": {"properties": {"y": {"type": "object", "properties": {"w": {"type": "integer"}}}}, "additionalProperties": False}}},
        [{"t": "c"}]),
}


@pytest.mark.parametrize("name", sorted(OBJECT_RULES))
def test_an_injected_null_the_object_rejects_is_dropped(name):
    schema, instances = OBJECT_RULES[name]
    assert _found(schema, instances, "openai", "mangled") == []


REAL_NULL = {"type": "object", "properties": {"t": {"enum": ["a", "b"]}, "x": X}, "required": ["t"], "minProperties": 2,
             "allOf": [{"if": {"properties": {"t": {"const": "a"}}}, "then": {"properties": {"x": {"type": "string"}}}}]}


def test_a_real_null_a_then_that_does_not_apply_rejects_stays():
    assert _found(REAL_NULL, [{"t": "b", "x": None}], "openai", "mangled") == []


# 3. The case-by-case cover is bounded: definitions L1..LD, each an allOf of one `if t == w then
# $ref L(d-1)` per value w of the required enum t, made it V^D key_cover calls (12 s for V=10,
# D=4). The alarm only catches the blow-up; the plan takes a fraction of a second.
def _nested_per_value_ifs(v, d):
    vals = [f"v{i}" for i in range(v)]
    defs = {"L0": {"properties": {"x": {"type": "string"}}}}
    for k in range(1, d + 1):
        defs[f"L{k}"] = {"allOf": [{"if": {"properties": {"t": {"const": w}}}, "then": {"$ref": f"#/$defs/L{k-1}"}} for w in vals]}
    return {"type": "object", "properties": {"t": {"enum": vals}}, "required": ["t"],
            "allOf": [{"$ref": f"#/$defs/L{d}"}], "$defs": defs}


class _Slow(Exception):
    pass


def _alarm(*_):
    raise _Slow


def test_nested_per_value_ifs_plan_quickly_and_soundly():
    schema = _nested_per_value_ifs(12, 4)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)
    try:
        plan = build_plan(schema, FAMILIES["openai"], name="x")
    except _Slow:
        raise AssertionError("build_plan took over 10 s on a 4 KB schema") from None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    # past the budget, the coarse rule: strict off, saying why
    assert not plan.strict and "more cases than strict mode decides" in plan.strict_off[1]
    assert _found(schema, [{"t": "v0", "x": "s"}], "openai", "forbidden") == []
    # within it, decided case by case: strict, and x can be sent
    small = _nested_per_value_ifs(3, 2)
    assert build_plan(small, FAMILIES["openai"], name="x").strict
    assert _found(small, [{"t": "v0", "x": "s"}, {"t": "v1", "x": 5, "y": 1}], "openai", "forbidden") == []


# Found while bounding it: Merger.declared listed nothing past 16 nested parts, so x, declared
# only at the bottom of 6 levels of if/then, was closed out of the strict object (forbidden).
@pytest.mark.parametrize("levels", [6, 20])
def test_a_key_declared_under_deeply_nested_conditionals_can_be_sent(levels):
    schema = _nested_per_value_ifs(2, levels)
    assert _found(schema, [{"t": "v0", "x": "s"}, {"t": "v1", "x": "s"}], "openai", "forbidden") == []


# 4. A key an `if` names where the object forbids it is not declared (the if's test is no
# constraint): strict stays on, and a strict model is not offered the forbidden key.
CLOSED = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False, "then": {"required": ["a"]}}


def test_an_if_over_a_forbidden_key_keeps_strict():
    plan = build_plan({**CLOSED, "if": {"properties": {"d": False}}}, FAMILIES["openai"], name="x")
    assert plan.strict, plan.downgrades


def test_a_forbidden_key_an_if_tests_is_not_offered():
    plan = build_plan({**CLOSED, "if": {"properties": {"d": {"const": 1}}, "required": ["d"]}}, FAMILIES["openai"], name="x")
    assert "d" not in plan.schema["properties"]


# 5. A chain of 250 definitions, each pointing at the next through anyOf [$ref, null] with an
# asserting sibling: no RecursionError.
def _chain(n):
    defs = {}
    for i in range(n):
        nxt = {"$ref": f"#/$defs/d{i+1}"} if i + 1 < n else {"type": "integer"}
        defs[f"d{i}"] = {"type": "object", "properties": {"n": {"anyOf": [nxt, {"type": "null"}], "minProperties": 1},
                                                           "k": {"type": "integer"}}, "required": ["k"]}
    return {"$ref": "#/$defs/d0", "$defs": defs}


@pytest.mark.parametrize("family", ["openai", "anthropic+strict", "ollama"])
def test_a_long_anyof_ref_chain_does_not_crash(family):
    try:
        plan = build_plan(_chain(250), FAMILIES[family], name="x")
    except InvalidSchema as exc:  # a clear refusal (the relaxed walk cannot follow it either)
        assert "nest too deep" in str(exc) and exc.hint
    else:  # strict off saying why; the relaxed walk keeps the refs
        assert not plan.strict and "too long to inline" in plan.strict_off[1]
        assert plan.schema is not None


# 7. A second if/then/else folded while merging an allOf conflicts with nothing: the plan says it
# is removed (like the first), not "allOf partly merged (conflicting keywords ...)".
TWO_CONDITIONALS = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "allOf": [
    {"if": {"properties": {"a": {"const": 1}}, "required": ["a"]}, "then": {"required": ["b"]}},
    {"if": {"properties": {"b": {"const": 2}}, "required": ["b"]}, "else": {"required": ["a"]}}]}


@pytest.mark.parametrize("family", ["openai", "other+strict"])
def test_a_second_if_then_else_is_reported_removed_not_conflicting(family):
    plan = build_plan(TWO_CONDITIONALS, FAMILIES[family], name="x")
    assert plan.strict
    assert not any("conflicting" in line for line in plan.downgrades), plan.downgrades
    for keyword in ("if", "then", "else"):
        assert f"(root): {keyword} removed (not enforced by openai; checked locally)" in plan.downgrades


def test_a_long_ref_chain_inlined_for_anthropic_stops_at_a_depth_and_says_so():
    """Anthropic's plan inlines every $ref (litellm sends no $defs there): 250 refs one inside another
    overflowed the recursion; past INLINED_MAX_DEPTH the ref is sent as any value, checked locally."""
    from vance_cli.llm.output.anthropic import INLINED_MAX_DEPTH

    plan = build_plan(_chain(250), FAMILIES["anthropic"], name="x")
    assert any(f"inlined more than {INLINED_MAX_DEPTH} deep" in line for line in plan.downgrades), plan.downgrades
    ok = build_plan(_chain(8), FAMILIES["anthropic"], name="x")
    assert not any("inlined more than" in line for line in ok.downgrades)
