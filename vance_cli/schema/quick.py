"""A quick yes for tool arguments that plainly match a simple schema, so a turn need not import jsonschema.

``plainly_valid(schema, value)`` returns True only when ``value`` is valid against ``schema`` under
Draft 2020-12, for schemas built from the keywords tools use (type, properties, required,
additionalProperties, enum, const, bounds, lengths, items and annotations). For anything else, and
for every invalid value, it returns False and the caller asks jsonschema, which also words the
errors. It may say False for a valid value (it is strict on purpose: 1.0 as an integer, unusual
keywords); it never says True for an invalid one (tests/tools/test_quick_check.py checks that
against jsonschema with generated schemas and values).
"""

from __future__ import annotations

from typing import Any

_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)
_HANDLED = _ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "items",
    "minItems",
    "maxItems",
}


def _is_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "null":
        return value is None
    return False


def _plain(value: Any) -> bool:
    """Values whose equality in Python is JSON equality (no bool/number mixing, no floats)."""
    if isinstance(value, (str, bool)) or value is None:
        return True
    return isinstance(value, int)


def plainly_valid(schema: Any, value: Any) -> bool:
    if schema is True:
        return True
    if not isinstance(schema, dict) or not set(schema) <= _HANDLED:
        return False
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(isinstance(k, str) and _is_type(value, k) for k in kinds):
            return False
    if "enum" in schema:
        if not _plain(value) or not isinstance(schema["enum"], list):
            return False
        if not any(_plain(v) and type(v) is type(value) and v == value for v in schema["enum"]):
            return False
    if "const" in schema:
        if not (
            _plain(value)
            and _plain(schema["const"])
            and type(schema["const"]) is type(value)
            and schema["const"] == value
        ):
            return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for key, ok in (
            ("minimum", lambda b: value >= b),
            ("maximum", lambda b: value <= b),
            ("exclusiveMinimum", lambda b: value > b),
            ("exclusiveMaximum", lambda b: value < b),
        ):
            if key in schema:
                bound = schema[key]
                if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not ok(bound):
                    return False
    if isinstance(value, str):
        if "minLength" in schema and not (isinstance(schema["minLength"], int) and len(value) >= schema["minLength"]):
            return False
        if "maxLength" in schema and not (isinstance(schema["maxLength"], int) and len(value) <= schema["maxLength"]):
            return False
    if isinstance(value, list):
        if "minItems" in schema and not (isinstance(schema["minItems"], int) and len(value) >= schema["minItems"]):
            return False
        if "maxItems" in schema and not (isinstance(schema["maxItems"], int) and len(value) <= schema["maxItems"]):
            return False
        if "items" in schema and not all(plainly_valid(schema["items"], v) for v in value):
            return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        required = schema.get("required", [])
        extra = schema.get("additionalProperties", True)
        if not isinstance(props, dict) or not isinstance(required, list) or not isinstance(extra, bool):
            return False
        if any(name not in value for name in required):
            return False
        for name, item in value.items():
            if name in props:
                if not plainly_valid(props[name], item):
                    return False
            elif not extra:
                return False
    return True
