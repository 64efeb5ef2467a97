"""Mechanical checkers for provider-side schemas (used by the unit and the property tests)."""

from __future__ import annotations

from typing import Any

OPENAI_UNSUPPORTED = {
    "allOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
    "minLength", "maxLength", "uniqueItems", "patternProperties", "unevaluatedProperties",
    "unevaluatedItems", "propertyNames", "minProperties", "maxProperties", "contains", "minContains",
    "maxContains", "prefixItems", "const", "default", "examples", "$schema", "$id", "$comment",
}
OPENAI_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
ANTHROPIC_UNSUPPORTED = {
    "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "minLength",
    "maxLength", "uniqueItems", "maxItems", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "patternProperties", "propertyNames", "minProperties",
    "maxProperties", "contains",
}
GEMINI_ALLOWED = {
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "enum", "format",
    "minimum", "maximum", "minItems", "maxItems", "anyOf", "$ref", "$defs", "title", "description",
}


def _resolve(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for part in ref[1:].lstrip("/").split("/") if ref != "#" else []:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def subschemas(node: Any, path: str = ""):
    """Every schema node with its schema pointer."""
    if not isinstance(node, dict):
        return
    yield path, node
    for key in ("properties", "$defs", "patternProperties", "dependentSchemas"):
        for name, sub in (node.get(key) or {}).items():
            yield from subschemas(sub, f"{path}/{key}/{name}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(node.get(key) or []):
            yield from subschemas(sub, f"{path}/{key}/{i}")
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        if isinstance(node.get(key), dict):
            yield from subschemas(node[key], f"{path}/{key}")


def openai_strict_problems(schema: dict[str, Any]) -> list[str]:
    """Every way ``schema`` breaks OpenAI's strict Structured Outputs rules (empty = accepted)."""
    problems = []
    if schema.get("type") != "object" or {"anyOf", "oneOf", "allOf"} & schema.keys():
        problems.append("root: must be a plain object schema")
    for path, node in subschemas(schema):
        where = path or "(root)"
        bad = OPENAI_UNSUPPORTED & node.keys()
        if bad:
            problems.append(f"{where}: unsupported keywords {sorted(bad)}")
        if "format" in node and node["format"] not in OPENAI_FORMATS:
            problems.append(f"{where}: unsupported format {node['format']}")
        types = node.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        if not (types or {"anyOf", "$ref", "enum"} & node.keys()):
            problems.append(f"{where}: no type")
        if "object" in types or "properties" in node:
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties must be false")
            if set(node.get("required", [])) != set(node.get("properties", {})):
                problems.append(f"{where}: every property must be required")
        if "array" in types and "items" not in node:
            problems.append(f"{where}: array without items")
        if "$ref" in node:
            try:
                _resolve(schema, node["$ref"])
            except (KeyError, IndexError, TypeError):
                problems.append(f"{where}: $ref {node['$ref']} does not resolve")
    return problems


def anthropic_problems(schema: dict[str, Any]) -> list[str]:
    problems = []
    if schema.get("type") != "object":
        problems.append("root: must be an object (tool input_schema)")
    for path, node in subschemas(schema):
        bad = ANTHROPIC_UNSUPPORTED & node.keys()
        if bad:
            problems.append(f"{path or '(root)'}: unsupported keywords {sorted(bad)}")
        if isinstance(node.get("minItems"), int) and node["minItems"] > 1:
            problems.append(f"{path}: minItems > 1")
    return problems


def gemini_problems(schema: dict[str, Any]) -> list[str]:
    problems = []
    for path, node in subschemas(schema):
        bad = set(node) - GEMINI_ALLOWED
        if bad:
            problems.append(f"{path or '(root)'}: unsupported keywords {sorted(bad)}")
        if "format" in node and node["format"] not in {"date-time", "date", "time"}:
            problems.append(f"{path}: unsupported format {node['format']}")
    return problems
