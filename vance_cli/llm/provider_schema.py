"""Build the schema a provider is sent, per capability family, from the caller's exact schema.

Local validation always uses the caller's schema; this module only decides what the provider can
be asked to enforce (PEERS.md "Provider strict-mode limits"):

- **openai** (strict): the root is an object envelope, every object has ``additionalProperties:
  false`` and lists every property in ``required`` (optional ones become unions with ``null``);
  ``oneOf`` becomes ``anyOf``, ``allOf`` is merged where that is safe; ``not``, ``if/then/else``,
  ``dependent*``, ``minLength``/``maxLength``, ``uniqueItems``, ``patternProperties``, formats
  outside OpenAI's list and the like are removed.
- **anthropic**: no numeric or length constraints, ``minItems`` only 0/1, no ``maxItems``, regexes
  without lookaround/backreferences, no recursion in strict mode, formats from Anthropic's list.
- **gemini**: the ``responseJsonSchema`` subset (type, properties, enum, date/time formats,
  minimum/maximum, items/prefixItems, minItems/maxItems, anyOf, $ref).
- **other/ollama**: the caller's schema as it is, never strict.

Every constraint removed is reported as a *downgrade* (it is still checked locally) and its value
is appended to the node's ``description`` so the model can still follow it. A schema strict mode
cannot express without changing its meaning (a free-form object, an untyped value, recursion for
Anthropic) turns strict off for the whole request, which is reported too.

The envelope ``{"result": <target>, "_need": <string|null>}`` carries the spec's ``_need`` escape
(§4.2) without a root ``oneOf``, which OpenAI rejects.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from vance_cli.llm.base import Capabilities

RESULT_KEY = "result"
NEED_KEY = "_need"
TARGET_DEF = "__target"

# Keywords whose values are schemas, by shape.
_MAP_KEYS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LIST_KEYS = ("allOf", "anyOf", "oneOf", "prefixItems")
_ONE_KEYS = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)
# Plain constraints (values are not schemas); dropped ones are moved into the description.
_VALUE_KEYS = (
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
_KEEP_ANNOTATIONS = ("title", "description")
# Everything else (default, examples, $comment, $schema, $id, x-*, unknown words) is an annotation
# that some strict providers reject; it is dropped silently because it constrains nothing.

_BASE = frozenset({"type", "enum", "required", "properties", "items", "anyOf", "$ref", "$defs", "additionalProperties"})


@dataclass(frozen=True)
class FamilyRules:
    """What one provider family enforces; anything else is removed and reported."""

    name: str
    supported: frozenset[str]
    formats: frozenset[str] | None = None  # None: every format passes through
    const_to_enum: bool = False
    min_items_max: int | None = None  # Anthropic: minItems only 0 or 1
    plain_regex_only: bool = False  # Anthropic: no lookaround, no backreferences
    all_required: bool = False  # OpenAI strict: every property required, optional → nullable
    recursion_ok: bool = True
    max_depth: int | None = None
    max_enum: int | None = None
    passthrough: bool = False  # send the caller's schema untouched


OPENAI = FamilyRules(
    name="openai",
    supported=_BASE
    | {"pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"},
    formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}),
    const_to_enum=True,
    all_required=True,
    max_depth=10,
    max_enum=1000,
)
ANTHROPIC = FamilyRules(
    name="anthropic",
    supported=_BASE | {"allOf", "const", "pattern", "format", "minItems"},
    formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}),
    min_items_max=1,
    plain_regex_only=True,
    recursion_ok=False,
)
GEMINI = FamilyRules(
    name="gemini",
    supported=_BASE | {"format", "minimum", "maximum", "prefixItems", "minItems", "maxItems"},
    formats=frozenset({"date-time", "date", "time"}),
    const_to_enum=True,
)
PASSTHROUGH = FamilyRules(name="other", supported=frozenset(), passthrough=True)

_LOOKAROUND = re.compile(r"\(\?<?[=!]|\\[1-9]|\\k<")


def rules_for(capabilities: Capabilities) -> FamilyRules:
    """The family table; an openai-compatible server that claims strict mode gets OpenAI's rules."""
    family = capabilities.family
    if family == "openai":
        return OPENAI
    if family == "anthropic":
        return ANTHROPIC
    if family == "gemini":
        return GEMINI
    return OPENAI if capabilities.strict_json_schema else PASSTHROUGH


def format_chain(capabilities: Capabilities) -> list[str]:
    """The response formats to try, best first: json_schema → json_object → schema in the prompt."""
    chain = []
    if capabilities.json_schema:
        chain.append("json_schema")
    if capabilities.json_object:
        chain.append("json_object")
    chain.append("prompt")
    return chain


@dataclass
class ProviderPlan:
    """How one request asks for the output, and how to read the reply back."""

    mode: str  # "json_schema" | "json_object" | "prompt"
    strict: bool
    envelope: bool  # the reply is {"result": ..., "_need": ...}
    schema: dict[str, Any] | None  # provider-side schema (json_schema mode only)
    response_format: dict[str, Any] | None
    downgrades: list[str] = field(default_factory=list)
    nulls_injected: bool = False
    family: str = "other"

    @property
    def label(self) -> str:
        return f"{self.mode}:strict" if self.mode == "json_schema" and self.strict else self.mode


class _NotStrict(Exception):
    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why


def schema_name(name: str) -> str:
    """OpenAI's schema name rule: [a-zA-Z0-9_-]{1,64}."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]+", "_", name).strip("_")[:64]
    return cleaned or "output"


def _ptr(parts: tuple[str, ...]) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts) if parts else "(root)"


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


def accepts_null(node: Any) -> bool:
    """Whether the schema obviously admits null (type/enum/anyOf), without resolving $ref."""
    if node is True or node == {}:
        return True
    if not isinstance(node, dict):
        return False
    if "null" in _types(node):
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
    types = _types(node) if isinstance(node, dict) else []
    primitive = bool(types) and not ({"object", "array"} & set(types))
    # Primitives get a type list; objects and arrays a union, which every strict provider accepts.
    if primitive and not ({"anyOf", "$ref", "const"} & node.keys()):
        out = dict(node)
        out["type"] = types + ["null"] if types else "null"
        if "enum" in out and isinstance(out["enum"], list):
            out["enum"] = list(out["enum"]) + [None]
        return out
    if isinstance(node, dict) and "enum" in node and not ({"anyOf", "$ref", "const", "type"} & node.keys()):
        out = dict(node)
        out["enum"] = list(out["enum"]) + [None]
        return out
    return {"anyOf": [node, {"type": "null"}]}


class _Transformer:
    def __init__(self, rules: FamilyRules, strict: bool) -> None:
        self.rules = rules
        self.strict = strict
        self.downgrades: list[str] = []
        self.nulls_injected = False
        self.refs: list[str] = []

    def note(self, parts: tuple[str, ...], what: str) -> None:
        line = f"{_ptr(parts)}: {what}"
        if line not in self.downgrades:
            self.downgrades.append(line)

    def lost(self, parts: tuple[str, ...], keyword: str) -> None:
        self.note(parts, f"{keyword} removed (not enforced by {self.rules.name}; checked locally)")

    # -- the walk ---------------------------------------------------------------------------------

    def walk(self, node: Any, parts: tuple[str, ...], depth: int = 0) -> Any:
        if isinstance(node, bool):
            if self.strict and node is True:
                raise _NotStrict(_ptr(parts), "any value is allowed here, which strict mode cannot express")
            if self.strict and node is False:
                raise _NotStrict(_ptr(parts), "a `false` schema, which strict mode cannot express")
            return node
        if not isinstance(node, dict):
            return node
        if self.rules.max_depth is not None and self.strict and depth > self.rules.max_depth:
            raise _NotStrict(_ptr(parts), f"nesting deeper than {self.rules.max_depth} levels")
        node = dict(node)
        sup = self.rules.supported

        if "allOf" in node and ("allOf" not in sup or _contains_ref(node["allOf"])):
            node = self._merge_all_of(node, parts)
        if "oneOf" in node and "oneOf" not in sup:
            alts = node.pop("oneOf")
            if "anyOf" not in node and isinstance(alts, list):
                node["anyOf"] = alts
                self.note(parts, "oneOf relaxed to anyOf (exactly-one checked locally)")
            else:
                self.lost(parts, "oneOf")
        if "const" in node and self.rules.const_to_enum:
            const = node.pop("const")
            enum = node.get("enum")
            node["enum"] = [const] if not isinstance(enum, list) or const in enum else []

        out: dict[str, Any] = {}
        moved: list[str] = []
        for key, value in node.items():
            if key in _KEEP_ANNOTATIONS:
                if isinstance(value, str):
                    out[key] = value
            elif key in ("$ref", "$dynamicRef"):
                if key == "$ref" and isinstance(value, str):
                    out["$ref"] = value
                    self.refs.append(value)
                else:
                    self.lost(parts, key)
            elif key == "type":
                out["type"] = value
            elif key == "enum":
                if isinstance(value, list):
                    if self.rules.max_enum is not None and len(value) > self.rules.max_enum:
                        self.lost(parts, f"enum of {len(value)} values")
                        continue
                    out["enum"] = value
            elif key == "const":
                out["const"] = value
            elif key == "required":
                if isinstance(value, list):
                    out["required"] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
            elif key in _MAP_KEYS:
                if key not in sup and key not in ("$defs", "definitions"):
                    self.lost(parts, key)
                    continue
                if isinstance(value, dict):
                    out[key] = {k: self.walk(v, parts + (key, k), depth + (key == "properties")) for k, v in value.items()}
            elif key in _LIST_KEYS:
                if key not in sup:
                    self.lost(parts, key)
                    continue
                if isinstance(value, list):
                    out[key] = [self.walk(v, parts + (key, str(i)), depth) for i, v in enumerate(value)]
            elif key in _ONE_KEYS:
                if key not in sup:
                    self.lost(parts, key)
                    continue
                if key == "additionalProperties" and isinstance(value, bool):
                    out[key] = value
                else:
                    out[key] = self.walk(value, parts + (key,), depth + (key == "items"))
            elif key in _VALUE_KEYS:
                if self._value_ok(key, value, parts):
                    out[key] = value
                else:
                    self.lost(parts, f"{key}")
                    moved.append(f"{key}={json.dumps(value, ensure_ascii=False)}")
            # else: an annotation or unknown word; dropped silently

        if moved:
            hint = "Constraints: " + "; ".join(moved) + "."
            out["description"] = f"{out['description']} {hint}" if out.get("description") else hint
        if self.strict:
            self._strict_node(out, parts)
        return out

    def _value_ok(self, key: str, value: Any, parts: tuple[str, ...]) -> bool:
        if key not in self.rules.supported:
            return False
        if key == "format" and self.rules.formats is not None:
            return value in self.rules.formats
        if key == "pattern" and self.rules.plain_regex_only:
            return isinstance(value, str) and not _LOOKAROUND.search(value)
        if key == "minItems" and self.rules.min_items_max is not None:
            return isinstance(value, int) and value <= self.rules.min_items_max
        return True

    def _merge_all_of(self, node: dict[str, Any], parts: tuple[str, ...]) -> dict[str, Any]:
        """Fold allOf into its parent when no keyword collides; otherwise drop it (reported)."""
        subs = node.pop("allOf")
        if not isinstance(subs, list):
            return node
        merged = dict(node)
        for sub in subs:
            if sub is True or sub == {}:
                continue
            if not isinstance(sub, dict) or "$ref" in sub:
                self.lost(parts, "allOf")
                return node
            for key, value in sub.items():
                if key == "properties" and isinstance(value, dict) and isinstance(merged.get("properties", {}), dict):
                    props = dict(merged.get("properties", {}))
                    if set(props) & set(value):
                        self.lost(parts, "allOf")
                        return node
                    props.update(value)
                    merged["properties"] = props
                elif key == "required" and isinstance(value, list):
                    merged["required"] = list(dict.fromkeys(list(merged.get("required", [])) + value))
                elif key in _KEEP_ANNOTATIONS and key in merged:
                    continue
                elif key in merged and merged[key] != value:
                    self.lost(parts, "allOf")
                    return node
                else:
                    merged[key] = value
        return merged

    def _strict_node(self, out: dict[str, Any], parts: tuple[str, ...]) -> None:
        """OpenAI/Anthropic strict: closed objects, typed values; optional → nullable for OpenAI."""
        types = _types(out)
        if not types and "properties" in out and not ({"anyOf", "$ref", "enum", "const"} & out.keys()):
            types = ["object"]
            out["type"] = "object"
        if not (types or {"anyOf", "$ref", "enum", "const"} & out.keys()):
            raise _NotStrict(_ptr(parts), "a value without a type, which strict mode cannot express")
        if "object" in types or "properties" in out:
            props = out.get("properties")
            if not isinstance(props, dict) or not props:
                if out.get("additionalProperties") is not False:
                    raise _NotStrict(_ptr(parts), "a free-form object (strict mode needs its properties declared)")
                out.setdefault("properties", {})
            extra = out.get("additionalProperties")
            if extra is not False:
                if extra is not None:
                    self.note(parts, "additionalProperties set to false (extra keys are not produced)")
                out["additionalProperties"] = False
            if self.rules.all_required:
                required = [r for r in out.get("required", []) if r in props]
                for key in props:
                    if key not in required:
                        props[key] = make_nullable(props[key])
                        self.nulls_injected = True
                out["required"] = list(props)
        if "array" in types and "items" not in out and "prefixItems" not in out:
            raise _NotStrict(_ptr(parts), "an array whose items are unconstrained")


def _contains_ref(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_contains_ref(v) for v in node.values())
    if isinstance(node, list):
        return any(_contains_ref(v) for v in node)
    return False


def _rewrite_refs(node: Any, fn) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out[k] = fn(v)
            elif k in ("enum", "const"):
                out[k] = v
            else:
                out[k] = _rewrite_refs(v, fn)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, fn) for v in node]
    return node


def _resolve(root: Any, ref: str) -> Any:
    if not ref.startswith("#"):
        raise KeyError(ref)
    node = root
    frag = ref[1:]
    if not frag:
        return node
    for raw in frag.lstrip("/").split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node[part]
        elif isinstance(node, list):
            node = node[int(part)]
        else:
            raise KeyError(ref)
    return node


def _has_cycle(schema: dict[str, Any]) -> bool:
    """A $ref cycle (recursion) among the schema's definitions, or back to the root."""
    defs = schema.get("$defs") or {}
    graph: dict[str, set[str]] = {}

    def refs_in(node: Any) -> set[str]:
        found: set[str] = set()
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "$ref" and isinstance(v, str):
                    found.add(v)
                elif k not in ("enum", "const"):
                    found |= refs_in(v)
        elif isinstance(node, list):
            for v in node:
                found |= refs_in(v)
        return found

    root_body = {k: v for k, v in schema.items() if k != "$defs"}
    graph["#"] = refs_in(root_body)
    for name, body in defs.items():
        graph[f"#/$defs/{name}"] = refs_in(body)

    def norm(ref: str) -> str:
        if ref == "#":
            return "#"
        for key in graph:
            if key != "#" and (ref == key or ref.startswith(key + "/")):
                return key
        return "#"  # any other internal pointer lands inside the root body

    seen: dict[str, int] = {}

    def visit(n: str) -> bool:
        state = seen.get(n, 0)
        if state == 1:
            return True
        if state == 2:
            return False
        seen[n] = 1
        for ref in graph.get(n, ()):
            if ref.startswith("#") and visit(norm(ref)):
                return True
        seen[n] = 2
        return False

    return any(visit(n) for n in list(graph))


def _is_plain_object(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "object" and not ({"anyOf", "oneOf", "allOf", "$ref"} & node.keys())


def _hoist_definitions(schema: Any) -> Any:
    """Rename a root `definitions` to `$defs` and point refs at the new place (all families)."""
    if not isinstance(schema, dict) or "definitions" not in schema:
        return schema
    out = dict(schema)
    defs = dict(out.get("$defs") or {})
    for k, v in (out.pop("definitions") or {}).items():
        defs.setdefault(k, v)
    out["$defs"] = defs
    return _rewrite_refs(out, lambda r: "#/$defs/" + r[len("#/definitions/") :] if r.startswith("#/definitions/") else r)


def _fix_unresolvable(provider: dict[str, Any], downgrades: list[str]) -> dict[str, Any]:
    """Replace refs that do not resolve inside the provider schema (external or broken) by `{}`."""
    bad: list[str] = []

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                try:
                    _resolve(provider, node["$ref"])
                except (KeyError, IndexError, ValueError, TypeError):
                    bad.append(node["$ref"])
                    return {k: fix(v) for k, v in node.items() if k != "$ref"}
            return {k: (v if k in ("enum", "const") else fix(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    fixed = fix(provider)
    for ref in dict.fromkeys(bad):
        downgrades.append(f"$ref {ref}: not resolvable inside the schema; sent unconstrained (checked locally)")
    return fixed


def _transform(schema: Any, rules: FamilyRules, strict: bool) -> tuple[Any, _Transformer]:
    t = _Transformer(rules, strict)
    body = copy.deepcopy(schema)
    if not rules.passthrough:
        body = t.walk(body, ())
        if strict and not rules.recursion_ok and isinstance(body, dict) and _has_cycle(body):
            raise _NotStrict("(root)", "a recursive schema, which this provider's strict mode does not accept")
        if strict:
            for ref in t.refs:
                try:
                    _resolve(body, ref)
                except (KeyError, IndexError, ValueError, TypeError):
                    raise _NotStrict("(root)", f"a $ref ({ref}) that does not resolve inside the schema") from None
    elif isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in ("$schema", "$id")}
    return body, t


def build_plan(
    schema: dict[str, Any] | bool,
    capabilities: Capabilities,
    *,
    mode: str = "json_schema",
    allow_need: bool = False,
    require_strict: bool = True,
    name: str = "output",
) -> ProviderPlan:
    """The request shape for one response format; the caller's schema is never modified."""
    rules = rules_for(capabilities)
    schema = _hoist_definitions(schema)
    if mode != "json_schema":
        # No provider schema: the prompt carries the exact schema. json_object replies must be
        # objects, so a non-object target still travels inside the envelope.
        envelope = not _is_plain_object(schema)
        return ProviderPlan(
            mode=mode,
            strict=False,
            envelope=envelope,
            schema=None,
            response_format={"type": "json_object"} if mode == "json_object" else None,
            downgrades=[f"(schema): not enforced by the provider ({mode}); checked locally"],
            family=rules.name,
        )

    want_strict = bool(require_strict and capabilities.strict_json_schema and not rules.passthrough)
    downgrades: list[str] = []
    try:
        body, t = _transform(schema, rules, want_strict)
        strict = want_strict
    except _NotStrict as exc:
        body, t = _transform(schema, rules, False)
        strict = False
        downgrades.append(f"strict output off: {exc.where} is {exc.why}")
    downgrades.extend(t.downgrades)

    envelope = allow_need or not _is_plain_object(body)
    if envelope:
        body = body if isinstance(body, dict) else ({} if body is True else {"not": {}})
        defs = body.pop("$defs", None) if isinstance(body, dict) else None
        defs = dict(defs or {})
        non_def_refs = [r for r in t.refs if r.startswith("#") and not r.startswith("#/$defs/")]
        if non_def_refs:
            # Refs into the target itself (recursion to "#"): keep the target addressable as a def.
            body = _rewrite_refs(body, lambda r: "#/$defs/" + TARGET_DEF + r[1:] if r.startswith("#") and not r.startswith("#/$defs/") else r)
            defs = {k: _rewrite_refs(v, lambda r: "#/$defs/" + TARGET_DEF + r[1:] if r.startswith("#") and not r.startswith("#/$defs/") else r) for k, v in defs.items()}
            defs[TARGET_DEF] = body
            body = {"$ref": f"#/$defs/{TARGET_DEF}"}
        result_schema = make_nullable(body) if allow_need else body
        props: dict[str, Any] = {RESULT_KEY: result_schema}
        if allow_need:
            props[NEED_KEY] = {
                "type": ["string", "null"],
                "description": "null when the input has everything; else a short description of what is missing",
            }
        provider: dict[str, Any] = {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
        if defs:
            provider["$defs"] = defs
    else:
        provider = body
    provider = _fix_unresolvable(provider, downgrades)
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": schema_name(name), "schema": provider, "strict": strict},
    }
    return ProviderPlan(
        mode="json_schema",
        strict=strict,
        envelope=envelope,
        schema=provider,
        response_format=response_format,
        downgrades=downgrades,
        nulls_injected=t.nulls_injected,
        family=rules.name,
    )


def strip_injected_nulls(data: Any, schema: Any, validator: Any = None) -> Any:
    """Drop ``null`` values of optional properties whose own schema does not admit null.

    Those are exactly the nulls OpenAI strict mode forces for absent optional fields; a null the
    caller's schema allows (or a required one) is kept so local validation sees the real output.
    """
    from vance_cli.llm.reasons import make_validator

    v = validator or make_validator(schema)

    def allows(sub: Any, value: Any) -> bool:
        try:
            return v.evolve(schema=sub).is_valid(value)
        except Exception:  # noqa: BLE001 - an unresolvable ref: the validator reports it later
            return True

    def strip(value: Any, node: Any, depth: int, seen: set[int]) -> Any:
        # ``seen`` holds the schema nodes already applied at this data level: a `$ref` cycle
        # (e.g. anyOf [{"$ref": "#"}, ...]) is followed once per level, never exponentially.
        if depth > 64 or not isinstance(node, dict) or id(node) in seen:
            return value
        seen.add(id(node))
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                value = strip(value, _resolve(schema, ref), depth + 1, seen)
            except (KeyError, IndexError, ValueError, TypeError):
                pass
        for sub in node.get("allOf", []) if isinstance(node.get("allOf"), list) else []:
            value = strip(value, sub, depth + 1, seen)
        for key in ("anyOf", "oneOf"):
            alts = node.get(key)
            if isinstance(alts, list):
                for alt in alts:
                    candidate = strip(copy.deepcopy(value), alt, depth + 1, seen)
                    if candidate != value and allows(alt, candidate):
                        value = candidate
                        break
        if isinstance(value, dict):
            props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
            required = set(node.get("required", []) if isinstance(node.get("required"), list) else [])
            out = {}
            for key, item in value.items():
                sub = props.get(key)
                if item is None and sub is not None and key not in required and not allows(sub, None):
                    continue
                out[key] = strip(item, sub, depth + 1, set()) if sub is not None else item
            value = out
        elif isinstance(value, list):
            prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
            items = node.get("items")
            value = [strip(x, prefix[i] if i < len(prefix) else items, depth + 1, set()) for i, x in enumerate(value)]
        return value

    return strip(data, schema, 0, set())
