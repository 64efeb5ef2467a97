"""Ollama gets what llama.cpp's grammar enforces (issue 15 review, finding 4).

Ollama turns ``format`` into a grammar with llama.cpp's json-schema-to-grammar
(strict_rules.llama_cpp_reading says how it reads a schema, citing the source): an object without
``additionalProperties`` is closed, ``$ref`` and ``anyOf``/``oneOf`` ignore their sibling keywords,
an untyped node is read as one type, patterns must be ``^...$`` (else the request fails). Each test
validates against the provider schema the way llama.cpp reads it.
"""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from tests.structure.strict_rules import llama_cpp_problems, llama_cpp_reading
from tests.structure.suite_driver import FAMILIES, Case, Problems, run_case
from vance_cli.llm.output.plan import build_plan
from vance_cli.llm.output.walker import provider_nodes
from vance_cli.schema.reasons import make_validator

OLLAMA = FAMILIES["ollama"]
ANY_OF = {"anyOf": [
    {"type": "object", "properties": {"a": {"type": "integer"}}},
    {"type": "object", "properties": {"b": {"type": "integer"}}},
]}


def _admits(plan, value, allow_need=True) -> bool:
    read, problems = llama_cpp_reading(plan.schema)
    assert problems == []
    wrapped = {"result": value, "_need": None} if allow_need else value
    return Draft202012Validator(read).is_valid(wrapped)


def test_the_plan_follows_llama_cpp_rules():
    assert build_plan(ANY_OF, OLLAMA).family == "ollama"


def test_ollama_can_send_keys_of_two_alternatives():
    assert make_validator(ANY_OF).is_valid({"a": 1, "b": 2})
    plan = build_plan(ANY_OF, OLLAMA, allow_need=True)
    assert _admits(plan, {"a": 1, "b": 2})


def test_ollama_keeps_the_properties_beside_an_anyof():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "anyOf": [
            {"properties": {"email": {"type": "string"}}, "required": ["email"]},
            {"properties": {"phone": {"type": "string"}}, "required": ["phone"]},
        ],
    }
    plan = build_plan(schema, OLLAMA, allow_need=True)
    assert _admits(plan, {"name": "Ann", "email": "a@b.c"})
    assert _admits(plan, {"name": "Ann", "phone": "1", "note": [1]})  # open, as the caller's
    # The keywords beside the anyOf are enforced too (spread into each alternative).
    assert not _admits(plan, {"email": "a@b.c"})
    assert not _admits(plan, {"name": 1, "email": "a@b.c"})


def test_an_open_object_stays_open_and_a_closed_one_closed():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "c": {"type": "object", "properties": {}, "additionalProperties": False}}}
    plan = build_plan(schema, OLLAMA)
    assert _admits(plan, {"a": 1, "b": "x"}, allow_need=False)
    assert not _admits(plan, {"c": {"x": 1}}, allow_need=False)


def test_a_ref_with_siblings_is_enforced_with_them():
    schema = {
        "$defs": {"P": {"type": "object", "properties": {"a": {"type": "integer"}}}},
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P", "required": ["a"]}},
    }
    plan = build_plan(schema, OLLAMA)
    assert _admits(plan, {"p": {"a": 1, "z": 2}}, allow_need=False)
    assert not _admits(plan, {"p": {"z": 2}}, allow_need=False)


def test_untyped_nodes_and_any_value_admit_every_type():
    schema = {"type": "object", "properties": {"x": {"properties": {"a": {"type": "string"}}}, "y": {}, "z": {"description": "free"}, "w": True, "v": {"items": {}}}}
    plan = build_plan(schema, OLLAMA)
    assert _admits(plan, {"x": 1, "y": [1], "z": "s", "w": None, "v": [1, "a"]}, allow_need=False)
    assert _admits(plan, {"x": {"a": "s"}, "y": 2.5, "v": 3}, allow_need=False)
    assert not _admits(plan, {"x": {"a": 1}}, allow_need=False)


def test_ollama_gets_no_unanchored_pattern():
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "[A-Z]{3}"}}, "required": ["code"]}
    plan = build_plan(schema, OLLAMA)
    patterns = [n["pattern"] for _, n in provider_nodes(plan.schema) if "pattern" in n]
    assert patterns and all(p.startswith("^") and p.endswith("$") for p in patterns), patterns
    assert _admits(plan, {"code": "xxABCyy\nz"}, allow_need=False)
    assert not _admits(plan, {"code": "ab"}, allow_need=False)
    assert any("pattern sent as" in line for line in plan.downgrades), plan.downgrades


@pytest.mark.parametrize("pattern, sent", [
    ("^[a-z]+$", "^[a-z]+(\\n|..)?$"),  # a regex's $ also takes a final newline (two characters of the JSON text)
    ("^ab", "^(ab)(.|\\n|\\r)*$"),
    ("c$", "^(.|\\n|\\r)*(c)(\\n|..)?$"),
    ("a|b", "^(.|\\n|\\r)*(a|b)(.|\\n|\\r)*$"),
    ("^a.*b$", "^a.*b(\\n|..)?$"),
    ("^(?:ab){2,3}\\.x?$", "^(?:ab){2,3}\\.x?(\\n|..)?$"),
    ("^a|b$", None),  # (^a)|(b$): not one anchored whole
    ("^\\d{3}$", None),  # \d is no escape the grammar parser knows
    ("^[^a]$", None),  # a negated class admits '"' and '\', written escaped in the JSON text
    ('^["a]$', None),
    ("^[ -~]+$", None),  # the range holds '"' and '\'
    ("^a.b$", None),  # one character of the value may be two of the JSON text
    ("^(?=a)b$", None),
    ("^a\\b$", None),
    ("^ab\\.*$", None),  # llama.cpp repeats the literal run "ab." with the *
    ("^ab\\.c$", "^ab\\.c(\\n|..)?$"),
    ("^(a|)$", None),  # an empty alternative
    ("^()a$", None),
    ("^$", None),
])
def test_patterns_are_anchored_where_equivalent_else_removed(pattern, sent):
    from vance_cli.llm.output.ollama import llama_pattern

    assert llama_pattern(pattern) == sent


def test_a_removed_pattern_says_so():
    schema = {"type": "object", "properties": {"d": {"type": "string", "pattern": "^\\d+$"}}}
    plan = build_plan(schema, OLLAMA)
    assert "pattern" not in plan.schema["properties"]["d"]
    assert any(line.startswith("/properties/d: pattern removed") for line in plan.downgrades), plan.downgrades
    assert llama_cpp_problems(plan.schema) == []


def test_formats_llama_cpp_would_narrow_are_not_sent():
    """llama.cpp's time rule takes exactly three fraction digits and an upper-case Z."""
    schema = {"type": "object", "properties": {"t": {"type": "string", "format": "date-time"}, "d": {"type": "string", "format": "date"}}}
    plan = build_plan(schema, OLLAMA)
    assert "format" not in plan.schema["properties"]["t"]
    assert plan.schema["properties"]["d"]["format"] == "date"
    assert _admits(plan, {"t": "2024-05-01T10:00:00.123456z", "d": "2024-05-01"}, allow_need=False)


def test_integer_bounds_are_rounded_the_safe_way():
    """llama.cpp reads bounds as int64 (cut toward zero): exclusiveMaximum 1.5 would forbid 1."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMaximum": 1.5, "minimum": -2.5}}}
    plan = build_plan(schema, OLLAMA)
    assert _admits(plan, {"n": 1}, allow_need=False) and _admits(plan, {"n": -2}, allow_need=False)
    assert not _admits(plan, {"n": 2}, allow_need=False)


def test_refs_to_the_root_and_odd_definition_names_resolve_for_llama_cpp():
    schema = {
        "$defs": {"a/b~c": {"type": "object", "properties": {"v": {"type": "integer"}}}, "a-b": {"type": "string"}, "root": {"type": "boolean"}},
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a~1b~0c"}, "y": {"$ref": "#/$defs/a-b"}, "next": {"$ref": "#"}, "r": {"$ref": "#/$defs/root"}},
    }
    for allow_need in (False, True):
        plan = build_plan(schema, OLLAMA, allow_need=allow_need)
        assert llama_cpp_problems(plan.schema) == [], plan.schema
        assert _admits(plan, {"x": {"v": 1}, "y": "s", "next": {"x": {"v": 2}}, "r": True}, allow_need=allow_need)
        assert not _admits(plan, {"r": 1}, allow_need=allow_need)
        assert not _admits(plan, {"next": {"r": 1}}, allow_need=allow_need)


def test_the_suite_driver_reads_the_ollama_plan_the_way_llama_cpp_does():
    """Not as full JSON Schema: a schema sent as written (closed by llama.cpp) is caught."""
    from tests.structure import suite_driver

    problems = Problems()
    case = Case("anyOf of open objects", ANY_OF, [("both", {"a": 1, "b": 2}, True)])
    run_case(case, OLLAMA, problems)
    assert problems.counts()["forbidden"] == 0
    read, _ = llama_cpp_reading({"anyOf": ANY_OF["anyOf"]})
    assert not Draft202012Validator(read).is_valid({"a": 1, "b": 2})
    assert "ollama" in suite_driver.LLAMA_CPP_FAMILIES


def test_the_llama_cpp_checker_sees_what_fails_the_conversion():
    assert llama_cpp_problems({"type": "string", "pattern": "[a-z]"}) != []
    assert llama_cpp_problems({"type": "string", "pattern": "^\\d$"}) != []
    assert llama_cpp_problems({"type": "object", "properties": {"a": {"$ref": "#"}}}) != []
    assert llama_cpp_problems({"type": "object", "properties": {"a": True}}) != []
    assert llama_cpp_problems({"type": "object", "properties": {"a": {"description": "x"}}}) != []
    assert llama_cpp_problems({"type": "object", "properties": {"a": {"$ref": "#/$defs/a~1b"}}, "$defs": {"a/b": {}}}) != []
    assert llama_cpp_problems({"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}}}) == []
