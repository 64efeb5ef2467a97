"""Issue 15's classes, one minimal schema (and its neighbours) for every family.

For each family's default capabilities and the documented ``strict_json_schema = true``
override (suite_driver.FAMILIES: OpenAI strict, Anthropic, Anthropic strict, Gemini, Gemini
strict, Ollama, an openai-compatible server claiming strict), with and without the ``_need``
escape, each schema goes through check_schema → build_plan → the answer's way back → local
validation (suite_driver.run_case). Asserted for every valid instance of the caller's schema:
it (in strict's shape: nulls for absent optional fields, the envelope) validates against the
provider schema sent, and comes back as a value the caller's schema accepts; for every invalid
one: the way back does not make it accepted; for the plan: the family's documented rules hold
(strict_rules.py), every ``$ref`` resolves inside the provider schema, no crash, the caller's
schema unchanged; where a strict family's plan is not strict, a downgrade line says why.
"""

from __future__ import annotations

from collections import Counter

import pytest
from jsonschema import Draft202012Validator

from tests.structure.instances import provider_reply
from tests.structure.strict_rules import openai_strict_problems
from tests.structure.suite_driver import (
    FAMILIES,
    Case,
    Problems,
    _refs_resolve,
    closed_line,
    run_case,
    undeclared_keys,
)
from vance_cli.llm.output.plan import build_plan

DRAFT7 = "http://json-schema.org/draft-07/schema#"

# (id, schema, valid instances, invalid instances), by issue-15 class.
CLASSES: dict[str, list[tuple[str, dict, list, list]]] = {
    "untyped properties/items in strict": [
        ("properties", {"properties": {"a": {"type": "string"}}}, [1, {"a": "s"}], [{"a": 1}]),
        ("items", {"items": {"type": "string"}}, [{"x": 1}, ["s"]], [[1]]),
        ("nested", {"type": "object", "properties": {"x": {"properties": {"a": {"type": "string"}}}}},
         [{"x": 1}, {"x": {"a": "s"}}], [{"x": {"a": 1}}]),
        ("nested items", {"type": "object", "properties": {"xs": {"items": {"type": "string"}}}},
         [{"xs": 1}, {"xs": ["a"]}], [{"xs": [1]}]),
        ("prefixItems", {"prefixItems": [{"type": "integer"}]}, [1, "x", [1]], [["x"]]),
        ("required", {"required": ["a"]}, [1, {"a": 1}], [{}]),
        ("through a ref", {"$ref": "#/$defs/o", "$defs": {"o": {"properties": {"a": {"type": "string"}}}}},
         [1, {"a": "s"}], [{"a": 1}]),
        ("typed by allOf", {"allOf": [{"type": "object"}, {"properties": {"a": {"type": "string"}}}]},
         [{"a": "s"}, {}], [1, {"a": 1}]),
        ("additionalProperties", {"additionalProperties": {"type": "string"}}, [1, {"a": "s"}], [{"a": 1}]),
    ],
    "anyOf branches closed one by one": [
        ("issue", {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"type": "object", "properties": {"b": {"type": "integer"}}},
        ]}, [{"a": 1, "b": 2}, {"a": 1}, {"b": 2}, {}], [{"a": "x", "b": "y"}]),
        ("through refs", {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": {
            "A": {"type": "object", "properties": {"a": {"type": "integer"}}},
            "B": {"type": "object", "properties": {"b": {"type": "integer"}}},
        }}, [{"a": 1, "b": 2}, {"a": 1}], [{"a": "x", "b": "y"}]),
        ("in a property", {"type": "object", "required": ["p"], "properties": {"p": {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"type": "object", "properties": {"b": {"type": "integer"}}},
        ]}}}, [{"p": {"a": 1, "b": 2}}], [{"p": {"a": "x", "b": "x"}}]),
        ("beside properties", {"type": "object", "properties": {"c": {"type": "string"}}, "anyOf": [
            {"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "integer"}}},
        ]}, [{"a": 1, "b": 2, "c": "x"}], [{"c": 1}]),
        ("with a string branch", {"anyOf": [
            {"type": "string"},
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ]}, ["s", {"a": 1, "b": 2}, {"b": 1}], [{"a": "x", "b": "x"}]),
        ("same name, other schema", {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},
        ]}, [{"a": 1, "b": 2}, {"a": "s", "b": 2}], [{"a": True}]),
        ("nested anyOf", {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"anyOf": [
                {"type": "object", "properties": {"b": {"type": "integer"}}},
                {"type": "object", "properties": {"c": {"type": "integer"}}},
            ]},
        ]}, [{"a": 1, "b": 2, "c": 3}], [{"a": "x", "b": "x", "c": "x"}]),
        ("array items", {"type": "array", "items": {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"type": "object", "properties": {"b": {"type": "integer"}}},
        ]}}, [[{"a": 1, "b": 2}]], [[{"a": "x", "b": "x"}]]),
        ("unevaluatedProperties", {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"type": "object", "properties": {"b": {"type": "integer"}}},
        ], "unevaluatedProperties": False}, [{"a": 1, "b": 2}, {"a": 1}], [{"c": 1}]),
    ],
    "allOf closed part by part": [
        ("issue", {
            "type": "object", "properties": {"bar": {"type": "integer"}}, "required": ["bar"],
            "allOf": [
                {"properties": {"foo": {"type": "string"}}, "required": ["foo"]},
                {"properties": {"baz": {"type": "null"}}, "required": ["baz"]},
            ],
        }, [{"foo": "quux", "bar": 2, "baz": None}], [{"foo": "quux", "bar": 2}]),
        ("through refs", {"allOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": {
            "A": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            "B": {"type": "object", "properties": {"b": {"type": "integer"}}},
        }}, [{"a": 1, "b": 2}, {"a": 1}], [{"b": 1}]),
        ("in a property", {"type": "object", "properties": {"p": {"allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "string"}}},
        ]}}}, [{"p": {"a": 1, "b": "x"}}], [{"p": {"a": "x"}}]),
        ("with an anyOf part", {"allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"anyOf": [{"properties": {"b": {"type": "integer"}}}, {"properties": {"c": {"type": "integer"}}}]},
        ]}, [{"a": 1, "b": 1, "c": 2}], [{"a": "x"}]),
        ("nested", {"allOf": [
            {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}]},
            {"properties": {"b": {"type": "integer"}}},
        ]}, [{"a": 1, "b": 2}], [{"a": "x"}]),
        ("in array items", {"type": "array", "items": {"allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "integer"}}},
        ]}}, [[{"a": 1, "b": 2}]], [[{"a": "x"}]]),
    ],
    "draft-07 $ref beside $id and other keywords": [
        ("issue", {
            "$schema": DRAFT7, "$id": "http://localhost:1234/sibling_id/base/",
            "definitions": {
                "foo": {"$id": "http://localhost:1234/sibling_id/foo.json", "type": "string"},
                "base_foo": {"$id": "foo.json", "type": "number"},
            },
            "allOf": [{"$id": "http://localhost:1234/sibling_id/", "$ref": "foo.json"}],
        }, [1], ["a"]),
        ("ref beside type", {"$schema": DRAFT7, "definitions": {"a": {"type": "integer"}}, "type": "object",
                             "properties": {"x": {"$ref": "#/definitions/a", "type": "string"}}}, [{"x": 1}], [{"x": "s"}]),
        ("root ref beside type", {"$schema": DRAFT7, "$ref": "#/definitions/A", "type": "string",
                                  "definitions": {"A": {"type": "integer"}}}, [1], ["x"]),
        ("$id anchor", {"$schema": DRAFT7, "$id": "http://e.com/root.json",
                        "definitions": {"A": {"$id": "#foo", "type": "integer"}},
                        "properties": {"a": {"$ref": "#foo"}}}, [{"a": 1}], [{"a": "x"}]),
        ("ref beside a foreign $id", {"$schema": DRAFT7, "$id": "http://e.com/root.json",
                                      "definitions": {"A": {"type": "integer"}},
                                      "properties": {"a": {"$id": "http://other.com/x.json", "$ref": "#/definitions/A"}}},
         [{"a": 1}], [{"a": "x"}]),
    ],
    "$dynamicRef targets": [
        ("issue", {"type": "object", "$dynamicRef": "#addons", "properties": {"foo": {"type": "string"}},
                   "$defs": {"addons": {"$dynamicAnchor": "addons", "properties": {"bar": {"type": "string"}}}}},
         [{"foo": "x", "bar": "y"}, {"foo": "x"}], [{"bar": 1}]),
        ("target requires", {"type": "object", "$dynamicRef": "#addons", "properties": {"foo": {"type": "string"}},
                             "$defs": {"addons": {"$dynamicAnchor": "addons", "properties": {"bar": {"type": "string"}},
                                                  "required": ["bar"]}}},
         [{"foo": "x", "bar": "y"}], [{"foo": "x"}]),
        ("with unevaluatedProperties", {
            "type": "object", "$dynamicRef": "#addons", "properties": {"foo": {"type": "string"}},
            "unevaluatedProperties": False,
            "$defs": {"addons": {"$dynamicAnchor": "addons", "properties": {"bar": {"type": "string"}}}},
        }, [{"foo": "x", "bar": "y"}, {"foo": "x"}], [{"foo": "x", "baz": 1}]),
        ("in a property", {"type": "object", "properties": {"p": {
            "type": "object", "$dynamicRef": "#addons", "properties": {"foo": {"type": "string"}}}},
            "$defs": {"addons": {"$dynamicAnchor": "addons", "type": "object", "properties": {"bar": {"type": "integer"}}}}},
         [{"p": {"foo": "x", "bar": 1}}], [{"p": {"bar": "x"}}]),
        ("typed target", {"$dynamicRef": "#t", "$defs": {"t": {"$dynamicAnchor": "t", "type": "object",
                                                            "properties": {"a": {"type": "integer"}}}}},
         [{"a": 1}, {}], [1, {"a": "x"}]),
        ("recursive tree", {"$id": "https://x.example/root", "$dynamicAnchor": "node", "type": "object", "properties": {
            "kids": {"type": "array", "items": {"$dynamicRef": "#node"}}, "v": {"type": "integer"}}},
         [{"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]}], [{"v": "x"}, {"kids": [{"v": "x"}]}]),
        ("under a $ref, unevaluatedProperties beside", {
            "$ref": "#/$defs/base", "unevaluatedProperties": False, "$defs": {
                "base": {"type": "object", "$dynamicRef": "#ext", "properties": {"a": {"type": "string"}}},
                "ext": {"$dynamicAnchor": "ext", "properties": {"b": {"type": "string"}}}}},
         [{"a": "x", "b": "y"}], [{"c": 1}]),
        ("two anchors of the name (the dynamic scope decides)", {
            "$id": "https://e.com/root", "type": "object", "$ref": "list", "properties": {"foo": {"type": "string"}},
            "$defs": {"list": {"$id": "list", "$dynamicAnchor": "addons", "type": "object",
                               "properties": {"x": {"$dynamicRef": "#addons"}}},
                      "addons": {"$id": "addons", "$dynamicAnchor": "addons", "properties": {"bar": {"type": "string"}}}}},
         [{"foo": "a", "x": {"x": {}}}, {"x": {"bar": 1}}], [{"foo": 1}, {"x": 1}]),
    ],
    "definition names that need escaping": [
        ("issue", {"type": "object", "properties": {
            "tilde": {"$ref": "#/$defs/tilde~0field"}, "slash": {"$ref": "#/$defs/slash~1field"},
            "percent": {"$ref": "#/$defs/percent%25field"}, "quote": {"$ref": "#/$defs/foo%22bar"}},
            "$defs": {"tilde~field": {"type": "integer"}, "slash/field": {"type": "integer"},
                      "percent%field": {"type": "integer"}, 'foo"bar': {"type": "integer"}}},
         [{"tilde": 1, "slash": 2, "percent": 3, "quote": 4}], [{"slash": "x"}, {"quote": "x"}]),
        ("draft-07 definitions", {"$schema": DRAFT7, "type": "object", "properties": {
            "a": {"$ref": "#/definitions/a~1b"}, "t": {"$ref": "#/definitions/t~0"}},
            "definitions": {"a/b": {"type": "integer"}, "t~": {"type": "string"}}},
         [{"a": 1, "t": "x"}], [{"a": "x"}, {"t": 1}]),
        ("a space", {"type": "object", "properties": {"a": {"$ref": "#/$defs/foo%20bar"}},
                     "$defs": {"foo bar": {"type": "integer"}}}, [{"a": 1}], [{"a": "x"}]),
        ("a property pointer", {"type": "object", "properties": {"a/b": {"type": "integer"},
                                                                 "c": {"$ref": "#/properties/a~1b"}}},
         [{"a/b": 1, "c": 2}], [{"c": "x"}]),
        ("into an escaped definition", {"type": "object", "properties": {"a": {"$ref": "#/$defs/x~1y/properties/p%25q"}},
                                        "$defs": {"x/y": {"type": "object", "properties": {"p%q": {"type": "integer"}}}}},
         [{"a": 1}], [{"a": "x"}]),
        ("non-ASCII", {"type": "object", "properties": {"a": {"$ref": "#/$defs/%C3%A9t%C3%A9"}},
                       "$defs": {"été": {"type": "integer"}}}, [{"a": 1}], [{"a": "x"}]),
        ("recursive", {"type": "object", "properties": {"n": {"$ref": "#/$defs/a~1b"}}, "$defs": {"a/b": {
            "type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/a~1b"}}}}},
         [{"n": {"v": 1, "next": {"v": 2}}}], [{"n": {"v": "x"}}]),
        ("a renamed name taken", {"type": "object", "properties": {"a": {"$ref": "#/$defs/a~1b"}, "b": {"$ref": "#/$defs/a_b"}},
                                  "$defs": {"a/b": {"type": "integer"}, "a_b": {"type": "string"}}},
         [{"a": 1, "b": "x"}], [{"a": "x"}, {"b": 1}]),
    ],
    "integral float const": [
        ("issue", {"const": -2.0}, [-2, -2.0], [2, "x"]),
        ("typed", {"type": "number", "const": 2.0}, [2], [3]),
        ("in a property", {"type": "object", "properties": {"k": {"const": 1.0}}, "required": ["k"]},
         [{"k": 1}], [{"k": 2}]),
        ("enum", {"enum": [1.0, 2.5, "a"]}, [1, 2.5, "a"], [2]),
        ("object const", {"const": {"a": 1.0}}, [{"a": 1}], [{"a": 2}]),
        ("array const", {"type": "object", "properties": {"k": {"const": [1.0, 2]}}, "required": ["k"]},
         [{"k": [1, 2]}], [{"k": [1]}]),
        ("bounds", {"type": "integer", "minimum": 1.0, "maximum": 3.0, "multipleOf": 1.0}, [1, 2, 3], [0, 4]),
    ],
    "empty enum": [
        ("issue", {"enum": []}, [], [1, "x", None]),
        ("typed", {"type": "string", "enum": []}, [], ["x"]),
        ("in a property", {"type": "object", "properties": {"a": {"enum": []}, "b": {"type": "integer"}},
                           "required": ["b"]}, [{"b": 1}], [{"b": 1, "a": 1}]),
        ("typed in a property", {"type": "object", "properties": {"a": {"type": "string", "enum": []},
                                                                  "b": {"type": "integer"}}, "required": ["b"]},
         [{"b": 1}], [{"b": 1, "a": "x"}]),
        ("emptied by its type", {"type": "object", "properties": {"a": {"type": "string", "enum": [1, 2]},
                                                                  "b": {"type": "integer"}}, "required": ["b"]},
         [{"b": 1}], [{"a": 1, "b": 1}]),
        ("an anyOf branch", {"anyOf": [{"enum": []}, {"type": "integer"}]}, [1], ["x"]),
        ("items", {"type": "array", "items": {"enum": []}}, [[]], [[1]]),
    ],
    "Ollama/other sent as written": [
        ("an $anchor", {"$ref": "#foo", "$defs": {"A": {"$anchor": "foo", "type": "integer"}}}, [1], ["x"]),
        ("a URN root $id", {"$id": "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed", "properties": {
            "foo": {"$ref": "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed#/$defs/bar"}},
            "$defs": {"bar": {"type": "string"}}}, [{"foo": "x"}], [{"foo": 1}]),
        ("a relative ref", {"$id": "http://example.com/root.json", "$ref": "item.json",
                            "$defs": {"i": {"$id": "item.json", "type": "integer"}}}, [1], ["x"]),
        ("draft-07 tuple pointer", {"$schema": DRAFT7, "type": "array", "items": [{"type": "integer"}, {"$ref": "#/items/0"}],
                                    "additionalItems": {"$ref": "#/items/0"}}, [[1, 2, 3]], [[1, 2, "x"]]),
        ("draft-07 dependencies", {"$schema": DRAFT7, "type": "object", "dependencies": {
            "a": {"properties": {"b": {"type": "integer"}}}, "c": ["d"]}},
         [{"a": 1, "b": 2}, {"c": 1, "d": 1}], [{"a": 1, "b": "x"}, {"c": 1}]),
        ("a property pointer", {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"$ref": "#/properties/a"}}},
         [{"a": 1, "b": 2}], [{"b": "x"}]),
        ("a ref to the root $id", {"$id": "http://e.com/r", "type": "object", "properties": {
            "kids": {"type": "array", "items": {"$ref": "r"}}, "v": {"type": "integer"}}},
         [{"v": 1, "kids": [{"v": 2}]}], [{"kids": [{"v": "x"}]}]),
        ("nested $id bases", {"$id": "http://e.com/a/", "$defs": {"b": {"$id": "b/", "$defs": {
            "c": {"$id": "c.json", "type": "integer"}}, "$ref": "c.json"}}, "$ref": "b/"}, [1], ["x"]),
    ],
    # Found while writing these tests: strict mode closed an object to its named properties and
    # dropped its patternProperties, so a key only a pattern allows could not be sent.
    "patternProperties beside properties in strict": [
        ("open", {"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x-": {"type": "integer"}}},
         [{"a": "s", "x-1": 1}], [{"x-1": "s"}]),
        ("additionalProperties false", {"type": "object", "properties": {"a": {"type": "string"}},
                                        "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False},
         [{"a": "s", "x-1": 1}], [{"x-1": "s"}, {"b": 1}]),
        ("a false pattern", {"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x-": False}},
         [{"a": "s"}], [{"x-1": "s"}]),
    ],
    # Found after the issue: a key one part declares, borrowed with that part's schema into a
    # strict object (an open sibling alternative, or the object beside a removed conditional
    # branch) that allows it any value: closed, that object forbade the valid answers whose value
    # only the open part allows. Strict goes off there; where the open part itself gives the key
    # a schema (additionalProperties, both then and else), the borrowed schema is exact and
    # strict stays on.
    "an open part borrowing a key another part declares": [
        ("oneOf", {"oneOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ]}, [{"a": 1, "b": "x"}, {"a": 1}, {"b": 2}], [{"a": 1, "b": 2}, {}]),
        ("anyOf", {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"type": "object", "properties": {"b": {"type": "integer"}}},
        ]}, [{"a": 1, "b": "x"}, {"a": "x", "b": 2}, {"a": 1, "b": 2}], [{"a": "x", "b": "y"}]),
        ("overlapping keys", {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a"]},
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        ]}, [{"a": "s", "b": "x"}, {"a": 1, "b": 2}], [{"a": 1, "b": "x"}]),
        ("discriminated union", {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind", "x"]},
            {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "string"}}, "required": ["kind", "y"]},
        ]}, [{"kind": "a", "x": 1, "y": 5}, {"kind": "b", "y": "s"}], [{"kind": "a", "x": "s"}]),
        ("in a property", {"type": "object", "required": ["p"], "properties": {"p": {"oneOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ]}}}, [{"p": {"a": 1, "b": "x"}}], [{"p": {"a": 1, "b": 2}}]),
        ("through refs", {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": {
            "A": {"type": "object", "properties": {"a": {"type": "integer"}}},
            "B": {"type": "object", "properties": {"b": {"type": "integer"}}},
        }}, [{"a": 1, "b": "x"}], [{"a": "x", "b": "y"}]),
        ("then without else", {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
                               "if": {"properties": {"a": {"const": 1}}},
                               "then": {"properties": {"b": {"type": "integer"}}}},
         [{"a": 2, "b": "x"}, {"a": 1, "b": 2}], [{"a": 1, "b": "x"}]),
        ("dependentSchemas", {"type": "object", "properties": {"a": {"type": "integer"}},
                              "dependentSchemas": {"c": {"properties": {"b": {"type": "integer"}}}}},
         [{"a": 2, "b": "x"}, {"c": 1, "b": 2}], [{"c": 1, "b": "x"}]),
        ("an anyOf part left unmerged", {"type": "object", "properties": {"c": {"type": "integer"}}, "allOf": [
            {"anyOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "integer"}}}]},
            {"anyOf": [{"properties": {"c": {"type": "integer"}}}, {"properties": {"d": {"type": "integer"}}}]},
        ]}, [{"a": 1, "b": "x"}, {"a": 1, "b": 2, "c": 3, "d": 4}], [{"c": "x"}]),
        # Exact borrowing: strict stays on (asserted in test_provider_schema_suite_classes.py).
        ("additionalProperties schema", {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "additionalProperties": False},
        ]}, [{"a": 1, "b": "x"}, {"b": 2}], [{"a": 1, "b": 2}]),
        ("then and else", {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
                           "if": {"properties": {"a": {"const": 1}}},
                           "then": {"properties": {"b": {"type": "integer"}}},
                           "else": {"properties": {"b": {"type": "string"}}}},
         [{"a": 2, "b": "x"}, {"a": 1, "b": 2}], [{"a": 1, "b": "x"}, {"a": 2, "b": 2}]),
        ("closed alternatives", {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "additionalProperties": False},
        ]}, [{"a": 1}, {"b": 2}], [{"a": 1, "b": 2}]),
    ],
    # Found while checking the README's null rule: the way back kept an injected null because a
    # `then` branch allows null for the field, though the field's own schema (and `else`) does not.
    # (An explicit null there is not an invalid instance to try: strict's null for an absent
    # optional field reads the same, and the way back drops it.)
    "a null a branch allows, kept where it is invalid": [
        ("then allows null", {"type": "object", "properties": {"kind": {"enum": ["card", "bank"]}, "note": {"type": "string"}},
                              "required": ["kind"], "if": {"properties": {"kind": {"const": "card"}}},
                              "then": {"properties": {"note": {"type": ["string", "null"]}}}},
         [{"kind": "bank"}, {"kind": "card"}, {"kind": "bank", "note": "n"}], [{"kind": "bank", "note": 5}]),
        ("else rejects null", {"type": "object", "properties": {"kind": {"enum": ["card", "bank"]}},
                               "required": ["kind"], "if": {"properties": {"kind": {"const": "card"}}},
                               "then": {"properties": {"note": {"type": ["string", "null"]}}},
                               "else": {"properties": {"note": {"type": "string"}}}},
         [{"kind": "bank"}, {"kind": "card"}, {"kind": "card", "note": None}], [{"kind": "bank", "note": 5}]),
    ],
    # The issue's real-world shapes (corpus findings).
    "a $ref with siblings, a recursive $ref'd array": [
        ("ref with a description", {"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "description": "x"}},
                                    "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}},
         [{"a": {"x": 1}}, {}], [{"a": {"x": "s"}}]),
        ("optional strings in a recursive array", {"$ref": "#/$defs/Node", "$defs": {"Node": {
            "type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "note": {"type": "string"},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}},
         [{"name": "a", "kids": [{"name": "b"}, {"name": "c", "note": "n"}]}], [{"name": "a", "kids": [{"note": "x"}]}]),
    ],
}

CASES = [(cls, cid, schema, valid, invalid) for cls, rows in CLASSES.items() for cid, schema, valid, invalid in rows]


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("cls, cid, schema, valid, invalid", CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_a_valid_answer_stays_valid_against_the_schema_sent(family, cls, cid, schema, valid, invalid):
    caps = FAMILIES[family]
    for allow_need in (False, True):
        problems = Problems()
        case = Case(f"{cls}: {cid}", schema, [("valid", v, True) for v in valid] + [("invalid", v, False) for v in invalid])
        run_case(case, caps, problems, allow_need=allow_need)
        found = [f"{kind}: {line}" for kind, lines in problems.found.items() for line in lines]
        assert found == [], f"need={allow_need}"
        assert problems.plans == 1

        plan = build_plan(schema, caps, allow_need=allow_need)
        assert _refs_resolve(plan.schema) == []
        sent = Draft202012Validator(plan.schema)
        for value in valid:
            reply, dropped = provider_reply(value, plan.schema, envelope=plan.envelope)
            # Only keys no part of the caller's schema declares at their place may be left out
            # (by an object strict mode closed, which a downgrade line says).
            assert not Counter(dropped) - undeclared_keys(schema, value), (value, plan.schema)
            assert not dropped or closed_line(plan)
            assert sent.is_valid(reply), (value, plan.schema)
        if caps.strict_json_schema:
            if plan.strict and plan.family == "openai":
                assert openai_strict_problems(plan.schema) == []
            if not plan.strict:
                assert plan.downgrades[0].startswith("strict output off: ")


FIRSTS = [(cls, rows[0]) for cls, rows in CLASSES.items()]


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("cls, row", FIRSTS, ids=[c for c, _ in FIRSTS])
async def test_call_for_json_gets_each_valid_answer_back(scripted, family, cls, row):
    """End to end (Benjy's call_for_json, and with ``_need`` as ``vance structure`` asks): a
    scripted model that sends each valid answer the way a provider holding the request's schema
    would gets it accepted in one iteration, as a value the caller's schema accepts."""
    from vance_cli.llm.output.json_call import call_for_json
    from vance_cli.messages import Message
    from vance_cli.schema.reasons import make_validator

    _cid, schema, valid, _invalid = row
    caps = FAMILIES[family]
    caller = make_validator(schema)
    for allow_need in (False, True):
        plan = build_plan(schema, caps, allow_need=allow_need)
        for value in valid:
            reply, dropped = provider_reply(value, plan.schema, envelope=plan.envelope)
            model = scripted(reply, caps=caps)
            out = await call_for_json(
                model, messages=[Message(role="user", content="go")], schema=schema, capabilities=caps,
                allow_need=allow_need,
            )
            assert out.status == "ok" and out.iterations == 1, (value, out.errors)
            assert caller.is_valid(out.data)
            if not dropped:
                assert out.data == value  # exactly the answer: the way back strips only injected nulls
            sent = model.requests[0].response_format["json_schema"]
            assert sent["schema"] == plan.schema and sent["strict"] is plan.strict
