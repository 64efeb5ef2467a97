"""What a schema node says about values: its types, the keywords of each type, null, JSON equality.

Small pure helpers for walks that reshape a schema (the provider schemas in ``llm/output``).
"""

from __future__ import annotations

from typing import Any

from vance_cli.schema.keywords import LIST, MAP, ONE

# Keywords whose values are schemas, by shape (contentSchema is an annotation in 2020-12).
MAP_KEYS = MAP
LIST_KEYS = LIST
ONE_KEYS = tuple(k for k in ONE if k != "contentSchema")
# Plain constraints (values are not schemas); dropped ones are moved into the description.
VALUE_KEYS = (
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "dependentRequired",
    "format",
)
# The keywords that constrain values; everything else (title, description, default, examples,
# $comment, $schema, $id, x-*, unknown words) is an annotation.
ASSERTING = frozenset(set(MAP_KEYS) - {"$defs", "definitions"} | set(LIST_KEYS) | set(ONE_KEYS) | set(VALUE_KEYS)) | {
    "type",
    "enum",
    "const",
    "required",
    "$ref",
    "$dynamicRef",
}

# Keywords that only constrain values of one JSON type.
OBJECT_ONLY = frozenset(
    {
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "propertyNames",
        "unevaluatedProperties",
    }
)
ARRAY_ONLY = frozenset(
    {
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
    }
)
STRING_ONLY = frozenset({"minLength", "maxLength", "pattern", "format"})
NUMBER_ONLY = frozenset({"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def asserting(node: dict[str, Any]) -> set[str]:
    """The keywords of ``node`` that constrain values."""
    return {k for k in node if k in ASSERTING}


def node_types(node: dict[str, Any]) -> list[str]:
    """The type names ``type`` gives (a name or a list); empty when it gives none."""
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true != 1 (Python's == says True == 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def json_in(value: Any, values: list[Any]) -> bool:
    """``value in values`` with JSON equality."""
    return any(json_equal(value, v) for v in values)


def json_type(value: Any) -> str:
    """The JSON type name of a value (an integral float is an integer, as in 2020-12)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def types_of_values(values: list[Any]) -> list[str]:
    """The JSON types of ``values`` (integer folded into number when both occur)."""
    found = list(dict.fromkeys(json_type(v) for v in values))
    if "integer" in found and "number" in found:
        found.remove("integer")
    return found


def accepts_null(node: Any) -> bool:
    """Whether the schema obviously admits null (type/enum/anyOf), without resolving $ref."""
    if node is True or node == {}:
        return True
    if not isinstance(node, dict):
        return False
    if "null" in node_types(node) and ("enum" not in node or None in (node.get("enum") or [])):
        return True
    if "enum" in node and None in (node.get("enum") or []) and "type" not in node:
        return True
    if "const" in node and node["const"] is None:
        return True
    return any(isinstance(s, dict) and accepts_null(s) for s in node.get("anyOf", []) or [])


def make_nullable(node: Any) -> Any:
    """The schema admitting null as well (used for optional properties under OpenAI strict)."""
    if accepts_null(node):
        return node
    types = node_types(node) if isinstance(node, dict) else []
    primitive = bool(types) and not ({"object", "array"} & set(types))
    # Primitives get a type list; objects and arrays a union, which every strict provider accepts.
    if primitive and not ({"anyOf", "$ref", "const"} & node.keys()):
        out = dict(node)
        out["type"] = "null" if types == ["null"] else types if "null" in types else types + ["null"]
        if "enum" in out and isinstance(out["enum"], list):
            out["enum"] = list(out["enum"]) + [None]
        return out
    if isinstance(node, dict) and "enum" in node and not ({"anyOf", "$ref", "const", "type"} & node.keys()):
        out = dict(node)
        out["enum"] = list(out["enum"]) + [None]
        return out
    return {"anyOf": [node, {"type": "null"}]}


def one_or_list(types: list[str]) -> Any:
    """The value of ``type`` for these names."""
    return types[0] if len(types) == 1 else types


def prune_for_types(node: dict[str, Any], types: list[str]) -> dict[str, Any]:
    """``node`` without the keywords of types it does not allow (they constrain nothing)."""
    drop: set[str] = set()
    if "object" not in types:
        drop |= OBJECT_ONLY
    if "array" not in types:
        drop |= ARRAY_ONLY
    if "string" not in types:
        drop |= STRING_ONLY
    if "number" not in types and "integer" not in types:
        drop |= NUMBER_ONLY
    if not drop & node.keys():
        return node
    return {k: v for k, v in node.items() if k not in drop}
