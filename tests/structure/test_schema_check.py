"""check_schema: meta-schema, every $ref resolved inside the schema, no endless $ref loop."""

from __future__ import annotations

import pytest

from vance_cli.structure.errors import InvalidSchema, check_schema


@pytest.mark.parametrize(
    ("schema", "ref", "why"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}, "#/$defs/nope", "nothing is defined at /$defs/nope"),
        ({"properties": {"a": {"$ref": "#thing"}}}, "#thing", "no $anchor 'thing'"),
        ({"properties": {"a": {"$ref": "#/required"}}, "required": ["a"]}, "#/required", "points at a list, not a schema"),
        ({"items": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/x"}]}}, "#/$defs/x", "nothing is defined"),
        ({"$defs": {"used": {"$ref": "#/definitions/gone"}}}, "#/definitions/gone", "nothing is defined"),
    ],
)
def test_a_ref_that_points_nowhere_is_invalid(schema, ref, why):
    with pytest.raises(InvalidSchema) as exc:
        check_schema(schema, where="the inline schema")
    message = exc.value.message
    assert message.startswith("the inline schema is not usable: ")
    assert f"$ref {ref!r}" in message and "does not resolve" in message and why in message
    assert exc.value.hint and '"$defs"' in exc.value.hint


def test_the_message_names_where_the_bad_ref_sits():
    with pytest.raises(InvalidSchema, match=r"\(at /properties/a/items/\$ref\)"):
        check_schema({"properties": {"a": {"items": {"$ref": "#/$defs/nope"}}}})


def test_a_remote_ref_is_reported_not_fetched(monkeypatch):
    import urllib.request

    def no_network(*a, **kw):
        raise AssertionError("check_schema tried to fetch a remote schema")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    with pytest.raises(InvalidSchema, match=r"\$ref 'https://example\.invalid/x\.json' \(at /\$ref\) does not resolve"):
        check_schema({"$ref": "https://example.invalid/x.json"})


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"a": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
        {"$defs": {"a": {"$anchor": "A", "type": "string"}}, "properties": {"x": {"$ref": "#A"}}},
        {"type": "object", "properties": {"child": {"$ref": "#"}}},  # recursion under properties
        # a nested $id changes the base URI, exactly as the validator resolves it
        {
            "$id": "https://example.invalid/root",
            "$defs": {"b": {"$id": "b.json", "$defs": {"c": {"type": "string"}}}},
            "properties": {"x": {"$ref": "b.json#/$defs/c"}},
        },
        {"$ref": "https://json-schema.org/draft/2020-12/schema"},  # the bundled meta-schema
        {"enum": [{"$ref": "#/nowhere"}]},  # data, not a reference
        {"properties": {"$ref": {"type": "string"}}},  # a property called "$ref"
        {"$dynamicAnchor": "node", "properties": {"kids": {"items": {"$dynamicRef": "#node"}}}},
    ],
)
def test_resolvable_refs_pass(schema):
    assert check_schema(schema) is schema


def test_a_ref_relative_to_a_nested_id_must_resolve_there():
    schema = {"$defs": {"c": {}, "b": {"$id": "https://example.invalid/b", "properties": {"q": {"$ref": "#/$defs/c"}}}}}
    with pytest.raises(InvalidSchema, match=r"\(at /\$defs/b/properties/q/\$ref\) does not resolve"):
        check_schema(schema)
