"""check_schema: meta-schema, every $ref resolved inside the schema, no endless $ref loop."""

from __future__ import annotations

import pytest

from vance_cli.errors import InvalidSchema
from vance_cli.schema.check import check_schema


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


# -- the merged meta-schemas accept exactly what jsonschema's own do ------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jsonschema import Draft4Validator, Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator  # noqa: E402

from vance_cli.schema.dialects import meta_validator  # noqa: E402

DRAFTS = (Draft4Validator, Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator)
_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.floats(-1.5, 2.5, allow_nan=False), st.sampled_from(["", "a", "#x", "(", "^a+$", "string", "http://x/y", "a b"]),
    st.lists(st.sampled_from(["string", "a", 1, None]), max_size=3),
)
_KEYWORDS = [
    "type", "enum", "const", "required", "minLength", "maxItems", "minimum", "exclusiveMinimum", "multipleOf", "pattern",
    "format", "items", "prefixItems", "properties", "patternProperties", "additionalProperties", "allOf", "anyOf", "not",
    "$ref", "$id", "$anchor", "$defs", "definitions", "dependencies", "dependentRequired", "uniqueItems", "title", "$comment",
    "contains", "minContains", "unevaluatedProperties", "$dynamicRef", "$recursiveRef", "$vocabulary", "contentSchema",
    "exclusiveMaximum", "maximum", "id", "additionalItems", "minProperties", "propertyNames", "if", "then", "examples",
]


def _schema_like(children):
    return st.dictionaries(st.sampled_from(_KEYWORDS), st.one_of(_VALUES, children, st.lists(children, max_size=2), st.dictionaries(st.sampled_from(["a", "^b", "("]), children, max_size=2)), max_size=4)


schema_like = st.recursive(st.one_of(st.booleans(), st.just({})), _schema_like, max_leaves=10)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schema_like)
def test_the_merged_meta_schemas_agree_with_jsonschema(schema):
    for cls in DRAFTS:
        reference = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER).is_valid(schema)
        assert meta_validator(cls).is_valid(schema) == reference, cls.__name__
        assert (next(meta_validator(cls).iter_errors(schema), None) is None) == reference, cls.__name__


def test_the_merged_meta_schemas_agree_on_the_corpus():
    import json
    from pathlib import Path

    paths = sorted((Path(__file__).parent / "corpus" / "schemas").glob("*.json"), key=lambda p: p.stat().st_size)
    for path in paths[:30]:  # the smallest: jsonschema's own 2020-12 check of the big ones takes seconds
        schema = json.loads(path.read_text())
        for cls in DRAFTS:
            reference = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER).is_valid(schema)
            assert meta_validator(cls).is_valid(schema) == reference, (path.name, cls.__name__)
