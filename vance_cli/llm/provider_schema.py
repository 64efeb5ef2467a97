"""Build the schema a provider is sent, per capability family, from the caller's exact schema.

Local validation always uses the caller's schema; this module only decides what the provider can
be asked to enforce (PEERS.md "Provider strict-mode limits"). The rule every family keeps: **the
provider schema never excludes an answer the caller's schema accepts** (apart from keys no
schema declares, which closed objects do not produce; that is reported). What a family cannot
enforce is removed (a relaxation, reported, still checked locally); what cannot be relaxed
turns strict mode off, with the reason.

Steps:

1. ``$schema`` is honoured: a draft-4/6/7/2019-09 schema is rewritten into its 2020-12 form
   (``vance_cli.llm.dialects``), so ``dependencies``, tuple ``items`` and draft-4 booleans keep
   their meaning.
2. Every internal ``$ref`` (pointer, ``$anchor``, base-URI form, into ``definitions`` or any
   other container) is resolved the way the validator resolves it and pointed at a root
   ``$defs`` entry (or ``#``); unreferenced definitions are not sent.
3. The walk, per family:

   - **openai** (strict): every object closed (``additionalProperties: false``, reported when the
     caller's schema left it open) with every property required (optional ones become unions with
     ``null``); ``$ref`` never has sibling keywords (the target is inlined, or the annotations
     dropped when it is recursive); ``oneOf`` becomes ``anyOf``; ``allOf`` (also with ``$ref``)
     is merged; keywords beside an ``anyOf`` and multi-type ``type`` lists are distributed into
     the alternatives; ``if/then/else``, ``dependentSchemas``, ``not``, length and uniqueness
     constraints, ``patternProperties``, formats outside OpenAI's list are removed; the
     properties that removed branches declare stay as optional properties. Limits (nesting depth
     10 counted through ``$ref`` and the envelope, 5,000 properties, 1,000 enum values, 15,000
     characters per enum of more than 250 strings, 120,000 characters of names and values) are
     checked on the final schema: an enum over a limit is dropped (checked locally), anything
     else turns strict off.
   - **anthropic**: no numeric or length constraints, ``minItems`` only 0/1, no ``maxItems``,
     regexes without lookaround/backreferences, no recursion in strict mode, ``allOf`` without
     ``$ref``, formats from Anthropic's list.
   - **gemini**: the ``responseJsonSchema`` subset (type, properties, enum, date/time formats,
     minimum/maximum, items/prefixItems, minItems/maxItems, anyOf, $ref).
   - **other/ollama**: the caller's schema as it is, never strict.

Every constraint removed is reported as a *downgrade* and its value is appended to the node's
``description`` so the model can still follow it.

The envelope ``{"result": <target>, "_need": <string|null>}`` carries the spec's ``_need`` escape
(§4.2) without a root ``oneOf``, which OpenAI rejects.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from vance_cli.llm.base import Capabilities
from vance_cli.text import json_pointer, pointer_token

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
_ASSERTING = frozenset(
    set(_MAP_KEYS) - {"$defs", "definitions"} | set(_LIST_KEYS) | set(_ONE_KEYS) | set(_VALUE_KEYS)
) | {"type", "enum", "const", "required", "$ref", "$dynamicRef"}

# Keywords that only constrain values of one JSON type.
_OBJECT_ONLY = frozenset(
    {"properties", "patternProperties", "additionalProperties", "required", "minProperties", "maxProperties",
     "dependentRequired", "dependentSchemas", "propertyNames", "unevaluatedProperties"}
)
_ARRAY_ONLY = frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems"})
_STRING_ONLY = frozenset({"minLength", "maxLength", "pattern", "format"})
_NUMBER_ONLY = frozenset({"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})

_BASE = frozenset({"type", "enum", "required", "properties", "items", "anyOf", "$ref", "$defs", "additionalProperties"})

# OpenAI's schema-wide limits (structured outputs guide, "Supported schemas").
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM_VALUES = 1000
OPENAI_LARGE_ENUM = 250  # an enum of more strings than this ...
OPENAI_LARGE_ENUM_CHARS = 15000  # ... may hold at most this many characters
OPENAI_MAX_STRING_CHARS = 120000  # property names, definition names, enum and const values


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
    ref_siblings: bool = True  # False: a $ref node may carry no other keyword (OpenAI)
    single_types: bool = False  # True: `type` is one name or [name, "null"]; other lists become anyOf
    limits: bool = False  # check OpenAI's schema-wide limits in strict mode
    passthrough: bool = False  # send the caller's schema untouched


OPENAI = FamilyRules(
    name="openai",
    supported=_BASE
    | {"pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"},
    formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}),
    const_to_enum=True,
    all_required=True,
    ref_siblings=False,
    single_types=True,
    limits=True,
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
    def __init__(self, where: str, why: str, *, limit: bool = False) -> None:
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why
        self.limit = limit  # a schema-wide limit (may pass when refs are not inlined)


def schema_name(name: str) -> str:
    """OpenAI's schema name rule: [a-zA-Z0-9_-]{1,64}."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]+", "_", name).strip("_")[:64]
    return cleaned or "output"


def _ptr(parts: tuple[str, ...]) -> str:
    return json_pointer(parts, "(root)")


def _types(node: dict[str, Any]) -> list[str]:
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
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _json_in(value: Any, values: list[Any]) -> bool:
    return any(json_equal(value, v) for v in values)


def _json_type(value: Any) -> str:
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


def _types_of_values(values: list[Any]) -> list[str]:
    found = list(dict.fromkeys(_json_type(v) for v in values))
    if "integer" in found and "number" in found:
        found.remove("integer")
    return found


def accepts_null(node: Any) -> bool:
    """Whether the schema obviously admits null (type/enum/anyOf), without resolving $ref."""
    if node is True or node == {}:
        return True
    if not isinstance(node, dict):
        return False
    if "null" in _types(node) and ("enum" not in node or None in (node.get("enum") or [])):
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
        out["type"] = "null" if types == ["null"] else types if "null" in types else types + ["null"]
        if "enum" in out and isinstance(out["enum"], list):
            out["enum"] = list(out["enum"]) + [None]
        return out
    if isinstance(node, dict) and "enum" in node and not ({"anyOf", "$ref", "const", "type"} & node.keys()):
        out = dict(node)
        out["enum"] = list(out["enum"]) + [None]
        return out
    return {"anyOf": [node, {"type": "null"}]}


# ---------------------------------------------------------------------------------------------
# Step 2: one place for every definition, every $ref pointing at "#" or "#/$defs/<name>".


def _subschemas(node: dict[str, Any]):
    """(key, index-or-name, subschema) for every subschema position of a 2020-12 node."""
    for key, value in node.items():
        if key in _ONE_KEYS or key in ("contentSchema",):
            yield key, None, value
        elif key in _LIST_KEYS and isinstance(value, list):
            for i, sub in enumerate(value):
                yield key, i, sub
        elif key in _MAP_KEYS and isinstance(value, dict):
            for name, sub in value.items():
                yield key, name, sub


@dataclass
class Prepared:
    body: Any  # the root schema without its definitions; refs rewritten
    defs: dict[str, Any]  # name → schema (refs rewritten)
    unresolved: list[str]  # refs that point outside the schema (kept as they are)
    check_defs: dict[str, Any] | None = None  # strip_injected_nulls' validation root, made once


def _def_name(ref: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", ref.split("#", 1)[-1]).strip("_.-") or "ref"
    base = base[-60:]
    name, n = base, 2
    while name in taken or name == TARGET_DEF:
        name = f"{base}_{n}"
        n += 1
    return name


_PREPARED: dict[int, tuple[Any, Prepared]] = {}


def prepare_schema(schema: Any) -> Prepared:
    """The 2020-12 form of ``schema`` with its definitions hoisted and refs normalised.

    Remembered for the last few schema objects (by identity; the entry holds the object, so its
    id cannot be reused): a call_for_json plans and reads back with the same schema many times.
    """
    hit = _PREPARED.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    prepared = _prepare_uncached(schema)
    if isinstance(schema, dict):
        if len(_PREPARED) >= 8:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[id(schema)] = (schema, prepared)
    return prepared


def _prepare_uncached(schema: Any) -> Prepared:
    from vance_cli.llm.dialects import upgrade

    root = upgrade(schema)
    if not isinstance(root, dict):
        return Prepared(body=root, defs={}, unresolved=[])

    # Names for the root's own definitions first, so refs keep their readable names.
    target_name: dict[int, str] = {id(root): "#"}
    taken: set[str] = set()
    originals: dict[str, Any] = {}
    for container in ("$defs", "definitions"):
        for name, sub in (root.get(container) or {}).items() if isinstance(root.get(container), dict) else ():
            if id(sub) in target_name:
                continue
            final = name if name not in taken and name != TARGET_DEF else _def_name(f"{container}_{name}", taken)
            taken.add(final)
            target_name[id(sub)] = final
            originals[final] = sub

    # Resolve every ref the way a validator would (anchors, $id bases, any JSON pointer).
    refs_of: dict[int, str] = {}  # id(node holding a $ref) → the new ref
    unresolved: list[str] = []
    if _has_key(root, ("$ref",)):
        _resolve_refs(root, target_name, taken, originals, refs_of, unresolved)

    memo: dict[int, Any] = {}

    def rewrite(node: Any, depth: int = 0) -> Any:
        if not isinstance(node, dict):
            return node
        got = memo.get(id(node))
        if got is not None:
            return got
        out: dict[str, Any] = {}
        memo[id(node)] = out
        for key, value in node.items():
            if key == "$ref" and id(node) in refs_of:
                out[key] = refs_of[id(node)]
            elif key in _ONE_KEYS or key == "contentSchema":
                out[key] = rewrite(value, depth + 1)
            elif key in _LIST_KEYS and isinstance(value, list):
                out[key] = [rewrite(v, depth + 1) for v in value]
            elif key in _MAP_KEYS and isinstance(value, dict):
                if key in ("$defs", "definitions"):
                    continue  # every definition a ref reaches lives in the root $defs now
                out[key] = {k: rewrite(v, depth + 1) for k, v in value.items()}
            else:
                out[key] = value
        return out

    body = rewrite(root)
    defs = {name: rewrite(sub) for name, sub in originals.items()}
    return Prepared(body=body, defs=defs, unresolved=list(dict.fromkeys(unresolved)))


def _resolve_refs(root, target_name, taken, originals, refs_of, unresolved) -> None:
    nested_ids = _has_key(root, ("$id",), skip_root=True)
    resolver_for: Any = None  # built only for refs a plain JSON pointer cannot resolve

    def base_resolver() -> Any:
        nonlocal resolver_for
        if resolver_for is None:
            from referencing import Registry
            from referencing.jsonschema import DRAFT202012

            resource = DRAFT202012.create_resource(root)
            registry = Registry().with_resource(uri=resource.id() or "", resource=resource)
            if nested_ids or _has_key(root, ("$anchor", "$dynamicAnchor")):
                registry = registry.crawl()
            resolver_for = registry.resolver_with_root(resource)
        return resolver_for

    def lookup(ref: str, resolver: Any) -> Any:
        from referencing.exceptions import Unresolvable

        if not nested_ids and (ref == "#" or ref.startswith("#/")):
            try:
                return _resolve(root, ref)
            except (KeyError, IndexError, ValueError, TypeError):
                return None
        try:
            return (resolver or base_resolver()).lookup(ref).contents
        except (Unresolvable, KeyError, ValueError, TypeError):
            return None

    # Walk with the resolver of each node's base URI (a nested $id changes it).
    stack: list[tuple[Any, Any, bool]] = [(root, None, True)]
    seen: set[int] = set()
    while stack:
        node, resolver, is_root = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if nested_ids and not is_root and isinstance(node.get("$id"), str):
            from referencing.jsonschema import DRAFT202012

            resolver = (resolver or base_resolver()).in_subresource(DRAFT202012.create_resource(node))
        if isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            target = lookup(ref, resolver)
            if target is None or not isinstance(target, (dict, bool)):
                unresolved.append(ref)
            else:
                name = target_name.get(id(target))
                if name is None:
                    name = _def_name(ref, taken)
                    taken.add(name)
                    target_name[id(target)] = name
                    originals[name] = target
                    stack.append((target, resolver, False))  # refs inside a target resolve from there
                refs_of[id(node)] = "#" if name == "#" else f"#/$defs/{name}"
        for _, _, sub in _subschemas(node):
            stack.append((sub, resolver, False))


def _has_key(node: Any, keys: tuple[str, ...], *, skip_root: bool = False) -> bool:
    """Whether a (sub)schema holds one of ``keys`` with a string value (not looking into enum etc.)."""
    stack = [node]
    first = True
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if not (first and skip_root) and any(isinstance(n.get(k), str) for k in keys):
                return True
            first = False
            stack.extend(sub for _, _, sub in _subschemas(n))
    return False


# ---------------------------------------------------------------------------------------------
# Step 3: the walk.


Stack = tuple[str, ...]  # the definitions inlined on the way to a node ("#" is the root)


def _annotations(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k in _KEEP_ANNOTATIONS}


def _asserting(node: dict[str, Any]) -> set[str]:
    return {k for k in node if k in _ASSERTING}


def _object_structure(node: dict[str, Any]) -> bool:
    return bool({"properties", "required", "additionalProperties", "patternProperties"} & node.keys()) or "object" in _types(node)


class _Transformer:
    def __init__(self, rules: FamilyRules, strict: bool, prepared: Prepared, *, inline_annotated: bool = True) -> None:
        self.rules = rules
        self.strict = strict
        self.prepared = prepared
        self.inline_annotated = inline_annotated
        self.downgrades: list[str] = []
        self.closed: list[str] = []  # pointers of objects closed here (one summary line)
        self.nulls_injected = False
        self.refs: set[str] = set()

    def note(self, parts: tuple[str, ...], what: str) -> None:
        line = f"{_ptr(parts)}: {what}"
        if line not in self.downgrades:
            self.downgrades.append(line)

    def lost(self, parts: tuple[str, ...], keyword: str) -> None:
        self.note(parts, f"{keyword} removed (not enforced by {self.rules.name}; checked locally)")

    def target(self, ref: str) -> Any:
        if ref == "#":
            return self.prepared.body
        if ref.startswith("#/$defs/"):
            return self.prepared.defs.get(ref[len("#/$defs/") :])
        return None

    def summary(self) -> list[str]:
        lines = list(self.downgrades)
        if self.closed:
            closed = sorted(dict.fromkeys(self.closed), key=lambda p: (p != "(root)", p))
            shown = ", ".join(closed[:8]) + (f" and {len(closed) - 8} more" if len(closed) > 8 else "")
            lines.append(f"{shown}: additionalProperties set to false (keys the schema does not declare are not produced)")
        return lines

    # -- combinators ------------------------------------------------------------------------------

    def _inline(self, sub: Any, stack: Stack) -> tuple[Any, Stack, bool]:
        """(schema, names now inlined, ok): a {"$ref"} item replaced by its target, unless that
        target is already being inlined twice on this path (recursion) or does not exist.

        Twice, not once: the stack holds every definition inlined into a node and its subtree, so
        a definition merged at the root may be met again in a property that is not its own."""
        inlined = stack
        guard = 0
        while isinstance(sub, dict) and isinstance(sub.get("$ref"), str) and guard < 64:
            guard += 1
            ref = sub["$ref"]
            target = self.target(ref)
            name = ref
            if target is None or inlined.count(name) >= 2:
                return sub, inlined, False
            rest = {k: v for k, v in sub.items() if k != "$ref"}
            inlined = inlined + (name,)
            if rest:
                sub = {"allOf": [target, rest]}
                break
            sub = target
        return sub, inlined, True

    def _merge(self, items: list[Any], parts: tuple[str, ...], stack: Stack) -> tuple[dict[str, Any], Stack, list[Any]]:
        """The conjunction of ``items`` as one node (a superset where it cannot be exact).

        Returns (node, names inlined on the way, schemas whose declared properties must stay
        allowed although their constraints were dropped).
        """
        merged: dict[str, Any] = {}
        folds: list[Any] = []
        pending: list[str] = []  # refs that cannot be inlined (recursive, or outside the schema)
        queue = list(items)
        inlined = stack
        partly = False
        guard = 0
        while queue:
            guard += 1
            if guard > 256:
                folds.extend(x for x in queue if isinstance(x, dict))
                partly = True
                break
            sub = queue.pop(0)
            if sub is True or sub == {}:
                continue
            if not isinstance(sub, dict):
                continue  # `false`: nothing satisfies the caller's schema; any superset will do
            if isinstance(sub.get("$ref"), str):
                resolved, inlined2, ok = self._inline(sub, inlined)
                if ok:
                    inlined = inlined2
                    queue.insert(0, resolved)
                else:
                    pending.append(sub["$ref"])
                    rest = {k: v for k, v in sub.items() if k != "$ref"}
                    if rest:
                        queue.insert(0, rest)
                continue
            for key, value in sub.items():
                if key == "allOf" and isinstance(value, list):
                    queue[0:0] = list(value)
                    continue
                if key not in merged:
                    merged[key] = value
                    continue
                old = merged[key]
                if key in _KEEP_ANNOTATIONS or json_equal(old, value):
                    continue
                if key == "properties" and isinstance(old, dict) and isinstance(value, dict):
                    props = dict(old)
                    for name, sch in value.items():
                        props[name] = {"allOf": [props[name], sch]} if name in props else sch
                    merged[key] = props
                elif key == "required" and isinstance(old, list) and isinstance(value, list):
                    merged[key] = list(dict.fromkeys(old + value))
                elif key == "type":
                    a = old if isinstance(old, list) else [old]
                    b = value if isinstance(value, list) else [value]
                    both = [t for t in a if t in b]
                    both += [t for t in ("integer",) if t not in both and (("integer" in a and "number" in b) or ("number" in a and "integer" in b))]
                    merged[key] = (both[0] if len(both) == 1 else both) if both else old
                elif key in ("enum", "const"):
                    a = old if key == "enum" else [old]
                    b = value if key == "enum" else [value]
                    if isinstance(a, list) and isinstance(b, list):
                        both = [v for v in a if _json_in(v, b)]
                        if key == "enum":
                            merged[key] = both or a
                        elif not both:
                            partly = True
                elif key in ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains") and _numbers(old, value):
                    merged[key] = max(old, value)
                elif key in ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains") and _numbers(old, value):
                    merged[key] = min(old, value)
                elif key in ("items", "additionalProperties", "contains", "propertyNames", "not", "unevaluatedItems", "unevaluatedProperties") and isinstance(old, (dict, bool)) and isinstance(value, (dict, bool)):
                    merged[key] = {"allOf": [old, value]} if key != "not" else {"anyOf": [old, value]}
                elif key in ("anyOf", "oneOf") and isinstance(old, list) and isinstance(value, list) and len(old) * len(value) <= 16:
                    merged[key] = [{"allOf": [x, y]} for x in old for y in value]
                elif key in ("anyOf", "oneOf", "then", "else", "if", "dependentSchemas"):
                    folds.append({key: value})
                    partly = True
                else:
                    partly = True  # keep the first value: a superset of the conjunction
        if pending:
            if len(pending) == 1 and not _asserting(merged):
                merged = {"$ref": pending[0], **_annotations(merged)}  # a lone recursive ref stays a ref
            else:
                for ref in dict.fromkeys(pending):
                    self.note(parts, f"allOf item {ref} not merged (recursive or outside the schema; checked locally)")
                    target = self.target(ref)
                    if isinstance(target, dict):
                        folds.append(target)
        if partly:
            self.note(parts, "allOf partly merged (conflicting keywords kept from the first schema; checked locally)")
        return merged, inlined, folds

    def _declared(self, node: Any, stack: Stack, depth: int = 0) -> dict[str, list[Any]]:
        """Property name → the schemas a subschema (and what it combines) declares for it."""
        found: dict[str, list[Any]] = {}
        if not isinstance(node, dict) or depth > 16:
            return found
        if isinstance(node.get("$ref"), str):
            target = self.target(node["$ref"])
            if target is not None and node["$ref"] not in stack:
                for k, v in self._declared(target, stack + (node["$ref"],), depth + 1).items():
                    found.setdefault(k, []).extend(v)
        for name, sub in (node.get("properties") or {}).items() if isinstance(node.get("properties"), dict) else ():
            found.setdefault(name, []).append(sub)
        children: list[Any] = []
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                children += node[key]
        for key in ("then", "else"):
            children.append(node.get(key))
        if isinstance(node.get("dependentSchemas"), dict):
            children += list(node["dependentSchemas"].values())
        for child in children:
            for k, v in self._declared(child, stack, depth + 1).items():
                found.setdefault(k, []).extend(v)
        return found

    def _fold(self, node: dict[str, Any], sources: list[Any], stack: Stack) -> dict[str, Any]:
        """Declare the properties that removed branches declare, as optional properties."""
        declared: dict[str, list[Any]] = {}
        for src in sources:
            for k, v in self._declared(src, stack).items():
                declared.setdefault(k, []).extend(v)
        props = dict(node.get("properties") or {}) if isinstance(node.get("properties"), dict) else {}
        added = False
        for name, schemas in declared.items():
            if name in props:
                continue  # the node's own schema for it holds in every case
            unique: list[Any] = []
            for s in schemas:
                if not any(json_equal(s, u) for u in unique):
                    unique.append(s)
            props[name] = unique[0] if len(unique) == 1 else {"anyOf": unique}
            added = True
        if added:
            node = dict(node)
            node["properties"] = props
        return node

    # -- the walk ---------------------------------------------------------------------------------

    def walk(self, node: Any, parts: tuple[str, ...], stack: Stack = ()) -> Any:
        if isinstance(node, bool):
            if self.strict and node is True:
                raise _NotStrict(_ptr(parts), "a schema that allows any value, which strict mode cannot express")
            if self.strict and node is False:
                raise _NotStrict(_ptr(parts), "a `false` schema, which strict mode cannot express")
            return node
        if not isinstance(node, dict):
            return node
        node = {k: v for k, v in node.items() if k not in ("$defs", "definitions")}
        sup = self.rules.supported
        folds: list[Any] = []

        # A $ref beside other keywords means both apply (2020-12): merge them like allOf.
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) > 1:
            others = _asserting(node) - {"$ref"}
            if others or (not self.rules.ref_siblings and self.inline_annotated):
                rest = {k: v for k, v in node.items() if k != "$ref"}
                node = {**rest, "allOf": [{"$ref": ref}] + list(rest.get("allOf") or [])}
            elif not self.rules.ref_siblings:
                node = {"$ref": ref}  # the target holds its own annotations
        if isinstance(node.get("allOf"), list) and ("allOf" not in sup or _contains_ref(node["allOf"])):
            base = {k: v for k, v in node.items() if k != "allOf"}
            node, stack, more = self._merge([base, *node["allOf"]], parts, stack)
            folds += more
            if isinstance(node.get("$ref"), str) and len(node) > 1 and not self.rules.ref_siblings:
                node = {"$ref": node["$ref"]}
        if "oneOf" in node and "oneOf" not in sup:
            alts = node.pop("oneOf")
            if "anyOf" not in node and isinstance(alts, list):
                node["anyOf"] = alts
                self.note(parts, "oneOf relaxed to anyOf (exactly-one checked locally)")
            elif isinstance(alts, list) and isinstance(node.get("anyOf"), list):
                node, stack, more = self._merge([{k: v for k, v in node.items() if k not in ("anyOf",)}, {"anyOf": node["anyOf"]}, {"anyOf": alts}], parts, stack)
                folds += more
                self.note(parts, "oneOf relaxed to anyOf (exactly-one checked locally)")
            else:
                self.lost(parts, "oneOf")
        if "const" in node and self.rules.const_to_enum:
            const = node.pop("const")
            # const and enum both apply: their intersection, or const alone (a superset) when empty.
            node["enum"] = [const]
        if isinstance(node.get("enum"), list) and "type" not in node and node["enum"] and self.strict:
            node["type"] = _one_or_list(_types_of_values(node["enum"]))

        # Keywords for types the value cannot have constrain nothing.
        types = _types(node)
        if isinstance(node.get("type"), list) and len(set(types)) == 1:
            node["type"] = types[0]
        if types:
            node = _prune_for_types(node, types)
            if isinstance(node.get("enum"), list):
                # type and enum both apply: only the values of an allowed type can occur.
                fitting = [v for v in node["enum"] if _json_type(v) in types or (_json_type(v) == "integer" and "number" in types)]
                if len(fitting) != len(node["enum"]):
                    node = {**node, "enum": fitting} if fitting else {k: v for k, v in node.items() if k != "enum"}
            if self.rules.single_types and "enum" in node and {"object", "array"} & set(types):
                node = {k: v for k, v in node.items() if k != "enum"}
                self.lost(parts, "enum of objects or arrays")

        if self.strict and "anyOf" in node and isinstance(node["anyOf"], list):
            spread = {k: v for k, v in node.items() if k != "anyOf" and k in _ASSERTING}
            if spread:
                return self._distribute(node, spread, parts, stack, folds)
        if self.strict and self.rules.single_types and len([t for t in types if t != "null"]) > 1 and "anyOf" not in node:
            return self._split_types(node, types, parts, stack)

        # Removed branches must not take away the properties they declare.
        closing = (self.strict and (_object_structure(node) or folds)) or node.get("additionalProperties") is False
        for key in ("if", "then", "else", "dependentSchemas"):
            if key in node and key not in sup:
                value = node.pop(key)
                self.lost(parts, key)
                if key != "if":
                    folds.append({key: value})
        if isinstance(node.get("prefixItems"), list) and "prefixItems" not in sup and isinstance(node.get("items"), (dict, bool)):
            # Without prefixItems, `items` would apply to the leading items too: let those pass.
            node = dict(node)
            if node["items"] is False:
                node["items"] = {"anyOf": list(node["prefixItems"])}
                if not isinstance(node.get("maxItems"), int) or node["maxItems"] > len(node["prefixItems"]):
                    node["maxItems"] = len(node["prefixItems"])
            else:
                node["items"] = {"anyOf": [node["items"], *node["prefixItems"]]}
        patterns = node.get("patternProperties")
        if isinstance(patterns, dict) and patterns and "patternProperties" not in sup:
            extra = node.get("additionalProperties")
            if self.strict and not node.get("properties"):
                raise _NotStrict(_ptr(parts), "an object whose keys are only given by patterns (strict mode needs its properties declared)")
            if not self.strict and extra is not None and extra is not True:
                # Keys matching a pattern must stay allowed once the patterns are gone.
                allowed = [s for s in patterns.values()] + ([] if extra is False else [extra])
                node = dict(node)
                node["additionalProperties"] = allowed[0] if len(allowed) == 1 else {"anyOf": allowed}
        if closing and folds:
            node = self._fold(node, folds, stack)
        if self.strict and isinstance(node.get("required"), list):
            node = self._declare_required(node, parts)

        out: dict[str, Any] = {}
        moved: list[str] = []
        for key, value in node.items():
            if key in _KEEP_ANNOTATIONS:
                if isinstance(value, str):
                    out[key] = value
            elif key in ("$ref", "$dynamicRef"):
                if key == "$ref" and isinstance(value, str):
                    out["$ref"] = value
                    self.refs.add(value)
                else:
                    self.lost(parts, key)
            elif key == "type":
                out["type"] = value
            elif key == "enum":
                if isinstance(value, list):
                    out["enum"] = value
            elif key == "const":
                out["const"] = value
            elif key == "required":
                if isinstance(value, list):
                    out["required"] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
            elif key in _MAP_KEYS:
                if key not in sup or key in ("$defs", "definitions"):
                    if key not in ("$defs", "definitions"):
                        self.lost(parts, key)
                    continue
                if isinstance(value, dict):
                    out[key] = {k: self.walk(v, parts + (key, k), stack) for k, v in value.items()}
            elif key in _LIST_KEYS:
                if key not in sup:
                    self.lost(parts, key)
                    continue
                if isinstance(value, list):
                    out[key] = [self.walk(v, parts + (key, str(i)), stack) for i, v in enumerate(value)]
            elif key in _ONE_KEYS:
                if key not in sup:
                    self.lost(parts, key)
                    continue
                if key == "additionalProperties" and isinstance(value, bool):
                    out[key] = value
                elif key == "additionalProperties" and self.strict:
                    out[key] = value  # closed below; never sent
                else:
                    out[key] = self.walk(value, parts + (key,), stack)
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
        if "$ref" in out and len(out) > 1 and not self.rules.ref_siblings:
            out = {"$ref": out["$ref"]}
        return out

    def _distribute(self, node: dict[str, Any], spread: dict[str, Any], parts: tuple[str, ...], stack: Stack, folds: list[Any]) -> dict[str, Any]:
        """Keywords beside an anyOf, moved into each alternative (exact: A ∧ (B ∨ C) = (A ∧ B) ∨ (A ∧ C))."""
        out: dict[str, Any] = {k: v for k, v in node.items() if k in _KEEP_ANNOTATIONS and isinstance(v, str)}
        alts = []
        for i, alt in enumerate(node["anyOf"]):
            here = parts + ("anyOf", str(i))
            merged, inlined, more = self._merge([spread, alt], here, stack)
            if folds or more:
                merged = self._fold(merged, folds + more, inlined)
            alts.append(self.walk(merged, here, inlined))
        unique: list[Any] = []
        for alt in alts:
            if not any(json_equal(alt, u) for u in unique):
                unique.append(alt)
        if len(unique) == 1:
            single = dict(unique[0])
            for k, v in out.items():
                single.setdefault(k, v)
            if "$ref" in single and len(single) > 1 and not self.rules.ref_siblings:
                single = {"$ref": single["$ref"]}
            return single
        out["anyOf"] = unique
        return out

    def _split_types(self, node: dict[str, Any], types: list[str], parts: tuple[str, ...], stack: Stack) -> dict[str, Any]:
        """A multi-type node as an anyOf of single-type nodes (each with its type's keywords)."""
        out: dict[str, Any] = {k: v for k, v in node.items() if k in _KEEP_ANNOTATIONS and isinstance(v, str)}
        rest = {k: v for k, v in node.items() if k not in _KEEP_ANNOTATIONS and k != "type"}
        alts = []
        for t in types:
            alt = _prune_for_types({**rest, "type": t}, [t])
            if isinstance(alt.get("enum"), list):
                alt["enum"] = [v for v in alt["enum"] if _json_type(v) == t or (t == "number" and _json_type(v) == "integer")]
                if not alt["enum"]:
                    continue
            alts.append(self.walk(alt, parts, stack))
        if not alts:  # no value satisfies the caller's schema; any superset will do
            alts.append(self.walk(_prune_for_types({k: v for k, v in rest.items() if k != "enum"} | {"type": types[0]}, types[:1]), parts, stack))
        if len(alts) == 1:
            return {**alts[0], **{k: v for k, v in out.items() if k not in alts[0]}}
        out["anyOf"] = alts
        return out

    def _declare_required(self, node: dict[str, Any], parts: tuple[str, ...]) -> dict[str, Any]:
        """A required key without a `properties` entry gets the schema that governs it, so a
        closed object can still hold it."""
        props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        missing = [r for r in node["required"] if isinstance(r, str) and r not in props]
        if not missing:
            return node
        props = dict(props)
        patterns = node.get("patternProperties") if isinstance(node.get("patternProperties"), dict) else {}
        extra = node.get("additionalProperties")
        for name in missing:
            schema = None
            for pattern, sub in patterns.items():
                try:
                    if re.search(pattern, name):
                        schema = sub
                        break
                except re.error:
                    continue
            if schema is None and isinstance(extra, dict):
                schema = extra
            if schema is None:
                if extra is False:
                    continue  # required but forbidden: nothing satisfies the caller's schema either
                raise _NotStrict(_ptr(parts), f"an object that requires {name!r} without declaring its schema")
            props[name] = schema
        return {**node, "properties": props}

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

    def _strict_node(self, out: dict[str, Any], parts: tuple[str, ...]) -> None:
        """OpenAI/Anthropic strict: closed objects, typed values; optional → nullable for OpenAI."""
        types = _types(out)
        if not types and "properties" in out and not ({"anyOf", "$ref", "enum", "const"} & out.keys()):
            types = ["object"]
            out["type"] = "object"
            self.note(parts, "treated as an object (the schema has properties but no type)")
        if not types and "items" in out and not ({"anyOf", "$ref", "enum", "const"} & out.keys()):
            types = ["array"]
            out["type"] = "array"
            self.note(parts, "treated as an array (the schema has items but no type)")
        if not (types or {"anyOf", "$ref", "enum", "const"} & out.keys()):
            if "additionalProperties" in out:
                raise _NotStrict(_ptr(parts), "a free-form object (strict mode needs its properties declared)")
            raise _NotStrict(_ptr(parts), "a value without a type, which strict mode cannot express")
        if "object" in types or "properties" in out:
            props = out.get("properties")
            if not isinstance(props, dict):
                props = {}
            if not props and out.get("additionalProperties") is not False:
                raise _NotStrict(_ptr(parts), "a free-form object (strict mode needs its properties declared)")
            out["properties"] = props
            if out.get("additionalProperties") is not False:
                self.closed.append(_ptr(parts))
                out["additionalProperties"] = False
            if self.rules.all_required:
                required = [r for r in out.get("required", []) if r in props]
                for key in props:
                    if key not in required:
                        props[key] = make_nullable(props[key])
                        self.nulls_injected = True
                out["required"] = list(props)
            elif "required" in out:
                out["required"] = [r for r in out["required"] if r in props]
        if "array" in types and "items" not in out and "prefixItems" not in out:
            raise _NotStrict(_ptr(parts), "an array whose items are unconstrained")


def _numbers(a: Any, b: Any) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))


def _one_or_list(types: list[str]) -> Any:
    return types[0] if len(types) == 1 else types


def _prune_for_types(node: dict[str, Any], types: list[str]) -> dict[str, Any]:
    drop: set[str] = set()
    if "object" not in types:
        drop |= _OBJECT_ONLY
    if "array" not in types:
        drop |= _ARRAY_ONLY
    if "string" not in types:
        drop |= _STRING_ONLY
    if "number" not in types and "integer" not in types:
        drop |= _NUMBER_ONLY
    if not drop & node.keys():
        return node
    return {k: v for k, v in node.items() if k not in drop}


def _contains_ref(node: Any) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if "$ref" in n:
                return True
            stack.extend(v for k, v in n.items() if k not in ("enum", "const"))
        elif isinstance(n, list):
            stack.extend(n)
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


def _refs_in(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            for k, v in n.items():
                if k == "$ref" and isinstance(v, str):
                    found.add(v)
                elif k not in ("enum", "const"):
                    stack.append(v)
        elif isinstance(n, list):
            stack.extend(n)
    return found


_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LIST = ("allOf", "anyOf", "oneOf")


def in_place_cycle(schema: Any) -> str | None:
    """A `$ref` chain that comes back to where it started without descending into the value
    (e.g. ``{"not": {"$ref": "#"}}``): validating against it never ends. Returns one ref of it."""
    prepared = prepare_schema(schema)
    graph: dict[str, set[str]] = {}
    for name, node in [("#", prepared.body), *((f"#/$defs/{n}", d) for n, d in prepared.defs.items())]:
        refs: set[str] = set()
        stack = [node]
        while stack:
            n = stack.pop()
            if not isinstance(n, dict):
                continue
            if isinstance(n.get("$ref"), str):
                refs.add(n["$ref"])
            stack.extend(n[k] for k in _IN_PLACE_ONE if k in n)
            for k in _IN_PLACE_LIST:
                if isinstance(n.get(k), list):
                    stack.extend(n[k])
            if isinstance(n.get("dependentSchemas"), dict):
                stack.extend(n["dependentSchemas"].values())
        graph[name] = refs
    state: dict[str, int] = {}
    used = ["#", *(f"#/$defs/{n}" for n in _reachable(prepared.body, prepared.defs))]
    for start in used:
        if state.get(start):
            continue
        path = [(start, iter(sorted(graph[start])))]
        state[start] = 1
        while path:
            n, it = path[-1]
            nxt = next(it, None)
            if nxt is None:
                state[n] = 2
                path.pop()
            elif nxt in graph and state.get(nxt) == 1:
                return nxt
            elif nxt in graph and not state.get(nxt):
                state[nxt] = 1
                path.append((nxt, iter(sorted(graph[nxt]))))
    return None


def _def_of(ref: str) -> str | None:
    return ref[len("#/$defs/") :] if ref.startswith("#/$defs/") else None


def _has_cycle(body: Any, defs: dict[str, Any]) -> bool:
    """A $ref cycle (recursion) among the definitions, or back to the root."""
    graph: dict[str, set[str]] = {"#": _refs_in(body)}
    for name, sub in defs.items():
        graph[f"#/$defs/{name}"] = _refs_in(sub)
    state: dict[str, int] = {}
    for start in graph:
        if state.get(start):
            continue
        path = [(start, iter(graph[start]))]
        state[start] = 1
        while path:
            n, it = path[-1]
            nxt = next(it, None)
            if nxt is None:
                state[n] = 2
                path.pop()
                continue
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                return True
            if not state.get(nxt):
                state[nxt] = 1
                path.append((nxt, iter(graph[nxt])))
    return False


def _reachable(body: Any, defs: dict[str, Any]) -> list[str]:
    """The definitions a schema reaches from its body, in their original order."""
    seen: set[str] = set()
    todo = list(_refs_in(body))
    while todo:
        name = _def_of(todo.pop())
        if name is None or name in seen or name not in defs:
            continue
        seen.add(name)
        todo.extend(_refs_in(defs[name]))
    return [n for n in defs if n in seen]


def _is_plain_object(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "object" and not ({"anyOf", "oneOf", "allOf", "$ref"} & node.keys())


def _fix_unresolvable(provider: dict[str, Any], downgrades: list[str]) -> dict[str, Any]:
    """Replace refs that do not resolve inside the provider schema (external or broken) by `{}`."""
    defs = provider.get("$defs") if isinstance(provider.get("$defs"), dict) else {}
    bad: list[str] = []

    def ok(ref: str) -> bool:
        name = _def_of(ref)
        return ref == "#" or (name is not None and name in defs)

    if all(ok(r) for r in _refs_in(provider)):
        return provider

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str) and not ok(node["$ref"]):
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


# ---------------------------------------------------------------------------------------------
# Step 4: OpenAI's schema-wide limits, on the final schema.


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
                name = _def_of(ref)
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


def _enforce_openai_limits(provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Drop enums over OpenAI's limits (checked locally); _NotStrict for any other limit."""
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
            stack.extend((v, f"{where}/properties/{k}") for k, v in props.items())
        if isinstance(node.get("$defs"), dict):
            chars += sum(len(k) for k in node["$defs"])
            stack.extend((v, f"{where}/$defs/{k}") for k, v in node["$defs"].items())
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
                f"{where or '(root)'}: enum of {len(values)} values ({_enum_chars(strings)} characters) removed "
                f"(over openai's {OPENAI_LARGE_ENUM_CHARS} characters for an enum of more than {OPENAI_LARGE_ENUM}; checked locally)"
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
            f"{where or '(root)'}: enum of {len(node['enum'])} values removed "
            f"(openai takes {OPENAI_MAX_ENUM_VALUES} enum values per schema; checked locally)"
        )
    chars += sum(_enum_chars(n["enum"]) for n, _ in nodes if id(n) not in drop)
    if properties > OPENAI_MAX_PROPERTIES:
        raise _NotStrict("(root)", f"a schema of {properties} properties (openai takes {OPENAI_MAX_PROPERTIES})", limit=True)
    if chars > OPENAI_MAX_STRING_CHARS:
        raise _NotStrict("(root)", f"a schema whose names and values take {chars} characters (openai takes {OPENAI_MAX_STRING_CHARS})", limit=True)
    if drop:
        provider = _without_enums(provider, drop)
    depth = nesting_depth(provider)
    if depth > OPENAI_MAX_DEPTH:
        raise _NotStrict(
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
            out["type"] = _one_or_list(_types_of_values(values))
    return out


# ---------------------------------------------------------------------------------------------
# The plan.


def _transform(prepared: Prepared, rules: FamilyRules, strict: bool, *, inline_annotated: bool = True) -> tuple[Any, dict[str, Any], _Transformer]:
    t = _Transformer(rules, strict, prepared, inline_annotated=inline_annotated)
    body = t.walk(prepared.body, (), ("#",))
    defs: dict[str, Any] = {}
    todo = [n for n in _reachable(body, prepared.defs)]
    done: set[str] = set()
    while todo:
        name = todo.pop(0)
        if name in done:
            continue
        done.add(name)
        defs[name] = t.walk(prepared.defs[name], ("$defs", name), (f"#/$defs/{name}",))
        todo.extend(n for n in map(_def_of, _refs_in(defs[name])) if n is not None and n in prepared.defs and n not in done)
    if strict:
        if not rules.recursion_ok and _has_cycle(body, defs):
            raise _NotStrict("(root)", "a recursive schema, which this provider's strict mode does not accept")
        for ref in sorted(_refs_in(body) | _refs_in(list(defs.values()))):
            if ref != "#" and _def_of(ref) not in defs:
                raise _NotStrict("(root)", f"a $ref ({ref}) that does not resolve inside the schema")
    return body, defs, t


def _assemble(body: Any, defs: dict[str, Any], t: _Transformer, *, allow_need: bool) -> tuple[dict[str, Any], bool]:
    """(provider schema, envelope) from the walked body and definitions."""
    defs = {n: defs[n] for n in _reachable(body, defs)} if defs else {}
    envelope = allow_need or not _is_plain_object(body)
    if envelope:
        if not isinstance(body, dict):
            body = {} if body is True else {"not": {}}
        if "#" in _refs_in(body) | _refs_in(list(defs.values())):
            # Refs to the target itself (recursion to "#"): keep the target addressable as a def.
            to_target = lambda r: f"#/$defs/{TARGET_DEF}" if r == "#" else r  # noqa: E731
            body = _rewrite_refs(body, to_target)
            defs = {k: _rewrite_refs(v, to_target) for k, v in defs.items()}
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
    else:
        provider = dict(body)
    if defs:
        provider["$defs"] = defs
    return provider, envelope


def build_plan(
    schema: dict[str, Any] | bool,
    capabilities: Capabilities,
    *,
    mode: str = "json_schema",
    allow_need: bool = False,
    require_strict: bool = True,
    name: str = "output",
) -> ProviderPlan:
    """The request shape for one response format; the caller's schema is never modified.

    InvalidSchema for a schema nested deeper than check_schema allows (the walk recurses per level)."""
    from vance_cli.structure.errors import MAX_SCHEMA_DEPTH, InvalidSchema, json_depth

    rules = rules_for(capabilities)
    depth = json_depth(schema)
    if depth > MAX_SCHEMA_DEPTH:
        raise InvalidSchema(
            f"the schema nests {depth} levels deep; at most {MAX_SCHEMA_DEPTH} are supported",
            hint='move nested parts into "$defs" and point at them with "$ref"',
        )
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

    if rules.passthrough:
        from vance_cli.llm.dialects import upgrade

        body = upgrade(schema)
        body = {k: v for k, v in body.items() if k not in ("$schema", "$id")} if isinstance(body, dict) else body
        passthrough_notes: list[str] = []
        body = _relax_negations(body, "", passthrough_notes)
        envelope = allow_need or not _is_plain_object(body)
        provider = body
        if envelope:
            if not isinstance(body, dict):
                body = {} if body is True else {"not": {}}
            defs = body.get("$defs") if isinstance(body.get("$defs"), dict) else None
            inner = {k: v for k, v in body.items() if k != "$defs"}
            to_target = lambda r: f"#/$defs/{TARGET_DEF}" + r[1:] if r.startswith("#") and not r.startswith("#/$defs/") else r  # noqa: E731
            if any(to_target(r) != r for r in _refs_in(inner) | _refs_in(list((defs or {}).values()))):
                # Refs into the target itself (recursion, or pointers into it): keep it addressable.
                inner = _rewrite_refs(inner, to_target)
                defs = {**{k: _rewrite_refs(v, to_target) for k, v in (defs or {}).items()}, TARGET_DEF: inner}
                inner = {"$ref": f"#/$defs/{TARGET_DEF}"}
            result_schema = make_nullable(inner) if allow_need else inner
            props: dict[str, Any] = {RESULT_KEY: result_schema}
            if allow_need:
                props[NEED_KEY] = {"type": ["string", "null"], "description": "null when the input has everything; else a short description of what is missing"}
            provider = {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
            if defs:
                provider["$defs"] = defs
        return _plan(provider, False, envelope, passthrough_notes, False, rules, name)

    prepared = prepare_schema(schema)
    want_strict = bool(require_strict and capabilities.strict_json_schema)
    downgrades: list[str] = []
    if want_strict:
        why: _NotStrict | None = None
        for inline in (True, False):
            try:
                body, defs, t = _transform(prepared, rules, True, inline_annotated=inline)
                provider, envelope = _assemble(body, defs, t, allow_need=allow_need)
                notes: list[str] = []
                if rules.limits:
                    provider = _enforce_openai_limits(provider, notes)
                provider = _fix_unresolvable(provider, notes)
                return _plan(provider, True, envelope, t.summary() + notes, t.nulls_injected, rules, name)
            except _NotStrict as exc:
                why = why or exc
                if not exc.limit or not inline or rules.ref_siblings:
                    break
                why = exc
        assert why is not None
        downgrades.append(f"strict output off: {why.where} is {why.why}")
    body, defs, t = _transform(prepared, rules, False)
    provider, envelope = _assemble(body, defs, t, allow_need=allow_need)
    provider = _fix_unresolvable(provider, downgrades)
    return _plan(provider, False, envelope, downgrades + t.summary(), t.nulls_injected, rules, name)


_NOT_SCHEMAS = ("enum", "const", "default", "examples")
_MAYBE_UNENFORCED = ("format", "$ref", "$dynamicRef")


def _relax_negations(node: Any, where: str, notes: list[str]) -> Any:
    """A schema sent as it is, minus what could turn into a false rejection.

    A provider may treat ``format`` as an annotation (always true) and may not follow a reference.
    That only loosens a schema, except under ``not``, an ``if`` or ``oneOf`` (two branches that
    differ only by a format both match): there it rejects valid answers. Such a ``not`` or
    ``if``/``then``/``else`` is removed and such a ``oneOf`` becomes ``anyOf``; the exact schema is
    still checked locally.
    """
    if isinstance(node, list):
        return [_relax_negations(x, f"{where}/{i}", notes) for i, x in enumerate(node)]
    if not isinstance(node, dict):
        return node
    out = {k: (v if k in _NOT_SCHEMAS else _relax_negations(v, f"{where}/{k}", notes)) for k, v in node.items()}
    here = where or "(root)"
    if "not" in out and _has_key(out["not"], _MAYBE_UNENFORCED):
        del out["not"]
        notes.append(f"{here}: not removed (a format or reference in it may not be enforced by the provider; checked locally)")
    if "if" in out and _has_key(out["if"], _MAYBE_UNENFORCED):
        for key in ("if", "then", "else"):
            out.pop(key, None)
        notes.append(f"{here}: if/then/else removed (a format or reference in its condition may not be enforced; checked locally)")
    if isinstance(out.get("oneOf"), list) and _has_key({"anyOf": out["oneOf"]}, _MAYBE_UNENFORCED, skip_root=True):
        alternatives = out.pop("oneOf")
        if "anyOf" in out:
            out["allOf"] = [*(out.get("allOf") or []), {"anyOf": alternatives}]
        else:
            out["anyOf"] = alternatives
        notes.append(f"{here}: oneOf relaxed to anyOf (exactly-one checked locally)")
    return out


def _plan(provider: Any, strict: bool, envelope: bool, downgrades: list[str], nulls: bool, rules: FamilyRules, name: str) -> ProviderPlan:
    # _fix_unresolvable may have appended its notes before the walk's lines; keep the strict line first.
    downgrades.sort(key=lambda line: 0 if line.startswith("strict output off:") else 1)
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
        nulls_injected=nulls,
        family=rules.name,
    )


# ---------------------------------------------------------------------------------------------
# Reading the reply back.


def _resolve(root: Any, ref: str) -> Any:
    """A local JSON-pointer ref inside ``root`` (KeyError when it is not one)."""
    if not ref.startswith("#"):
        raise KeyError(ref)
    node = root
    frag = ref[1:]
    if not frag:
        return node
    if not frag.startswith("/"):
        raise KeyError(ref)  # an anchor
    for raw in frag[1:].split("/"):
        part = pointer_token(unquote(raw))
        if isinstance(node, dict):
            node = node[part]
        elif isinstance(node, list):
            node = node[int(part)]
        else:
            raise KeyError(ref)
    return node


def strip_injected_nulls(data: Any, schema: Any, validator: Any = None) -> Any:
    """Drop ``null`` values of optional properties whose own schema does not admit null.

    Those are exactly the nulls OpenAI strict mode forces for absent optional fields; a null the
    caller's schema allows (or a required one) is kept so local validation sees the real output.
    Properties that only ``then``/``else``/``dependentSchemas``/``allOf`` branches declare count
    as declared, because the provider schema declares them too.
    """
    from vance_cli.llm.reasons import make_validator

    del validator  # the caller's validator knows the caller's refs; these are the prepared ones
    prepared = prepare_schema(schema)
    defs = prepared.defs
    to_root = lambda r: f"#/$defs/{TARGET_DEF}" if r == "#" else r  # noqa: E731
    if prepared.check_defs is None:
        prepared.check_defs = {k: _rewrite_refs(v, to_root) for k, v in defs.items()}
        prepared.check_defs[TARGET_DEF] = _rewrite_refs(prepared.body, to_root)
    check_defs = prepared.check_defs
    validators: dict[int, Any] = {}

    def target(ref: str) -> Any:
        if ref == "#":
            return prepared.body
        name = _def_of(ref)
        return defs.get(name) if name is not None else None

    def allows(sub: Any, value: Any) -> bool:
        """Whether ``sub`` (a node of the prepared schema) accepts ``value``."""
        v = validators.get(id(sub))
        if v is None:
            body = _rewrite_refs(sub, to_root)
            root = {"$defs": check_defs, **body} if isinstance(body, dict) else body
            v = validators[id(sub)] = make_validator(root)
        try:
            return v.is_valid(value)
        except Exception:  # noqa: BLE001 - an unresolvable ref: the validator reports it later
            return True

    def declared(node: Any, depth: int = 0) -> tuple[dict[str, list[Any]], set[str]]:
        """Property → schemas, and the required names, of a node and what it combines."""
        props: dict[str, list[Any]] = {}
        required: set[str] = set()
        if not isinstance(node, dict) or depth > 12:
            return props, required
        for name, sub in (node.get("properties") or {}).items() if isinstance(node.get("properties"), dict) else ():
            props.setdefault(name, []).append(sub)
        if isinstance(node.get("required"), list):
            required |= {r for r in node["required"] if isinstance(r, str)}
        parts = []
        if isinstance(node.get("$ref"), str):
            t = target(node["$ref"])
            if t is not None:
                parts.append((t, True))
        parts += [(s, True) for s in node.get("allOf", []) if isinstance(node.get("allOf"), list)]
        parts += [(node.get(k), False) for k in ("then", "else")]
        parts += [(s, False) for s in (node.get("dependentSchemas") or {}).values()] if isinstance(node.get("dependentSchemas"), dict) else []
        for sub, always in parts:
            p, r = declared(sub, depth + 1)
            for k, s in p.items():
                props.setdefault(k, []).extend(s)
            if always:
                required |= r
        return props, required

    def strip(value: Any, node: Any, depth: int, seen: set[int]) -> Any:
        # ``seen`` holds the schema nodes already applied at this data level: a `$ref` cycle
        # (e.g. anyOf [{"$ref": "#"}, ...]) is followed once per level, never exponentially.
        if depth > 64 or not isinstance(node, dict) or id(node) in seen:
            return value
        seen.add(id(node))
        ref = node.get("$ref")
        if isinstance(ref, str):
            t = target(ref)
            if t is not None:
                value = strip(value, t, depth + 1, seen)
        for sub in node.get("allOf", []) if isinstance(node.get("allOf"), list) else []:
            value = strip(value, sub, depth + 1, seen)
        for key in ("anyOf", "oneOf"):
            alts = node.get(key)
            if isinstance(alts, list):
                for alt in alts:
                    candidate = strip(_copy(value), alt, depth + 1, seen)
                    if candidate != value and allows(alt, candidate):
                        value = candidate
                        break
        if isinstance(value, dict):
            props, required = declared(node)
            out = {}
            for key, item in value.items():
                subs = props.get(key)
                if item is None and subs and key not in required and not any(allows(s, None) for s in subs):
                    continue
                if subs and len(subs) == 1:
                    out[key] = strip(item, subs[0], depth + 1, set())
                else:
                    out[key] = item
            value = out
        elif isinstance(value, list):
            prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
            items = node.get("items")
            value = [strip(x, prefix[i] if i < len(prefix) else items, depth + 1, set()) for i, x in enumerate(value)]
        return value

    return strip(data, prepared.body, 0, set())


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
