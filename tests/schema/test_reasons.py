"""The §4.1 reason text and the local validator (Draft 2020-12, formats asserted)."""

from __future__ import annotations

import pytest

from vance_cli.schema.reasons import (
    MAX_REASON_ERRORS,
    error_lines,
    make_validator,
    reason_text,
    show_value,
)

SPEC_SCHEMA = {
    "type": "object",
    "properties": {
        "priority": {"type": "integer", "maximum": 5},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z][a-z0-9-]+$"}},
        "timestamp": {"type": "string", "format": "date-time"},
    },
}


def test_reason_text_matches_the_spec_example_exactly():
    data = {"priority": 7, "tags": ["api", "auth", "Camel-Case"], "timestamp": "yesterday afternoon"}
    text = reason_text(error_lines(SPEC_SCHEMA, data))
    assert text == (
        "The previous output did not conform to the schema:\n"
        "- /priority: value must be ≤ 5 (was 7)\n"
        '- /tags/2: value must match pattern "^[a-z][a-z0-9-]+$" (was "Camel-Case")\n'
        '- /timestamp: value must match format "date-time"\n'
        "\n"
        "Please correct these and try again. Do not change fields that were valid."
    )


def test_invalid_date_time_is_rejected_by_the_format_checker():
    validator = make_validator({"type": "string", "format": "date-time"})
    assert not validator.is_valid("2026-13-45T99:00:00Z")
    assert not validator.is_valid("2026-05-06")  # a date is not a date-time
    assert validator.is_valid("2026-05-06T14:30:00Z")


def test_other_formats_are_asserted_too():
    assert error_lines({"type": "string", "format": "email"}, "not-an-email") == ['(root): value must match format "email"']
    assert error_lines({"type": "string", "format": "date"}, "2026-02-30") != []


def test_missing_and_extra_properties_get_their_own_pointer():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert error_lines(schema, {"zz": 1, "yy": 2}) == [
        "/a: required property is missing",
        "/b: required property is missing",
        "/yy: property is not allowed by the schema",
        "/zz: property is not allowed by the schema",
    ]


def test_constraint_words_cover_the_common_keywords():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "x": {"type": "number", "exclusiveMaximum": 1},
            "s": {"type": "string", "minLength": 3, "maxLength": 4},
            "e": {"enum": ["success", "failure"]},
            "l": {"type": "array", "minItems": 3, "uniqueItems": True},
            "t": {"type": "string"},
            "m": {"type": "integer", "multipleOf": 5},
        },
    }
    lines = error_lines(schema, {"n": 0, "x": 1, "s": "ab", "e": "ok", "l": [1, 1], "t": 3, "m": 7})
    assert "/n: value must be ≥ 1 (was 0)" in lines
    assert "/x: value must be < 1 (was 1)" in lines
    assert '/s: value must be at least 3 characters long (was "ab")' in lines
    assert '/e: value must be one of "success", "failure" (was "ok")' in lines
    assert "/l: array must contain at least 3 items (was [1, 1])" in lines
    assert "/l: array items must be unique (was [1, 1])" in lines
    assert "/t: value must be of type string (was 3)" in lines
    assert "/m: value must be a multiple of 5 (was 7)" in lines


def test_array_indexes_sort_numerically():
    schema = {"type": "array", "items": {"type": "integer"}}
    lines = error_lines(schema, ["a"] * 12)
    assert [line.split(":")[0] for line in lines[:3]] == ["/0", "/1", "/2"]
    assert lines[-1].startswith("/11:")


def test_long_values_are_truncated():
    shown = show_value("x" * 500)
    assert len(shown) == 60 and shown.endswith("…")
    line = error_lines({"type": "integer"}, "y" * 500)[0]
    assert len(line) < 120


def test_reason_lists_at_most_ten_errors_and_counts_the_rest():
    lines = [f"/f{i}: value must be of type string (was {i})" for i in range(14)]
    text = reason_text(lines)
    assert text.count("\n- /f") == MAX_REASON_ERRORS
    assert "- … and 4 more" in text
    assert text.endswith("Please correct these and try again. Do not change fields that were valid.")


def test_root_errors_are_named_root():
    assert error_lines({"type": "object"}, [1]) == ["(root): value must be of type object (was [1])"]


def test_anyof_failure_names_the_closest_alternative():
    schema = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    (line,) = error_lines(schema, "seven")
    assert line.startswith("(root): value must match one of the allowed alternatives")
    assert line.endswith('(was "seven")')


def test_valid_instance_has_no_lines():
    assert error_lines(SPEC_SCHEMA, {"priority": 5, "tags": ["ok"], "timestamp": "2026-05-06T14:30:00+02:00"}) == []


def test_a_ref_loop_is_an_invalid_schema_not_a_crash():
    import pytest

    from vance_cli.errors import InvalidSchema

    with pytest.raises(InvalidSchema, match=r"\$ref loop"):
        error_lines({"anyOf": [{"$ref": "#"}, {"type": "string"}]}, 5)


def test_error_lines_turns_an_unresolvable_ref_into_invalid_schema():
    from vance_cli.errors import InvalidSchema

    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}
    with pytest.raises(InvalidSchema, match=r"\$ref '#/\$defs/nope' does not resolve") as exc:
        error_lines(schema, {"a": 1})
    assert exc.value.hint


def test_validation_never_fetches_a_remote_ref(monkeypatch):
    import urllib.request

    from vance_cli.errors import InvalidSchema

    def no_network(*a, **kw):
        raise AssertionError("validation tried to fetch a remote schema")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    with pytest.raises(InvalidSchema, match="does not resolve"):
        error_lines({"properties": {"a": {"$ref": "https://example.invalid/s.json"}}}, {"a": 1})
