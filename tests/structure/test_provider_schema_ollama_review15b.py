"""Issue 15, review 15b findings 2-4: Ollama schemas llama.cpp's converter mis-reads.

2. An open object (additionalProperties true or a schema) gets llama.cpp's "other key" rule
   (``_not_strings``): a byte trie of the property names written as one GBNF class per byte, so a
   non-ASCII byte, ``]`` or ``\\`` in a name gives a malformed grammar.
3. llama.cpp's ``resolve_refs`` (``visit_refs``) takes every JSON object holding a ``"$ref"`` key
   as a reference: a property named ``$ref``, an enum/const value ``{"$ref": ...}``.
4. format uuid (jsonschema's ``is_uuid`` accepts a fifth hyphen; llama.cpp's rule is 8-4-4-4-12)
   and a pattern ending in ``$`` (Python's ``$`` also matches before a final newline; llama.cpp
   matches the JSON text whole).
"""

from __future__ import annotations

import re

import pytest

from tests.structure.strict_rules import llama_cpp_problems, llama_cpp_reading
from tests.structure.suite_driver import FAMILIES
from vance_cli.llm.output.plan import build_plan
from vance_cli.llm.output.walker import provider_nodes
from vance_cli.schema.reasons import make_validator

OLLAMA = FAMILIES["ollama"]


def _class_ok(byte: int) -> bool:
    """Whether llama-grammar.cpp reads the class ``[<byte>]`` as that one character."""
    return byte < 0x80 and chr(byte) not in "]\\"


def _broken_not_strings(schema):
    out = []
    for parts, node in provider_nodes(schema):
        extra = node.get("additionalProperties")
        props = node.get("properties")
        if isinstance(props, dict) and props and (extra is True or isinstance(extra, dict)):
            out += [(parts, name) for name in props if not all(_class_ok(b) for b in name.encode("utf-8"))]
    return out


@pytest.mark.parametrize("name", ["größe", "名前", "a]b", "back\\slash"])
@pytest.mark.parametrize("extra", [None, True, {"type": "integer"}])
def test_open_object_property_names_llama_cpp_can_exclude(name, extra):
    schema = {"type": "object", "properties": {name: {"type": "integer"}, "n": {"type": "string"}}}
    if extra is not None:
        schema["additionalProperties"] = extra
    plan = build_plan(schema, OLLAMA, name="x")
    assert _broken_not_strings(plan.schema) == [], plan.schema
    assert any("properties removed" in line and "llama.cpp" in line for line in plan.downgrades), plan.downgrades
    assert llama_cpp_problems(plan.schema) == []
    # sent as any object: it takes the declared keys and every other key the caller allows (review
    # 15d: closing it forbade those); the rest is checked locally
    reading, _ = llama_cpp_reading(plan.schema)
    assert make_validator(reading).is_valid({name: 1, "n": "x"})
    assert make_validator(reading).is_valid({name: 1, "n": "x", "other": 2})


REVIEW_15D = [
    ({"type": "object", "properties": {"größe": {"type": "integer"}}}, {"größe": 1, "farbe": "rot"}),
    ({"type": "object", "properties": {"größe": {"type": "integer"}}, "patternProperties": {"^x": {"type": "integer"}}},
     {"größe": 1, "x1": 2}),
    ({"type": "object", "properties": {"a]b": {"type": "integer"}}, "additionalProperties": {"type": "integer"}}, {"a]b": 1, "q": 2}),
]


@pytest.mark.parametrize("schema,answer", REVIEW_15D)
def test_an_open_object_with_an_unusual_name_takes_the_keys_the_caller_allows(schema, answer):
    assert make_validator(schema).is_valid(answer)
    plan = build_plan(schema, OLLAMA, name="x")
    sent = {"result": answer} if plan.envelope else answer
    assert make_validator(llama_cpp_reading(plan.schema)[0]).is_valid(sent), f"forbidden by {plan.schema}"


@pytest.mark.parametrize("name", ["größe", "a]b", "back\\slash"])
def test_the_llama_cpp_checker_sees_the_malformed_key_rule(name):
    schema = {"type": "object", "properties": {name: {"type": "integer"}}, "additionalProperties": True}
    assert llama_cpp_problems(schema) != []


@pytest.mark.parametrize("names", [["size_1"], ["bar-item"], ["a-", "a!"]])
def test_an_open_object_with_plain_names_stays_open(names):
    plan = build_plan({"type": "object", "properties": {n: {"type": "integer"} for n in names}}, OLLAMA, name="x")
    assert plan.schema["additionalProperties"] is True
    assert llama_cpp_problems(plan.schema) == []


def test_a_hyphen_the_negated_class_reads_as_a_range():
    # names "a-b" and "ac": after "a" the other-key rule has [^"-c], the range '"'..'c'
    schema = {"type": "object", "properties": {"a-b": {"type": "integer"}, "ac": {"type": "integer"}}, "additionalProperties": True}
    assert llama_cpp_problems(schema) != []
    plan = build_plan(schema, OLLAMA, name="x")
    assert "properties" not in plan.schema and llama_cpp_problems(plan.schema) == []


REF_DATA = {
    "property named $ref": {"type": "object", "properties": {"$ref": {"type": "string"}}},
    "property named $ref holding a ref": {
        "$defs": {"is-string": {"type": "string"}},
        "properties": {"$ref": {"$ref": "#/$defs/is-string"}},
    },
    "enum value that looks like a ref": {"$defs": {"a_string": {"type": "string"}}, "enum": [{"$ref": "#/$defs/a_string"}]},
    "const value that looks like a ref": {"type": "object", "properties": {"a": {"const": {"$ref": "x"}}}},
    "nested enum value": {"enum": [{"a": [{"$ref": 1}]}, "b"]},
}


def visit_refs_problems(schema):
    """llama.cpp's visit_refs, replicated independently: every object of the JSON document, "$ref"
    read as a "#/..." string pointer resolved token by token; no recursion below a $ref."""
    problems = []

    def walk(n):
        if isinstance(n, list):
            for x in n:
                walk(x)
        elif isinstance(n, dict):
            if "$ref" in n:
                ref = n["$ref"]
                if not isinstance(ref, str):
                    problems.append(f"type_error: $ref holds {type(ref).__name__}")
                    return
                if not ref.startswith("#/"):
                    problems.append(f"Unsupported ref: {ref}")
                    return
                target = schema
                for tok in ref[2:].split("/"):
                    if isinstance(target, dict) and tok in target:
                        target = target[tok]
                    else:
                        problems.append(f"Error resolving ref {ref}")
                        return
            else:
                for v in n.values():
                    walk(v)

    walk(schema)
    return problems


@pytest.mark.parametrize("name", list(REF_DATA))
def test_ollama_plan_converts_in_llama_cpp(name):
    plan = build_plan(REF_DATA[name], OLLAMA, name="x")
    assert visit_refs_problems(plan.schema) == [], plan.schema
    assert llama_cpp_problems(plan.schema) == []
    assert any("$ref" in line for line in plan.downgrades), plan.downgrades


@pytest.mark.parametrize("name", list(REF_DATA))
def test_the_llama_cpp_checker_sees_what_visit_refs_fails_on(name):
    schema = REF_DATA[name]
    if name == "enum value that looks like a ref":
        # (a pointer that resolves: llama.cpp only records it; the value is still sent as its type)
        assert visit_refs_problems(schema) == []
    else:
        assert visit_refs_problems(schema) != []
        assert llama_cpp_problems(schema) != []


# llama.cpp json-schema-to-grammar.cpp PRIMITIVE_RULES["uuid"], as a regex over the JSON text
LLAMA_UUID = re.compile(r'"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"')


def _sent_node(plan):
    return plan.schema["properties"]["result"] if plan.envelope else plan.schema


def test_uuid_format_sent_only_where_llama_cpp_admits_every_valid_uuid():
    schema = {"type": "string", "format": "uuid"}
    value = "12345678-1234-1234-1234-1234-5678-9abc"
    assert make_validator(schema).is_valid(value)
    node = _sent_node(build_plan(schema, OLLAMA, name="x"))
    if node.get("format") == "uuid":
        assert LLAMA_UUID.fullmatch('"' + value + '"'), "valid uuid forbidden by llama.cpp's uuid rule"


@pytest.mark.parametrize("pattern", ["^abc$", "abc$", "^(a|b)c$"])
def test_a_pattern_ending_in_dollar_and_a_final_newline(pattern):
    schema = {"type": "string", "pattern": pattern}
    value = "abc\n" if "a|b" not in pattern else "ac\n"
    assert make_validator(schema).is_valid(value)
    node = _sent_node(build_plan(schema, OLLAMA, name="x"))
    sent = node.get("pattern")
    if sent is not None:
        # llama.cpp matches the pattern (between ^ and $) against the whole JSON text of the string
        assert re.fullmatch(sent[1:-1], value.replace("\n", "\\n")), f"{sent!r} cannot produce the valid {value!r}"
        assert not re.fullmatch(sent[1:-1], "abd"), sent


def test_the_llama_cpp_checker_reads_dollar_as_the_end():
    reading, _ = llama_cpp_reading({"type": "string", "pattern": "^abc$"})
    assert not make_validator(reading).is_valid("abc\n")
