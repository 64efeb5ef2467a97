"""OpenAI Structured Outputs (strict): the family's rules and its schema-wide limits.

From OpenAI's structured-outputs guide, "Supported schemas" (PEERS.md "Provider strict-mode
limits"): the root is an object, not ``anyOf``; every property is listed in ``required`` (an
optional one becomes a union with ``null``); ``additionalProperties: false`` on every object; a
``$ref`` has no sibling keywords; supported are string, number, boolean, integer, object, array,
enum, ``anyOf``, ``$defs``/``$ref`` (recursion allowed), string ``pattern`` and the formats below,
number bounds and ``multipleOf``, array ``minItems``/``maxItems``. Not supported: ``allOf``,
``not``, ``oneOf``, ``if/then/else``, ``dependentRequired``, ``dependentSchemas``.

The limits (nesting depth 10 counted through ``$ref`` and the envelope, 5,000 properties, 1,000
enum values, 15,000 characters per enum of more than 250 strings, 120,000 characters of names and
values) are checked on the final schema: an enum over a limit is dropped (checked locally),
anything else turns strict off. An openai-compatible server that claims strict mode
(``strict_json_schema = true``) gets these rules too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vance_cli.llm.output.merge import Downgrade
from vance_cli.llm.output.walker import BASE_KEYWORDS, Family, NotStrict
from vance_cli.schema.nodes import one_or_list, types_of_values
from vance_cli.schema.refs import def_of
from vance_cli.text import json_pointer

# OpenAI's schema-wide limits (structured outputs guide, "Supported schemas").
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM_VALUES = 1000
OPENAI_LARGE_ENUM = 250  # an enum of more strings than this ...
OPENAI_LARGE_ENUM_CHARS = 15000  # ... may hold at most this many characters
OPENAI_MAX_STRING_CHARS = 120000  # property names, definition names, enum and const values


class OpenAI(Family):
    name = "openai"
    supported = BASE_KEYWORDS | {
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
    formats = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
    const_to_enum = True
    all_required = True
    ref_siblings = False
    single_types = True

    def finish(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        return enforce_limits(provider, notes)


OPENAI = OpenAI()


def schema_name(name: str) -> str:
    """OpenAI's schema name rule: [a-zA-Z0-9_-]{1,64}."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]+", "_", name).strip("_")[:64]
    return cleaned or "output"


def _children(node: dict[str, Any]):
    """(child, adds a nesting level) for OpenAI's depth count: properties, items, anyOf each +1."""
    for sub in (node.get("properties") or {}).values() if isinstance(node.get("properties"), dict) else ():
        yield sub
    if isinstance(node.get("items"), dict):
        yield node["items"]
    for sub in node.get("anyOf") or [] if isinstance(node.get("anyOf"), list) else []:
        yield sub
    if isinstance(node.get("additionalProperties"), dict):
        yield node["additionalProperties"]
    for sub in node.get("prefixItems") or [] if isinstance(node.get("prefixItems"), list) else []:
        yield sub


def nesting_depth(schema: dict[str, Any]) -> int:
    """The deepest nesting level of ``schema`` counted through ``$ref`` (a recursive ref adds
    nothing once it loops); the root is level 0, each property, items or anyOf level adds 1."""
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    heights: dict[str, int] = {}

    def height(node: Any, on_path: frozenset[str]) -> int:
        best = 0
        stack: list[tuple[Any, int, frozenset[str]]] = [(node, 0, on_path)]
        while stack:
            n, d, path = stack.pop()
            if not isinstance(n, dict):
                continue
            best = max(best, d)
            ref = n.get("$ref")
            if isinstance(ref, str):
                name = def_of(ref)
                key = name if name is not None else "#"
                if key in path:
                    continue
                if name is not None and name in defs:
                    if name not in heights:
                        heights[name] = height(defs[name], path | {name})
                    best = max(best, d + heights[name])
                elif ref == "#":
                    stack.append(({k: v for k, v in schema.items() if k != "$defs"}, d, path | {"#"}))
            for child in _children(n):
                stack.append((child, d + 1, path))
        return best

    try:
        return height({k: v for k, v in schema.items() if k != "$defs"}, frozenset({"#"}))
    except RecursionError:  # a chain of thousands of definitions: deeper than any limit
        return 1 << 30


def _enum_chars(values: list[Any]) -> int:
    return sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in values)


def enforce_limits(provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Drop enums over OpenAI's limits (checked locally); NotStrict for any other limit."""
    nodes: list[tuple[dict[str, Any], str]] = []
    properties = 0
    chars = 0
    stack: list[tuple[Any, str]] = [(provider, "")]
    while stack:
        node, where = stack.pop()
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("enum"), list):
            nodes.append((node, where))
        if "const" in node:
            chars += _enum_chars([node["const"]])
        props = node.get("properties")
        if isinstance(props, dict):
            properties += len(props)
            chars += sum(len(k) for k in props)
            stack.extend((v, f"{where}/properties{json_pointer([k])}") for k, v in props.items())
        if isinstance(node.get("$defs"), dict):
            chars += sum(len(k) for k in node["$defs"])
            stack.extend((v, f"{where}/$defs{json_pointer([k])}") for k, v in node["$defs"].items())
        if isinstance(node.get("items"), dict):
            stack.append((node["items"], f"{where}/items"))
        for i, alt in enumerate(node.get("anyOf") or [] if isinstance(node.get("anyOf"), list) else []):
            stack.append((alt, f"{where}/anyOf/{i}"))

    drop: set[int] = set()
    for node, where in nodes:
        values = node["enum"]
        strings = [v for v in values if isinstance(v, str)]
        if len(strings) > OPENAI_LARGE_ENUM and _enum_chars(strings) > OPENAI_LARGE_ENUM_CHARS:
            drop.add(id(node))
            notes.append(
                Downgrade(
                    where or "(root)",
                    f"enum of {len(values)} values ({_enum_chars(strings)} characters) removed "
                    f"(over openai's {OPENAI_LARGE_ENUM_CHARS} characters for an enum of more than {OPENAI_LARGE_ENUM}; checked locally)",
                    sent=True,
                )
            )
    total = sum(len(n["enum"]) for n, _ in nodes if id(n) not in drop)
    for node, where in sorted(nodes, key=lambda x: -len(x[0]["enum"])):
        if total <= OPENAI_MAX_ENUM_VALUES:
            break
        if id(node) in drop:
            continue
        drop.add(id(node))
        total -= len(node["enum"])
        notes.append(
            Downgrade(
                where or "(root)",
                f"enum of {len(node['enum'])} values removed "
                f"(openai takes {OPENAI_MAX_ENUM_VALUES} enum values per schema; checked locally)",
                sent=True,
            )
        )
    chars += sum(_enum_chars(n["enum"]) for n, _ in nodes if id(n) not in drop)
    if properties > OPENAI_MAX_PROPERTIES:
        raise NotStrict(
            "(root)", f"a schema of {properties} properties (openai takes {OPENAI_MAX_PROPERTIES})", limit=True
        )
    if chars > OPENAI_MAX_STRING_CHARS:
        raise NotStrict(
            "(root)",
            f"a schema whose names and values take {chars} characters (openai takes {OPENAI_MAX_STRING_CHARS})",
            limit=True,
        )
    if drop:
        provider = _without_enums(provider, drop)
    depth = nesting_depth(provider)
    if depth > OPENAI_MAX_DEPTH:
        raise NotStrict(
            "(root)",
            f"nested {depth} levels deep counted through $ref and the reply envelope (openai takes {OPENAI_MAX_DEPTH})",
            limit=True,
        )
    return provider


def _without_enums(node: Any, drop: set[int]) -> Any:
    if isinstance(node, list):
        return [_without_enums(v, drop) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: (v if k in ("enum", "const") else _without_enums(v, drop)) for k, v in node.items()}
    if id(node) in drop:
        values = out.pop("enum")
        if "type" not in out:
            out["type"] = one_or_list(types_of_values(values))
    return out
