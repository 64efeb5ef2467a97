"""Mechanical checkers for provider-side schemas (used by the unit, property and corpus tests).

``openai_strict_problems`` holds OpenAI's strict Structured Outputs rules as published in the
structured-outputs guide ("Supported schemas") and as OpenAI's own SDKs check them
(openai-java's JsonSchemaValidator, openai-python's to_strict_json_schema), written here
independently of the converter:

- the root is a plain object schema (no ``anyOf``); ``$defs`` only at the root;
- every node has exactly one of ``type``, ``anyOf``, ``$ref``; a ``$ref`` node has no other
  keyword; an ``anyOf`` node only ``title``/``description`` beside it;
- ``type`` is one supported name or ``[name, "null"]``;
- per type, only the supported keywords (objects: properties, required, additionalProperties;
  arrays: items, minItems, maxItems; strings: enum, const, pattern, format from OpenAI's list;
  numbers: enum, const, minimum, maximum, exclusive bounds, multipleOf);
- every object has ``additionalProperties: false`` and lists every property in ``required``;
- every array has an ``items`` schema; every ``$ref`` is ``#`` or ``#/$defs/<existing name>``;
- limits: nesting at most 10 levels (root 0; each property, items and anyOf level adds one;
  counted through ``$ref``), at most 5,000 properties and 1,000 enum values in the schema, an
  enum of more than 250 strings at most 15,000 characters, at most 120,000 characters of property
  names, definition names, enum and const values.
"""

from __future__ import annotations

import json
import os
from typing import Any

OPENAI_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
OPENAI_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
_ANNOT = {"title", "description"}
OPENAI_KEYWORDS = {
    "object": _ANNOT | {"type", "properties", "required", "additionalProperties"},
    "array": _ANNOT | {"type", "items", "minItems", "maxItems"},
    "string": _ANNOT | {"type", "enum", "const", "pattern", "format"},
    "number": _ANNOT | {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "integer": _ANNOT | {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "boolean": _ANNOT | {"type", "enum", "const"},
    "null": _ANNOT | {"type", "enum", "const"},
}
ROOT_ONLY = {"$defs", "$schema", "$id"}
MAX_DEPTH, MAX_PROPERTIES, MAX_ENUM_VALUES, LARGE_ENUM, LARGE_ENUM_CHARS, MAX_CHARS = 10, 5000, 1000, 250, 15000, 120000

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


def _nodes(schema: dict[str, Any]):
    """(pointer, node, depth) for every node OpenAI reads, without following refs."""
    stack: list[tuple[str, Any, int]] = [("", schema, 0)]
    while stack:
        path, node, depth = stack.pop()
        yield path, node, depth
        if not isinstance(node, dict):
            continue
        for name, sub in (node.get("$defs") or {}).items() if isinstance(node.get("$defs"), dict) else ():
            stack.append((f"{path}/$defs/{name}", sub, 0))
        for name, sub in (node.get("properties") or {}).items() if isinstance(node.get("properties"), dict) else ():
            stack.append((f"{path}/properties/{name}", sub, depth + 1))
        if "items" in node:
            stack.append((f"{path}/items", node["items"], depth + 1))
        for i, sub in enumerate(node.get("anyOf") or []) if isinstance(node.get("anyOf"), list) else ():
            stack.append((f"{path}/anyOf/{i}", sub, depth + 1))


def openai_depth(schema: dict[str, Any]) -> int:
    """Nesting depth counted through $ref (a ref that loops back adds nothing more)."""
    defs = schema.get("$defs") or {}
    memo: dict[str, int] = {}

    def height(node: Any, path: frozenset[str]) -> int:
        if not isinstance(node, dict):
            return 0
        best = 0
        ref = node.get("$ref")
        if isinstance(ref, str) and ref not in path:
            if ref == "#":
                best = height({k: v for k, v in schema.items() if k != "$defs"}, path | {ref})
            elif ref.startswith("#/$defs/") and ref[8:] in defs:
                if ref not in memo:
                    memo[ref] = height(defs[ref[8:]], path | {ref})
                best = memo[ref]
        children = list((node.get("properties") or {}).values()) + list(node.get("anyOf") or [])
        if isinstance(node.get("items"), dict):
            children.append(node["items"])
        for child in children:
            best = max(best, 1 + height(child, path))
        return best

    return height({k: v for k, v in schema.items() if k != "$defs"}, frozenset({"#"}))


def openai_strict_problems(schema: dict[str, Any]) -> list[str]:
    """Every way ``schema`` breaks OpenAI's strict Structured Outputs rules (empty = accepted)."""
    problems: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        return ["(root): must be a plain object schema"]
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    properties = enum_values = chars = 0
    chars += sum(len(name) for name in defs)
    for path, node, _ in _nodes(schema):
        where = path or "(root)"
        if not isinstance(node, dict):
            problems.append(f"{where}: a schema must be an object, not {json.dumps(node)}")
            continue
        keys = set(node)
        if path:
            bad = keys & ROOT_ONLY
            if bad:
                problems.append(f"{where}: {sorted(bad)} only at the root")
            keys -= ROOT_ONLY
        else:
            keys -= ROOT_ONLY
        kinds = [k for k in ("type", "anyOf", "$ref") if k in node]
        if len(kinds) != 1:
            problems.append(f"{where}: needs exactly one of type, anyOf, $ref (has {kinds})")
            continue
        if "$ref" in node:
            if keys != {"$ref"}:
                problems.append(f"{where}: $ref with sibling keywords {sorted(keys - {'$ref'})}")
            ref = node["$ref"]
            if not (ref == "#" or (isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs)):
                problems.append(f"{where}: $ref {ref!r} is not '#' or an existing '#/$defs/<name>'")
            continue
        if "anyOf" in node:
            if not path:
                problems.append("(root): anyOf at the root")
            if keys - _ANNOT - {"anyOf"}:
                problems.append(f"{where}: anyOf with sibling keywords {sorted(keys - _ANNOT - {'anyOf'})}")
            if not isinstance(node["anyOf"], list) or not node["anyOf"]:
                problems.append(f"{where}: anyOf must be a non-empty list")
            continue
        t = node["type"]
        if isinstance(t, list):
            named = [x for x in t if x != "null"]
            if len(t) != 2 or len(named) != 1 or "null" not in t:
                problems.append(f"{where}: type list must be [name, \"null\"], got {t}")
                continue
            t = named[0]
        if t not in OPENAI_TYPES:
            problems.append(f"{where}: unsupported type {t!r}")
            continue
        bad = keys - OPENAI_KEYWORDS[t]
        if bad:
            problems.append(f"{where}: unsupported keywords for {t}: {sorted(bad)}")
        if "format" in node and node["format"] not in OPENAI_FORMATS:
            problems.append(f"{where}: unsupported format {node['format']}")
        if t == "object":
            props = node.get("properties")
            if not isinstance(props, dict):
                problems.append(f"{where}: object without properties")
                props = {}
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties must be false")
            if not isinstance(node.get("required"), list) or set(node["required"]) != set(props) or len(node["required"]) != len(set(node["required"])):
                problems.append(f"{where}: every property must be required")
            properties += len(props)
            chars += sum(len(k) for k in props)
        if t == "array" and not isinstance(node.get("items"), dict):
            problems.append(f"{where}: array without an items schema")
        if "enum" in node:
            values = node["enum"]
            if not isinstance(values, list) or not values:
                problems.append(f"{where}: enum must be a non-empty list")
                continue
            enum_values += len(values)
            strings = [v for v in values if isinstance(v, str)]
            size = sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in values)
            chars += size
            if len(strings) > LARGE_ENUM and sum(len(v) for v in strings) > LARGE_ENUM_CHARS:
                problems.append(f"{where}: enum of {len(strings)} strings over {LARGE_ENUM_CHARS} characters")
        if "const" in node:
            chars += len(node["const"]) if isinstance(node["const"], str) else len(json.dumps(node["const"]))
    if properties > MAX_PROPERTIES:
        problems.append(f"(root): {properties} properties (limit {MAX_PROPERTIES})")
    if enum_values > MAX_ENUM_VALUES:
        problems.append(f"(root): {enum_values} enum values (limit {MAX_ENUM_VALUES})")
    if chars > MAX_CHARS:
        problems.append(f"(root): {chars} characters of names and values (limit {MAX_CHARS})")
    depth = openai_depth(schema)
    if depth > MAX_DEPTH:
        problems.append(f"(root): nesting depth {depth} counted through $ref (limit {MAX_DEPTH})")
    return problems + _integral_floats(schema)


_SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
               "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_SCHEMA_MAP = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SCHEMA_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def wellformed_problems(schema: Any) -> list[str]:
    """Where a schema breaks the 2020-12 meta-schema, for every keyword a converter emits (the
    same rules as the meta-schema for those keywords, without its cost on large schemas)."""
    problems: list[str] = []
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            problems.append(f"{where or '(root)'}: a schema must be an object or a boolean")
            continue
        t = node.get("type")
        if t is not None:
            names = [t] if isinstance(t, str) else t
            if not isinstance(names, list) or not names or len(set(map(str, names))) != len(names) or not set(names) <= OPENAI_TYPES:
                problems.append(f"{where}: bad type {t!r}")
        for key in _SCHEMA_ONE:
            if key in node:
                stack.append((node[key], f"{where}/{key}"))
        for key in _SCHEMA_MAP:
            if key in node:
                if not isinstance(node[key], dict):
                    problems.append(f"{where}/{key}: must be an object")
                else:
                    stack.extend((v, f"{where}/{key}/{k}") for k, v in node[key].items())
        for key in _SCHEMA_LIST:
            if key in node:
                if not isinstance(node[key], list) or not node[key]:
                    problems.append(f"{where}/{key}: must be a non-empty array")
                else:
                    stack.extend((v, f"{where}/{key}/{i}") for i, v in enumerate(node[key]))
        if "required" in node:
            req = node["required"]
            if not isinstance(req, list) or not all(isinstance(r, str) for r in req) or len(set(req)) != len(req):
                problems.append(f"{where}/required: must be an array of distinct strings")
        if "enum" in node and not isinstance(node["enum"], list):
            problems.append(f"{where}/enum: must be an array")
        for key in _COUNTS:
            if key in node and not (isinstance(node[key], int) and not isinstance(node[key], bool) and node[key] >= 0):
                problems.append(f"{where}/{key}: must be a non-negative integer")
        for key in _NUMBERS:
            if key in node and not _is_number(node[key]):
                problems.append(f"{where}/{key}: must be a number")
        if "multipleOf" in node and not (_is_number(node["multipleOf"]) and node["multipleOf"] > 0):
            problems.append(f"{where}/multipleOf: must be a number > 0")
        for key in ("pattern", "format", "title", "description", "$ref", "$comment", "$anchor"):
            if key in node and not isinstance(node[key], str):
                problems.append(f"{where}/{key}: must be a string")
        if "uniqueItems" in node and not isinstance(node["uniqueItems"], bool):
            problems.append(f"{where}/uniqueItems: must be a boolean")
        if "dependentRequired" in node:
            dep = node["dependentRequired"]
            if not isinstance(dep, dict) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in dep.values()):
                problems.append(f"{where}/dependentRequired: must map names to arrays of strings")
    return problems


# Anthropic's structured outputs ("JSON Schema limitations", build-with-claude/structured-outputs;
# shared by JSON outputs and strict tool use): enum values are strings, numbers, bools or nulls only
# ("Complex types within enums" are not supported; a const of an object is the same thing);
# regexes without backreferences ("\1"), lookahead/lookbehind or word boundaries ("\b", "\B");
# formats date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid; minItems 0 or 1;
# additionalProperties only false; no recursion. Strict tools, "Limits": no more than 24 optional
# parameters and 16 parameters with union types per request (PEERS.md; litellm
# llms/anthropic/chat/transformation.py NATIVE_OUTPUT_MAX_OPTIONAL_PARAMETERS = 24,
# NATIVE_OUTPUT_MAX_UNION_PARAMETERS = 16, counted by litellm_core_utils/prompt_templates/
# json_schema_utils.py: every schema under "properties" anywhere, definitions once; optional = not
# in that object's "required"; union = anyOf/oneOf or a type list of more than one name).
ANTHROPIC_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
ANTHROPIC_MAX_OPTIONAL, ANTHROPIC_MAX_UNIONS = 24, 16


def _regex_problem(pattern: str) -> str | None:
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in "bB":
                return "a word boundary"
            if nxt.isdigit() and nxt != "0" or pattern[i + 1 : i + 3] == "k<":
                return "a backreference"
            i += 2
            continue
        if pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            return "a lookaround"
        i += 1
    return None


def _ref_cycle(schema: dict[str, Any]) -> bool:
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}

    def refs(node: Any) -> set[str]:
        out = set()
        for _, n in subschemas({k: v for k, v in node.items() if k != "$defs"} if isinstance(node, dict) else node):
            ref = n.get("$ref")
            if ref == "#":
                out.add("#")
            elif isinstance(ref, str) and ref.startswith("#/$defs/"):
                out.add(ref[8:])
        return out

    graph = {name: refs(body) for name, body in defs.items()}
    graph["#"] = refs(schema)
    state: dict[str, int] = {}

    def cyclic(name: str) -> bool:
        if state.get(name) == 1:
            return True
        if state.get(name) == 2 or name not in graph:
            return False
        state[name] = 1
        found = any(cyclic(n) for n in graph[name])
        state[name] = 2
        return found

    return any(cyclic(name) for name in graph)


ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"  # supports_native_structured_output in litellm's model map


def anthropic_wire(schema: dict[str, Any]) -> tuple[str, Any]:
    """("output_format" or "tool", the schema) as litellm sends ``schema`` (a response_format
    json_schema) to Anthropic: litellm's own mapping (utils' get_json_schema_from_pydantic_object,
    then AnthropicConfig.map_openai_params), which picks the wire by the schema, not by strict."""
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig

    config = AnthropicConfig()
    rf = config.get_json_schema_from_pydantic_object(
        {"type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": True}}
    )
    sent = config.map_openai_params({"response_format": rf}, {}, ANTHROPIC_MODEL, False)
    if "output_format" in sent:
        return "output_format", sent["output_format"]["schema"]
    return "tool", next(t["input_schema"] for t in sent["tools"] if t["name"] == "json_tool_call")


def _anthropic_wire_problems(schema: dict[str, Any]) -> list[str]:
    """What breaks in what litellm sends: a ref that does not resolve there; as output_format
    (constrained), the limits and recursion, counted by litellm's own counters."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # (as vance's litellm_model: no fetch)
    from litellm.litellm_core_utils.prompt_templates.json_schema_utils import (
        is_object_schema,
        schema_optional_property_count,
        schema_union_property_count,
    )

    try:
        wire, sent = anthropic_wire(schema)
    except Exception as exc:  # noqa: BLE001 - litellm's mapping failing is the finding
        return [f"(litellm): the request cannot be made: {type(exc).__name__}: {exc}"]
    problems = [f"({wire}): $ref {ref} as litellm sends it resolves to nothing" for ref in unresolved_refs(sent)]
    if wire == "output_format":
        optional, unions = schema_optional_property_count(sent), schema_union_property_count(sent)
        if optional > ANTHROPIC_MAX_OPTIONAL:
            problems.append(f"(output_format): {optional} optional parameters (limit {ANTHROPIC_MAX_OPTIONAL})")
        if unions > ANTHROPIC_MAX_UNIONS:
            problems.append(f"(output_format): {unions} parameters with union types (limit {ANTHROPIC_MAX_UNIONS})")
        if isinstance(sent, dict) and _ref_cycle(sent):
            problems.append("(output_format): a recursive schema")
        # litellm's filter_anthropic_output_schema sets additionalProperties: false on every object
        # (type object): one the schema leaves open then forbids the keys it allows (review 15c).
        problems += [
            f"(output_format): {path or '(root)'}: an object the schema leaves open, closed by litellm "
            "(additionalProperties: false): keys it allows are forbidden"
            for path, node in subschemas(schema)
            if is_object_schema(node) and node.get("additionalProperties") is not False
        ]
    return problems


def unresolved_refs(provider: Any) -> list[str]:
    """Refs of a provider schema that do not resolve inside it (JSON pointers only)."""
    bad = []
    stack = [provider]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                try:
                    if not ref.startswith("#"):
                        raise KeyError(ref)
                    target = _resolve(provider, ref)
                    if not isinstance(target, (dict, bool)):
                        raise KeyError(ref)
                except (KeyError, IndexError, TypeError):
                    bad.append(ref)
            stack.extend(v for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, list):
            stack.extend(node)
    return bad


def anthropic_problems(schema: dict[str, Any], *, strict: bool = False) -> list[str]:
    """Every way ``schema`` breaks Anthropic's documented limits (``strict``: also strict tools')."""
    problems = []
    if schema.get("type") != "object":
        problems.append("root: must be an object (tool input_schema)")
    optional = unions = 0
    for path, node in subschemas(schema):
        where = path or "(root)"
        bad = ANTHROPIC_UNSUPPORTED & node.keys()
        if bad:
            problems.append(f"{where}: unsupported keywords {sorted(bad)}")
        if isinstance(node.get("minItems"), int) and node["minItems"] > 1:
            problems.append(f"{where}: minItems > 1")
        values = list(node["enum"]) if isinstance(node.get("enum"), list) else []
        values += [node["const"]] if "const" in node else []
        if any(isinstance(v, (dict, list)) for v in values):
            problems.append(f"{where}: an enum or const holding objects or arrays (complex types within enums)")
        if isinstance(node.get("pattern"), str) and _regex_problem(node["pattern"]):
            problems.append(f"{where}: pattern with {_regex_problem(node['pattern'])}: {node['pattern']!r}")
        if "format" in node and node["format"] not in ANTHROPIC_FORMATS:
            problems.append(f"{where}: unsupported format {node['format']!r}")
        extra = node.get("additionalProperties", None)
        if strict and extra is not None and extra is not False:
            # (not strict: litellm sends a schema with open objects as a plain tool, which takes any)
            problems.append(f"{where}: strict: additionalProperties other than false")
        props = node.get("properties")
        if isinstance(props, dict):
            required = node.get("required") if isinstance(node.get("required"), list) else []
            optional += len(set(props) - set(required))
            for sub in props.values():
                t = sub.get("type") if isinstance(sub, dict) else None
                if isinstance(sub, dict) and ("anyOf" in sub or "oneOf" in sub or (isinstance(t, list) and len(t) > 1)):
                    unions += 1
        types = node.get("type")
        types = [types] if isinstance(types, str) else types if isinstance(types, list) else []
        if strict and ("object" in types or "properties" in node) and node.get("additionalProperties") is not False:
            problems.append(f"{where}: strict: an object without additionalProperties: false")
    if strict:
        if optional > ANTHROPIC_MAX_OPTIONAL:
            problems.append(f"(root): strict: {optional} optional parameters (limit {ANTHROPIC_MAX_OPTIONAL})")
        if unions > ANTHROPIC_MAX_UNIONS:
            problems.append(f"(root): strict: {unions} parameters with union types (limit {ANTHROPIC_MAX_UNIONS})")
        if _ref_cycle(schema):
            problems.append("(root): strict: a recursive schema")
    return problems + _integral_floats(schema) + _anthropic_wire_problems(schema)


def _integral_floats(schema: dict[str, Any]) -> list[str]:
    """Nodes of type integer whose enum or const holds a float (e.g. -2.0): valid JSON Schema, but
    a provider that types enum values by their JSON text sees a number where it was told integer."""
    problems = []
    for path, node in subschemas(schema):
        types = node.get("type")
        types = [types] if isinstance(types, str) else types or []
        if "integer" in types and "number" not in types:
            values = list(node.get("enum") or []) if isinstance(node.get("enum"), list) else []
            values += [node["const"]] if "const" in node else []
            if any(isinstance(v, float) for v in values):
                problems.append(f"{path or '(root)'}: a float enum/const value under type integer")
    return problems


def gemini_problems(schema: dict[str, Any]) -> list[str]:
    """Gemini's responseJsonSchema subset (ai.google.dev structured output, "JSON Schema support"):
    the keywords below; ``enum`` of strings (and numbers), ``format`` date-time, date, time."""
    problems = _integral_floats(schema)
    for path, node in subschemas(schema):
        if isinstance(node.get("enum"), list):
            odd = [v for v in node["enum"] if not isinstance(v, (str, int, float)) or isinstance(v, bool)]
            if odd:
                problems.append(f"{path or '(root)'}: enum values that are not strings or numbers: {odd[:3]}")
            if not node["enum"]:
                problems.append(f"{path or '(root)'}: an empty enum")
        bad = set(node) - GEMINI_ALLOWED
        if bad:
            problems.append(f"{path or '(root)'}: unsupported keywords {sorted(bad)}")
        if "format" in node and node["format"] not in {"date-time", "date", "time"}:
            problems.append(f"{path}: unsupported format {node['format']}")
    return problems


# -- Ollama: llama.cpp's json-schema-to-grammar --------------------------------------------------
#
# Ollama turns `format` into a grammar with llama.cpp's converter (ollama llama/llama.go
# SchemaToGrammar -> sampling_ext.cpp schema_to_grammar -> common/json-schema-to-grammar.cpp,
# vendored under llama/llama.cpp/common/; read at ggml-org/llama.cpp 011c6c3 and ollama/ollama's
# vendored copy 02725d3); a schema the converter fails on fails the request.
# SchemaConverter::visit reads ONE branch per node, in this order (json-schema-to-grammar.cpp,
# `std::string visit(const json & schema, const std::string & name)`):
#   1. "$ref" -> only the target (sibling keywords ignored); resolve_refs takes "#/..." pointers
#      only ("Unsupported ref" otherwise, so "#" alone fails) and does not unescape ~0 ~1 %xx;
#   2. "oneOf" or "anyOf" -> the union of the alternatives (sibling keywords ignored);
#   3. a "type" list -> the union of the node with each type;
#   4. "const" -> that JSON text; 5. "enum" -> one of those texts;
#   6. no type or "object", with "properties" or an "additionalProperties" other than true ->
#      _build_object_rule: the properties (required ones those also in "required"), and other keys
#      only where additionalProperties is true or a schema: WITHOUT additionalProperties THE OBJECT
#      IS CLOSED (grammars/README.md: "additionalProperties defaults to false");
#   7. no type, "object" or "string", with "allOf" -> a closed object of the parts' properties;
#   8. no type or "array", with "items"/"prefixItems" -> a list is an exact tuple; a schema
#      repeats between minItems and maxItems;
#   9. no type or "string", with "pattern" -> _visit_pattern: "Pattern must start with '^' and end
#      with '$'" (else the conversion fails); escapes other than those it unescapes end up in a
#      GBNF literal, where llama-grammar.cpp parse_char fails on them ("unknown escape");
#  10. no type or "string", format uuid[1-5]?, date, time, date-time -> those grammar rules;
#  11. "string" with minLength/maxLength; "integer" with minimum/maximum/exclusive* (read as
#      int64: a float bound is cut toward zero);
#  12. an empty schema or "object" -> any object (not any value);
#  13. else "type" must name a primitive, or: "Unrecognized schema" (a boolean schema, a node with
#      only annotations or unknown keywords in Ollama's vendored copy).
#  14. resolve_refs reads "$ref" in every JSON object (a property named "$ref", an enum value);
#      an open object's other-key rule (_not_strings) writes the names' bytes as GBNF classes.
# Not modelled: numbers are written with at most 16 integral digits (PRIMITIVE_RULES), and a
# pattern matches the string's JSON text (escapes included), not its value (its final "$" is read
# as the end, "\Z": the text has no final newline before the quote).

_LLAMA_PRIMITIVES = {"boolean", "number", "integer", "string", "null", "object", "array", "value"}
_LLAMA_UNESCAPED = set("^$.[]()|{}*+?")  # ESCAPED_IN_REGEXPS_BUT_NOT_IN_LITERALS
_GBNF_ESCAPES = set('xuUtrn\\"[]')  # llama-grammar.cpp parse_char
_LLAMA_FORMATS = {
    "date": r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[1-2][0-9]|3[0-1])",
    "time": r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{3})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])",
}
_LLAMA_FORMATS["date-time"] = _LLAMA_FORMATS["date"] + "T" + _LLAMA_FORMATS["time"]
_LLAMA_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def _gbnf_escape_problem(pattern: str) -> str | None:
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt and nxt not in _LLAMA_UNESCAPED and nxt not in _GBNF_ESCAPES:
                return f"\\{nxt}"
            i += 2
            continue
        i += 1
    return None


def llama_cpp_reading(schema: Any) -> tuple[dict[str, Any], list[str]]:
    """(what llama.cpp's converter makes of ``schema``, written as JSON Schema so a standard
    validator tells which values its grammar admits; the problems that fail the conversion)."""
    import re as _re

    problems: list[str] = []
    names: dict[str, str] = {}
    defs: dict[str, Any] = {}
    todo: list[str] = []

    def resolve(ref: str) -> Any:
        if not ref.startswith("#/"):
            problems.append(f"Unsupported ref: {ref}")
            return None
        node: Any = schema
        for tok in ref[2:].split("/"):
            if isinstance(node, dict) and tok in node:
                node = node[tok]
            elif isinstance(node, list) and tok.isdigit() and int(tok) < len(node):
                node = node[int(tok)]
            else:
                problems.append(f"Error resolving ref {ref}: {tok} not found (pointer tokens are not unescaped)")
                return None
        return node

    def ref_to(ref: str) -> dict[str, Any]:
        if ref not in names:
            names[ref] = f"r{len(names)}"
            todo.append(ref)
        return {"$ref": f"#/$defs/{names[ref]}"}

    def visit(node: Any, where: str) -> Any:
        if not isinstance(node, dict):
            problems.append(f"{where or '(root)'}: Unrecognized schema: {json.dumps(node)}")
            return {}
        t = node.get("type")
        if "$ref" in node:
            return ref_to(node["$ref"])
        for key in ("oneOf", "anyOf"):
            if key in node:
                alts = node[key] if isinstance(node[key], list) else []
                return {"anyOf": [visit(a, f"{where}/{key}/{i}") for i, a in enumerate(alts)] or [{"not": {}}]}
        if isinstance(t, list):
            return {"anyOf": [visit({**node, "type": x}, where) for x in t] or [{"not": {}}]}
        if "const" in node:
            return {"const": node["const"]}
        if "enum" in node:
            return {"enum": node["enum"]}
        if t in (None, "object") and ("properties" in node or ("additionalProperties" in node and node["additionalProperties"] is not True)):
            props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
            read = {k: visit(v, f"{where}/properties/{k}") for k, v in props.items()}
            required = [r for r in node.get("required", []) if isinstance(r, str) and r in props]
            extra = node.get("additionalProperties")
            more: Any = {} if extra is True else visit(extra, f"{where}/additionalProperties") if isinstance(extra, dict) else False
            if more is not False:
                # _not_strings: one GBNF class per byte of each name ("[" c "]"), the bytes after a
                # common prefix concatenated into "[^\"" rejects "]"; decode_utf8 swallows the "]" after a
                # UTF-8 lead byte, a "]" "\\" "^" "-" "[" or '"' byte is class syntax.
                odd = [k for k in props if any(b >= 0x7F or b < 0x20 or chr(b) in '"\\]^[' for b in k.encode("utf-8"))]
                for k in props:  # a "-" in "[^\"" rejects "]" followed by another byte: a range
                    raw = k.encode("utf-8")
                    for i in (i for i, b in enumerate(raw) if b == 0x2D):
                        if any(o.encode("utf-8")[:i] == raw[:i] and len(o.encode("utf-8")) > i and o.encode("utf-8")[i] > 0x2D for o in props):
                            odd.append(k)
                if odd:
                    problems.append(f"{where or '(root)'}: the other-key rule of an open object writes {odd[0]!r} as malformed GBNF classes")
            return {"type": "object", "properties": read, "required": required, "additionalProperties": more}
        if t in (None, "object", "string") and "allOf" in node:
            problems.append(f"{where or '(root)'}: allOf (llama.cpp keeps only its parts' properties, closed)")
            props, required = {}, []
            for part in node["allOf"] if isinstance(node["allOf"], list) else []:
                for sub, req in ([(a, False) for a in part["anyOf"]] if isinstance(part, dict) and "anyOf" in part else [(part, True)]):
                    sub = resolve(sub["$ref"]) if isinstance(sub, dict) and "$ref" in sub else sub
                    if isinstance(sub, dict) and isinstance(sub.get("properties"), dict):
                        for k, v in sub["properties"].items():
                            props.setdefault(k, visit(v, f"{where}/allOf"))
                            required += [k] if req else []
            return {"type": "object", "properties": props, "required": list(dict.fromkeys(required)), "additionalProperties": False}
        if t in (None, "array") and ("items" in node or "prefixItems" in node):
            items = node["items"] if "items" in node else node["prefixItems"]
            if isinstance(items, list):
                return {"type": "array", "prefixItems": [visit(x, f"{where}/items") for x in items] or [{}],
                        "items": False, "minItems": len(items)}
            out: dict[str, Any] = {"type": "array", "items": visit(items, f"{where}/items")}
            if isinstance(node.get("minItems"), (int, float)) and not isinstance(node.get("minItems"), bool):
                out["minItems"] = int(node["minItems"])
            if isinstance(node.get("maxItems"), int) and not isinstance(node.get("maxItems"), bool):
                out["maxItems"] = node["maxItems"]
            return out
        if t in (None, "string") and "pattern" in node:
            p = node["pattern"]
            if not (isinstance(p, str) and p.startswith("^") and p.endswith("$")):
                problems.append(f"{where or '(root)'}: Pattern must start with '^' and end with '$': {p!r}")
            elif _gbnf_escape_problem(p[1:-1]):
                problems.append(f"{where or '(root)'}: pattern escape {_gbnf_escape_problem(p[1:-1])} fails the grammar parser")
            # the grammar matches the text whole: Python's "$" would also take a final newline
            return {"type": "string", "pattern": p[:-1] + "\\Z"} if isinstance(p, str) and p.endswith("$") else {"type": "string", "pattern": p}
        fmt = node.get("format")
        if t in (None, "string") and isinstance(fmt, str) and _re.fullmatch(r"uuid[1-5]?", fmt):
            return {"type": "string", "pattern": f"^{_LLAMA_UUID}$"}
        if t in (None, "string") and fmt in _LLAMA_FORMATS:
            return {"type": "string", "pattern": f"^{_LLAMA_FORMATS[fmt]}$"}
        if t == "string" and ("minLength" in node or "maxLength" in node):
            out = {"type": "string"}
            out.update({k: int(node[k]) for k in ("minLength", "maxLength") if k in node})
            return out
        if t == "integer" and {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} & node.keys():
            out = {"type": "integer"}
            if "minimum" in node:
                out["minimum"] = int(node["minimum"])
            elif "exclusiveMinimum" in node:
                out["minimum"] = int(node["exclusiveMinimum"]) + 1
            if "maximum" in node:
                out["maximum"] = int(node["maximum"])
            elif "exclusiveMaximum" in node:
                out["maximum"] = int(node["exclusiveMaximum"]) - 1
            return out
        if not node or t == "object":
            return {"type": "object"}
        if not isinstance(t, str) or t not in _LLAMA_PRIMITIVES:
            problems.append(f"{where or '(root)'}: Unrecognized schema: {json.dumps(node)[:120]}")
            return {}
        return {} if t == "value" else {"type": t}

    def visit_refs(n: Any) -> None:
        # resolve_refs: every JSON object of the document, schema node or not (a properties map, an
        # enum/const value), whose "$ref" key is read as a string "#/..." pointer.
        if isinstance(n, list):
            for x in n:
                visit_refs(x)
        elif isinstance(n, dict):
            if "$ref" in n:
                if not isinstance(n["$ref"], str):
                    problems.append(f"resolve_refs: type_error, a $ref holding {type(n['$ref']).__name__}")
                else:
                    resolve(n["$ref"])
                return
            for v in n.values():
                visit_refs(v)

    visit_refs(schema)
    body = visit(schema, "")
    while todo:
        ref = todo.pop(0)
        target = resolve(ref)
        defs[names[ref]] = visit(target, ref[1:]) if target is not None else {}
    return ({**body, "$defs": defs} if defs and isinstance(body, dict) else body), problems


def llama_cpp_problems(schema: Any) -> list[str]:
    """Where llama.cpp's converter fails on ``schema`` (the Ollama request fails with it)."""
    return llama_cpp_reading(schema)[1]
