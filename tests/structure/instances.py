"""Valid instances for a schema, and what a provider would send for them.

``candidates(schema)`` makes a handful of values from the schema's own shape (required-only and
every-declared-property variants, each union alternative, enum values, defaults and examples);
callers keep the ones the caller-side validator accepts. Nothing here decides validity.

``probes(schema, value)`` varies a value: a key the schema declares somewhere (in any branch) set,
at each object of the value, to a string and to an integer. Where a branch leaves that key open,
such a value is valid although the key's declared schema says otherwise (``{"a": 1, "b": "x"}``
for ``oneOf [{a: integer}, {b: integer}]``): the answers a closed strict object that borrowed a
sibling's schema for the key would forbid.

``provider_reply(instance, provider_schema)`` is the value a provider holding that schema would
produce for the same answer: every property the provider schema requires but the instance
leaves out is ``null`` (strict mode's optional fields), and keys a closed object does not
declare are left out (returned separately, so a test can check they were undeclared).
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

from jsonschema import Draft202012Validator

from vance_cli.schema.refs import prepare_schema

FORMAT_SAMPLES = {
    "date-time": "2024-05-01T10:00:00Z",
    "date": "2024-05-01",
    "time": "10:00:00Z",
    "duration": "P1D",
    "email": "ann@example.com",
    "idn-email": "ann@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/a",
    "uri-reference": "https://example.com/a",
    "iri": "https://example.com/a",
    "iri-reference": "https://example.com/a",
    "uri-template": "https://example.com/{id}",
    "uuid": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "regex": "^a+$",
    "json-pointer": "/a/b",
    "relative-json-pointer": "0/a",
    "color": "red",
}


def candidates(schema: Any, variants: int = 4) -> list[Any]:
    """Up to ``2 * variants`` distinct candidate values (not all of them valid)."""
    prepared = prepare_schema(schema)
    out: list[Any] = []
    for choice in range(variants):
        for full in (False, True):
            try:
                value = _gen(prepared.body, prepared, choice, full, 0, frozenset())
            except _Give:
                continue
            if not any(value == seen and type(value) is type(seen) for seen in out):
                out.append(value)
    return out


PROBE_VALUES = ("x", 7)


def probes(schema: Any, value: Any, limit: int = 24) -> list[Any]:
    """Up to ``limit`` variants of ``value`` (not all of them valid): at each object of it (to
    depth 3), each property name the schema declares anywhere set to each of PROBE_VALUES."""
    names = sorted(declared_names(schema))
    if not names:
        return []
    places: list[tuple[Any, ...]] = []
    todo: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while todo:
        node, path = todo.pop(0)
        if isinstance(node, dict):
            places.append(path)
            todo.extend((v, path + (k,)) for k, v in node.items() if len(path) < 3)
        elif isinstance(node, list):
            todo.extend((v, path + (i,)) for i, v in enumerate(node) if len(path) < 3)
    out: list[Any] = []
    for path in places:
        for name in names:
            for probe in PROBE_VALUES:
                if len(out) >= limit:
                    return out
                variant = copy.deepcopy(value)
                place = variant
                for step in path:
                    place = place[step]
                if name in place and place[name] == probe:
                    continue
                place[name] = probe
                out.append(variant)
    return out


def declared_names(schema: Any) -> set[str]:
    """Every property name the schema declares anywhere (properties maps at any depth)."""
    names: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                names |= set(node["properties"])
            stack.extend(v for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, list):
            stack.extend(node)
    return names


class _Give(Exception):
    pass


def _gen(node: Any, prepared: Any, choice: int, full: bool, depth: int, refs: frozenset[str]) -> Any:
    if depth > 12:
        raise _Give
    if node is True or node == {}:
        return "x"
    if not isinstance(node, dict):
        raise _Give
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in refs and depth > 6:
            raise _Give
        target = prepared.body if ref == "#" else prepared.defs.get(ref[len("#/$defs/") :])
        if target is None:
            raise _Give
        rest = {k: v for k, v in node.items() if k != "$ref"}
        value = _gen(target, prepared, choice, full, depth + 1, refs | {ref})
        return _overlay(value, rest, prepared, choice, full, depth, refs) if rest else value
    for key in ("examples",):
        if isinstance(node.get(key), list) and node[key] and choice % 2 == 1:
            return copy.deepcopy(node[key][choice % len(node[key])])
    if "const" in node:
        return copy.deepcopy(node["const"])
    if isinstance(node.get("enum"), list) and node["enum"]:
        return copy.deepcopy(node["enum"][choice % len(node["enum"])])
    if "default" in node and choice == 3 and not isinstance(node["default"], (dict, list)):
        return copy.deepcopy(node["default"])
    alts = node.get("anyOf") or node.get("oneOf")
    if isinstance(alts, list) and alts:
        base = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
        alt = alts[(choice + depth) % len(alts)]
        merged = {"allOf": [base, alt]} if base else alt
        return _gen(merged, prepared, choice, full, depth + 1, refs)
    if isinstance(node.get("allOf"), list):
        base = {k: v for k, v in node.items() if k != "allOf"}
        value = _gen(base, prepared, choice, full, depth + 1, refs) if _typed(base) else None
        for sub in node["allOf"]:
            value = _combine(value, _gen(sub, prepared, choice, full, depth + 1, refs))
        if value is None:
            raise _Give
        return value
    types = node.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    if not types:
        if {"properties", "required", "additionalProperties", "patternProperties"} & node.keys():
            types = ["object"]
        elif {"items", "prefixItems"} & node.keys():
            types = ["array"]
        else:
            return "x"
    non_null = [t for t in types if t != "null"] or ["null"]
    t = non_null[choice % len(non_null)]
    if t == "object":
        return _object(node, prepared, choice, full, depth, refs)
    if t == "array":
        prefix = node.get("prefixItems") or []
        items = node.get("items")
        count = max(int(node.get("minItems") or 0), 1 if full else 0, len(prefix) if full else 0)
        if isinstance(node.get("maxItems"), int):
            count = min(count, node["maxItems"])
        value = []
        for i in range(count):
            sub = prefix[i] if i < len(prefix) else items
            if sub is None:
                sub = {"type": "string"}
            value.append(_gen(sub, prepared, choice + i, full, depth + 1, refs))
        return value
    if t == "string":
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in FORMAT_SAMPLES:
            return FORMAT_SAMPLES[fmt]
        length = max(int(node.get("minLength") or 0), 1)
        return "a" * length
    if t in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum"))
        value = 1 if low is None else int(low) + 1
        high = node.get("maximum", node.get("exclusiveMaximum"))
        if isinstance(high, (int, float)) and value > high:
            value = int(high) - (1 if "exclusiveMaximum" in node else 0)
        step = node.get("multipleOf")
        if isinstance(step, (int, float)) and step:
            value = step * max(1, round(value / step))
            if t == "integer":
                value = int(value)
        return value
    if t == "boolean":
        return choice % 2 == 0
    return None


def _typed(node: dict[str, Any]) -> bool:
    return bool({"type", "properties", "items", "enum", "const", "$ref", "anyOf", "oneOf"} & node.keys())


def _object(node: dict[str, Any], prepared: Any, choice: int, full: bool, depth: int, refs: frozenset[str]) -> dict[str, Any]:
    props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
    required = [r for r in node.get("required", []) if isinstance(r, str)] if isinstance(node.get("required"), list) else []
    names = list(dict.fromkeys(required + (list(props) if full else [])))
    out: dict[str, Any] = {}
    for name in names:
        sub = props.get(name)
        if sub is None:
            extra = node.get("additionalProperties")
            sub = extra if isinstance(extra, dict) else {"type": "string"}
        try:
            out[name] = _gen(sub, prepared, choice, full, depth + 1, refs)
        except _Give:
            if name in required:
                raise
    low = node.get("minProperties")
    for name in props:
        if isinstance(low, int) and len(out) < low and name not in out:
            out[name] = _gen(props[name], prepared, choice, full, depth + 1, refs)
    return out


def _overlay(value: Any, rest: dict[str, Any], prepared: Any, choice: int, full: bool, depth: int, refs: frozenset[str]) -> Any:
    if isinstance(value, dict) and isinstance(rest.get("properties"), dict):
        extra = _object(rest, prepared, choice, full, depth, refs)
        return {**value, **extra}
    return value


def _combine(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if isinstance(a, dict) and isinstance(b, dict):
        return {**a, **b}
    return a


# ---------------------------------------------------------------------------------------------


class _Validators:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.defs = root.get("$defs", {})
        self.cache: dict[int, Draft202012Validator] = {}
        self.root_validator: Draft202012Validator | None = None
        self.undeclared: Counter[str] = Counter()

    def ok(self, node: Any, value: Any) -> bool:
        v = self.cache.get(id(node))
        if v is None:
            # The node evaluated with the root's resolver: its refs ("#" too) point into the root.
            if self.root_validator is None:
                self.root_validator = Draft202012Validator(self.root, format_checker=Draft202012Validator.FORMAT_CHECKER)
            v = self.cache[id(node)] = self.root_validator.evolve(schema=node)
        return v.is_valid(value)

    def target(self, ref: str) -> Any:
        if ref == "#":
            return self.root
        return self.defs.get(ref[len("#/$defs/") :])


def provider_reply(
    instance: Any, provider: dict[str, Any], *, envelope: bool, undeclared: Counter[str] | None = None
) -> tuple[Any, list[str]]:
    """(the value a provider holding ``provider`` would send, keys it left out as undeclared).

    Of the alternatives that take it with keys left out, the one that leaves out the fewest keys
    outside ``undeclared`` (those no part of the caller's schema declares), then the fewest keys:
    a model may pick any alternative."""
    vals = _Validators(provider)
    vals.undeclared = undeclared or Counter()
    dropped: list[str] = []
    if envelope:
        body = _fill(instance, provider["properties"]["result"], vals, dropped, 0)
        reply = {"result": body}
        if "_need" in provider["properties"]:
            reply["_need"] = None
        return reply, dropped
    return _fill(instance, provider, vals, dropped, 0), dropped


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "object")


def _may_fit(value: Any, node: Any, vals: _Validators, depth: int = 0) -> bool:
    """False only when ``node`` certainly rejects ``value`` for its JSON type (or enum)."""
    if not isinstance(node, dict) or depth > 16:
        return True
    if isinstance(node.get("$ref"), str):
        return _may_fit(value, vals.target(node["$ref"]), vals, depth + 1)
    if isinstance(node.get("anyOf"), list):
        return any(_may_fit(value, alt, vals, depth + 1) for alt in node["anyOf"])
    types = node.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        kind = _json_type(value)
        if kind not in types and not (kind == "integer" and "number" in types):
            return False
    return not (isinstance(node.get("enum"), list) and value not in node["enum"])


def _fill(value: Any, node: Any, vals: _Validators, dropped: list[str], depth: int) -> Any:
    if not isinstance(node, dict) or depth > 64:
        return value
    if isinstance(node.get("$ref"), str):
        target = vals.target(node["$ref"])
        return _fill(value, target, vals, dropped, depth + 1) if target is not None else value
    alts = node.get("anyOf")
    if isinstance(alts, list):
        # The alternative that takes the value whole, else one that takes it with keys left out.
        # Alternatives of another JSON type are skipped without validating anything.
        fitting = [alt for alt in alts if _may_fit(value, alt, vals)]
        if len(fitting) == 1:
            return _fill(value, fitting[0], vals, dropped, depth + 1)
        tried = []
        for alt in fitting or alts:
            trial: list[str] = []
            candidate = _fill(copy.deepcopy(value), alt, vals, trial, depth + 1)
            tried.append((alt, candidate, trial))
        # (a model may pick any alternative: see provider_reply)
        tried.sort(key=lambda t: (len(Counter(t[2]) - vals.undeclared), len(t[2])))
        for want_whole in (True, False):
            for alt, candidate, trial in tried:
                if (not trial or not want_whole) and vals.ok(alt, candidate):
                    dropped.extend(trial)
                    return candidate
        if tried:
            dropped.extend(tried[0][2])
            return tried[0][1]
        return value
    if isinstance(value, dict):
        props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        patterns = node.get("patternProperties") if isinstance(node.get("patternProperties"), dict) else {}
        closed = node.get("additionalProperties") is False
        out = {}
        for key, item in value.items():
            matched = [sub for pattern, sub in patterns.items() if re.search(pattern, key)]
            if key in props:
                out[key] = _fill(item, props[key], vals, dropped, depth + 1)
            elif matched:
                out[key] = _fill(item, matched[0], vals, dropped, depth + 1)
            elif closed:
                dropped.append(key)
            else:
                out[key] = item
        for key in node.get("required", []) if isinstance(node.get("required"), list) else []:
            if key not in out and key in props:
                out[key] = None
        return out
    if isinstance(value, list):
        items = node.get("items")
        prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
        return [_fill(x, prefix[i] if i < len(prefix) else items, vals, dropped, depth + 1) for i, x in enumerate(value)]
    return value


def ref_chain(n: int, beside: dict[str, Any]) -> dict[str, Any]:
    """n definitions, each pointing at the next with ``beside`` next to the $ref (issue 15 review F5:
    the conversion cost of such chains; bench/bench_suite.py and the plan checks use it)."""
    defs = {
        f"D{i}": {"type": "object", "properties": {"v": {"type": "integer"}, "n": {"$ref": f"#/$defs/D{i + 1}", **beside}}}
        for i in range(n)
    }
    defs[f"D{n}"] = {"type": "object", "properties": {"z": {"type": "string"}}}
    return {"$ref": "#/$defs/D0", "$defs": defs}
