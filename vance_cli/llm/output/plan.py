"""The plan for one request: which response format, the provider schema, and the way back.

``build_plan`` is the one entry: the caller's schema is never modified; local validation always
uses it, and the provider schema only decides what the provider can be asked to enforce
(walker.py, one family module each). Steps:

1. ``$schema`` is honoured and every ``$ref`` resolved (``vance_cli.schema.refs.prepare_schema``:
   a draft-4/6/7/2019-09 schema in its 2020-12 form, definitions hoisted, unreferenced ones not
   sent).
2. The walk for the model's family (``family_for``): strict if the model can and the caller
   wants it, else the relaxed form with the reason strict went off.
3. The envelope ``{"result": <target>, "_need": <string|null>}`` carries the spec's ``_need``
   escape (structure-tool §4.2) without a root ``oneOf``, which OpenAI rejects; a target that is
   not a plain object travels in it too.

The way back (``strip_injected_nulls``): OpenAI strict makes every property required, so an absent
optional field comes back as ``null``; that null is dropped again where the caller's schema does
not accept null for it there, and kept where it does (an absent optional nullable field comes back
as an explicit null).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vance_cli.errors import InvalidSchema
from vance_cli.llm.base import Capabilities
from vance_cli.llm.output.anthropic import ANTHROPIC
from vance_cli.llm.output.gemini import GEMINI
from vance_cli.llm.output.merge import NAMED_ONLY, Downgrade, Merger, borrowed_keys, key_matches
from vance_cli.llm.output.ollama import OLLAMA
from vance_cli.llm.output.openai import OPENAI, schema_name
from vance_cli.llm.output.other import PASSTHROUGH, relax_negations
from vance_cli.llm.output.walker import Family, NotStrict, transform
from vance_cli.schema.check import MAX_SCHEMA_DEPTH, json_depth
from vance_cli.schema.nodes import make_nullable
from vance_cli.schema.refs import (
    RESERVED_DEF,
    def_of,
    has_key,
    prepare_schema,
    reachable,
    refs_in,
    rewrite_refs,
)
from vance_cli.text import json_pointer

RESULT_KEY = "result"
NEED_KEY = "_need"
TARGET_DEF = RESERVED_DEF  # the envelope's target, when refs point back at it
NEED_SCHEMA = {
    "type": ["string", "null"],
    "description": "null when the input has everything; else a short description of what is missing",
}


def family_for(capabilities: Capabilities) -> Family:
    """The family's rules; Ollama gets llama.cpp's (ollama.py); another openai-compatible server
    that claims strict mode gets OpenAI's."""
    family = capabilities.family
    if family == "openai":
        return OPENAI
    if family == "anthropic":
        return ANTHROPIC
    if family == "gemini":
        return GEMINI
    if family == "ollama":
        return OLLAMA  # llama.cpp's grammar, whatever the capabilities claim
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
    # (pointer, reason) where strict was wanted and the schema could not be strict; the first
    # downgrade line says the same.
    strict_off: tuple[str, str] | None = None

    @property
    def label(self) -> str:
        return f"{self.mode}:strict" if self.mode == "json_schema" and self.strict else self.mode


def _is_plain_object(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and node.get("type") == "object"
        and not ({"anyOf", "oneOf", "allOf", "$ref"} & node.keys())
    )


def _fix_unresolvable(provider: dict[str, Any], downgrades: list[str]) -> dict[str, Any]:
    """Replace refs that do not resolve inside the provider schema (external or broken) by `{}`."""
    defs = provider.get("$defs") if isinstance(provider.get("$defs"), dict) else {}
    bad: dict[str, list[str]] = {}  # ref -> where in the provider schema

    def ok(ref: str) -> bool:
        name = def_of(ref)
        return ref == "#" or (name is not None and name in defs)

    if all(ok(r) for r in refs_in(provider)):
        return provider

    def fix(node: Any, here: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str) and not ok(node["$ref"]):
                bad.setdefault(node["$ref"], []).append(json_pointer(here, "(root)"))
                return {k: fix(v, here + (k,)) for k, v in node.items() if k != "$ref"}
            return {k: (v if k in ("enum", "const") else fix(v, here + (k,))) for k, v in node.items()}
        if isinstance(node, list):
            return [fix(v, here + (str(i),)) for i, v in enumerate(node)]
        return node

    fixed = fix(provider, ())
    for ref, where in bad.items():
        why = "not resolvable inside the schema; sent unconstrained (checked locally)"
        downgrades.append(Downgrade(where, f"$ref {ref} {why}", text=f"$ref {ref}: {why}", sent=True))
    return fixed


def _envelope(target: Any, allow_need: bool, defs: dict[str, Any] | None) -> dict[str, Any]:
    """``{"result": target, "_need": ...}`` as one closed object (every family takes it)."""
    props: dict[str, Any] = {RESULT_KEY: make_nullable(target) if allow_need else target}
    if allow_need:
        props[NEED_KEY] = dict(NEED_SCHEMA)
    provider: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }
    if defs:
        provider["$defs"] = defs
    return provider


def _assemble(body: Any, defs: dict[str, Any], *, allow_need: bool) -> tuple[dict[str, Any], bool]:
    """(provider schema, envelope) from the walked body and definitions."""
    defs = {n: defs[n] for n in reachable(body, defs)} if defs else {}
    envelope = allow_need or not _is_plain_object(body)
    if not envelope:
        return ({**body, "$defs": defs} if defs else dict(body)), False
    if not isinstance(body, dict):
        body = {} if body is True else {"not": {}}
    if "#" in refs_in(body) | refs_in(list(defs.values())):
        # Refs to the target itself (recursion to "#"): keep the target addressable as a def.
        to_target = lambda r: f"#/$defs/{TARGET_DEF}" if r == "#" else r  # noqa: E731
        body = rewrite_refs(body, to_target)
        defs = {k: rewrite_refs(v, to_target) for k, v in defs.items()}
        defs[TARGET_DEF] = body
        body = {"$ref": f"#/$defs/{TARGET_DEF}"}
    return _envelope(body, allow_need, defs), True


# Keywords a provider schema of the passthrough family never keeps: identifiers (every ref is a
# plain "#/$defs/<name>" pointer now, and a nested $id would change what it resolves against) and
# comments.
_AS_WRITTEN_DROP = frozenset({"$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$vocabulary"})
_DYNAMIC = frozenset({"$dynamicRef", "unevaluatedProperties", "unevaluatedItems"})


def _as_written(node: Any, dynamic: bool) -> Any:
    """A prepared node for the passthrough family: identifiers dropped, whole counts as ints and,
    where the schema uses ``$dynamicRef``, that and the ``unevaluated*`` keywords it feeds removed."""
    from vance_cli.llm.output.walker import COUNT_KEYS
    from vance_cli.schema.keywords import LIST, MAP, ONE

    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _AS_WRITTEN_DROP or (dynamic and key in _DYNAMIC):
            continue
        if key in ONE:
            out[key] = _as_written(value, dynamic)
        elif key in LIST and isinstance(value, list):
            out[key] = [_as_written(v, dynamic) for v in value]
        elif key in MAP and isinstance(value, dict):
            out[key] = {k: _as_written(v, dynamic) for k, v in value.items()}
        elif key in COUNT_KEYS and isinstance(value, float) and value.is_integer():
            out[key] = int(value)
        else:
            out[key] = value
    return out


def _assemble_as_written(schema: Any, *, allow_need: bool) -> tuple[Any, bool, list[str]]:
    """(provider schema, envelope, notes) for a family that takes the caller's schema as written.

    "As written" means every keyword the caller wrote, in its 2020-12 form; the references are
    the prepared ones (``#`` or ``#/$defs/<name>``, resolved the way the validator resolves them:
    anchors, ``$id`` bases, URNs, draft-7 ``items`` pointers), because a provider of this family
    may know no other kind, and inside the envelope a written ref would point elsewhere."""
    prepared = prepare_schema(schema)
    notes: list[str] = []
    every = [prepared.body, *prepared.defs.values()]
    dynamic = any(has_key(n, ("$dynamicRef",)) for n in every)
    if dynamic:
        notes.append(
            Downgrade(
                "(schema)",
                "$dynamicRef and unevaluatedProperties/unevaluatedItems removed "
                "(dynamic references are not enforced by the provider; checked locally)",
            )
        )
    body = relax_negations(_as_written(prepared.body, dynamic), "", notes)
    defs = {k: relax_negations(_as_written(v, dynamic), json_pointer(["$defs", k]), notes) for k, v in prepared.defs.items()}
    provider, envelope = _assemble(body, defs, allow_need=allow_need)
    provider = _fix_unresolvable(provider, notes)
    return provider, envelope, notes


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

    InvalidSchema for a schema nested deeper than check_schema allows (the walk recurses per level),
    or whose $ref definitions, inlined, nest deeper than the relaxed walk can follow."""
    family = family_for(capabilities)
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
            downgrades=[Downgrade("(schema)", f"not enforced by the provider ({mode}); checked locally")],
            family=family.name,
        )

    if family.passthrough:
        provider, envelope, notes = _assemble_as_written(schema, allow_need=allow_need)
        return _plan(provider, False, envelope, notes, False, family, name)

    prepared = prepare_schema(schema)
    want_strict = bool(require_strict and capabilities.strict_json_schema and not family.no_strict)
    downgrades: list[str] = []
    strict_off: tuple[str, str] | None = None
    if want_strict:
        why: NotStrict | None = None
        for inline in (True, False):
            try:
                body, defs, t = transform(prepared, family, True, inline_annotated=inline)
                provider, envelope = _assemble(body, defs, allow_need=allow_need)
                notes: list[str] = []
                provider = family.finish(provider, notes)
                provider = family.tidy(provider, notes)
                provider = _fix_unresolvable(provider, notes)
                return _plan(provider, True, envelope, t.summary() + notes, t.nulls_injected, family, name)
            except RecursionError:
                # refs inlined into each other (a long chain with siblings) nest the walk deeper
                # than Python recurses: the relaxed walk keeps them refs
                why = why or NotStrict(
                    "(schema)",
                    "a chain of $ref definitions too long to inline for strict mode (each one holds the "
                    "next with keywords beside it)",
                )
                break
            except NotStrict as exc:
                why = why or exc
                # A limit may pass when refs are not inlined: only families without $ref siblings inline them.
                if not exc.limit or not inline or family.ref_siblings:
                    break
                why = exc
        assert why is not None
        downgrades.append(Downgrade(why.where, f"strict output off: {why.why}", text=f"strict output off: {why.where} is {why.why}"))
        strict_off = (why.where, why.why)
    try:
        body, defs, t = transform(prepared, family, False)
    except RecursionError:
        raise InvalidSchema(
            "the schema's $ref definitions nest too deep to convert for the provider",
            hint='shorten the chain of "$ref"s that hold each other with keywords beside them',
        ) from None
    provider, envelope = _assemble(body, defs, allow_need=allow_need)
    provider = family.tidy(provider, downgrades)
    provider = _fix_unresolvable(provider, downgrades)
    plan = _plan(provider, False, envelope, downgrades + t.summary(), t.nulls_injected, family, name)
    plan.strict_off = strict_off
    return plan


def _plan(
    provider: Any, strict: bool, envelope: bool, downgrades: list[str], nulls: bool, family: Family, name: str
) -> ProviderPlan:
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
        family=family.name,
    )


# ---------------------------------------------------------------------------------------------
# The way back.


def strip_injected_nulls(data: Any, schema: Any, validator: Any = None) -> Any:
    """Drop the ``null`` of an optional property where the caller's schema does not accept null
    for it there: none of its schemas admits null, or the object's schema reports the null at
    that field (its own schema, or a branch that applies, rejects it).

    Those are exactly the nulls OpenAI strict mode forces for absent optional fields; a null the
    caller's schema accepts there (or a required one) is kept so local validation sees the real
    output: an absent optional field whose schema allows null comes back as an explicit null.
    Properties that only ``then``/``else``/``dependentSchemas``/``allOf`` branches declare count
    as declared, because the provider schema declares them too.
    """
    from vance_cli.schema.reasons import make_validator
    prepared = prepare_schema(schema)
    defs = prepared.defs
    to_root = lambda r: f"#/$defs/{TARGET_DEF}" if r == "#" else r  # noqa: E731
    if prepared.check_defs is None:
        prepared.check_defs = {k: rewrite_refs(v, to_root) for k, v in defs.items()}
        prepared.check_defs[TARGET_DEF] = rewrite_refs(prepared.body, to_root)
    check_defs = prepared.check_defs
    validators: dict[int, Any] = {}

    target = prepared.target

    def allows(sub: Any, value: Any) -> bool:
        """Whether ``sub`` (a node of the prepared schema) accepts ``value``."""
        v = validators.get(id(sub))
        if v is None:
            body = rewrite_refs(sub, to_root)
            root = {"$defs": check_defs, **body} if isinstance(body, dict) else body
            v = validators[id(sub)] = make_validator(root)
        try:
            return v.is_valid(value)
        except Exception:  # noqa: BLE001 - an unresolvable ref: the validator reports it later
            return True

    def errors_of(sub: Any, value: Any) -> list[Any]:
        """``sub``'s errors in ``value`` (none where a ref does not resolve: the validator reports it later)."""
        allows(sub, value)  # makes the validator
        try:
            return list(validators[id(sub)].iter_errors(value))
        except Exception:  # noqa: BLE001 - an unresolvable ref
            return []

    def rejected_nulls(sub: Any, value: dict[str, Any]) -> set[str]:
        """The keys of ``value`` whose null ``sub`` rejects where it stands (an error at exactly
        that field, from its own schema or a branch that applies; not one alternative's)."""
        errors = errors_of(sub, value)
        return {
            e.absolute_path[0]
            for e in errors
            if len(e.absolute_path) == 1 and e.instance is None and isinstance(e.absolute_path[0], str)
        }

    def blocking(sub: Any, value: Any, keep: set[str] | frozenset[str]) -> set[tuple[Any, ...]]:
        """What ``sub`` rejects in ``value`` beyond the nulls of optional keys (not in ``keep``):
        those a later step of the strip may still drop; anything else stays."""
        errors = errors_of(sub, value)
        return {
            (tuple(e.absolute_path), e.validator)
            for e in errors
            if not (e.instance is None and e.absolute_path and not (len(e.absolute_path) == 1 and e.absolute_path[0] in keep))
        }

    def holds_with(node: dict[str, Any], alt: Any, candidate: Any, value: Any, here: frozenset[str]) -> bool:
        """Whether an alternative's strip holds with the node around it (its siblings: the node's
        own properties, allOf, ...): the node rejects nothing more in ``candidate`` than in
        ``value`` but injected nulls still to drop. A key the chosen alternative requires is not
        one (its null under a sibling that rejects it means that alternative does not hold)."""
        keep = here | required_of(alt) if isinstance(candidate, dict) else here
        return blocking(node, candidate, keep) <= blocking(node, value, here)

    merger = Merger(prepared)

    def declared(node: Any, value: Any, depth: int = 0) -> tuple[dict[str, list[Any]], set[str]]:
        """Property → schemas (the walker's ``Merger.declared``: what the provider schema declares,
        anyOf/oneOf alternatives and removed branches included; not an `if`'s tests, which
        constrain nothing, and of a then/else only the one whose `if` applies to ``value``: a
        `then` whose `if` fails never drops a null), and the names a node and the parts that
        always apply to it require."""
        def holds(cond: Any) -> bool:
            return cond is True or (isinstance(cond, dict) and allows(cond, value))

        found = merger.declared(node, (), conditions=False, holds=holds)
        props = {k: kept for k, v in found.items() if (kept := [s for s in v if s is not NAMED_ONLY])}
        return props, required_of(node, depth)

    def required_of(node: Any, depth: int = 0) -> set[str]:
        required: set[str] = set()
        if not isinstance(node, dict) or depth > 12:
            return required
        if isinstance(node.get("required"), list):
            required |= {r for r in node["required"] if isinstance(r, str)}
        parts = [target(node["$ref"])] if isinstance(node.get("$ref"), str) else []
        parts += node["allOf"] if isinstance(node.get("allOf"), list) else []
        for sub in parts:
            required |= required_of(sub, depth + 1)
        return required

    def shared(parent: dict[str, Any], alts: list[Any]) -> list[Any]:
        """Each alternative as strict mode sent it: one that does not declare a key its siblings
        declare also declares it, with the schema it gives the key in every case
        (walker._share_properties; where there is none, strict was off), so the null a provider
        had to send for such a key is an injected one there too."""
        found = [merger.declared(a, ()) if isinstance(a, dict) else {} for a in alts]  # as the walker borrows
        out: list[Any] = []
        for alt, keys in zip(alts, borrowed_keys(parent, alts, found, target), strict=True):
            more = {name: cover[0] if len(cover) == 1 else {"anyOf": cover} for name, cover in keys.items() if cover}
            out.append({"allOf": [alt, {"properties": more}]} if more else alt)
        return out

    def strip(value: Any, node: Any, depth: int, seen: set[int], above: frozenset[str] = frozenset()) -> Any:
        # ``above``: the keys the schemas applying to this same value around ``node`` require (a
        # required null is never dropped, whichever part of the schema is looked at).
        # ``seen`` holds the schema nodes already applied at this data level: a `$ref` cycle
        # (e.g. anyOf [{"$ref": "#"}, ...]) is followed once per level, never exponentially.
        if depth > 64 or not isinstance(node, dict) or id(node) in seen:
            return value
        seen.add(id(node))
        here = above | required_of(node) if isinstance(value, dict) else above
        ref = node.get("$ref")
        if isinstance(ref, str):
            t = target(ref)
            if t is not None:
                value = strip(value, t, depth + 1, seen, here)
        for sub in node.get("allOf", []) if isinstance(node.get("allOf"), list) else []:
            value = strip(value, sub, depth + 1, seen, here)
        for key in ("anyOf", "oneOf"):
            alts = node.get(key)
            if isinstance(alts, list):
                for alt, widened in zip(alts, shared(node, alts), strict=True):
                    candidate = strip(_copy(value), widened, depth + 1, seen, here)
                    if candidate != value and allows(alt, candidate) and holds_with(node, alt, candidate, value, here):
                        value = candidate
                        break
        if isinstance(value, dict):
            props, required = declared(node, value)
            out = {}
            kept: list[str] = []  # optional nulls some schema of the field allows
            for key, item in value.items():
                subs = props.get(key)
                if item is None and subs and key not in required and key not in here:
                    if not any(allows(s, None) for s in subs):
                        continue
                    kept.append(key)
                if subs and len(subs) == 1:
                    out[key] = strip(item, subs[0], depth + 1, set())
                else:
                    out[key] = item
            if kept:
                # Allowed by one schema of the field (a `then`), rejected where the object stands
                # (its own schema, the `else` that applies): injected, dropped.
                rejected = rejected_nulls(node, out)
                out = {k: v for k, v in out.items() if not (k in kept and k in rejected)}
            value = out
        elif isinstance(value, list):
            prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
            items = node.get("items")
            value = [strip(x, prefix[i] if i < len(prefix) else items, depth + 1, set()) for i, x in enumerate(value)]
        return value

    stripped = strip(data, prepared.body, 0, set())
    return _settle(stripped, validator if validator is not None else make_validator(schema), prepared)


def _settle(value: Any, validator: Any, prepared: Any) -> Any:
    """``value``, or, where the caller's schema rejects it, the same value without the nulls of
    declared keys that the validation rejects themselves (an error at the null: a schema of the
    key that applies; or the object refusing the key: additionalProperties/unevaluatedProperties),
    when that makes it valid; else without one such null, or all of them, where that makes it
    valid (the object rejects the key being there at all: maxProperties, dependentRequired, a
    branch's not/required). A strict provider sends those nulls for absent keys the per-key
    strip above could not place (a key with several schemas, a closed parent, a rule of the
    object). A value the caller's schema accepts is returned as it is."""
    names: set[str] = set()
    for node in [prepared.body, *prepared.defs.values()]:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, dict):
                if isinstance(n.get("properties"), dict):
                    names |= set(n["properties"])
                if isinstance(n.get("required"), list):
                    names |= {r for r in n["required"] if isinstance(r, str)}
                stack.extend(v for k, v in n.items() if k not in ("enum", "const", "examples", "default"))
            elif isinstance(n, list):
                stack.extend(n)
    current = value
    for _ in range(8):
        try:
            errors = list(validator.iter_errors(current))
        except Exception:  # noqa: BLE001 - an unresolvable ref: the validator reports it later
            return value
        if not errors:
            return current
        drop: set[tuple[Any, ...]] = set()
        todo = list(errors)
        while todo:
            e = todo.pop()
            path = tuple(e.absolute_path)
            if e.instance is None and path and isinstance(path[-1], str) and path[-1] in names:
                drop.add(path)
            if e.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(e.instance, dict):
                # only the keys that object's schema refuses: not the ones it declares itself
                # (a required null beside a refused one stays)
                own = e.schema.get("properties") if isinstance(e.schema, dict) else None
                own = own if isinstance(own, dict) else {}
                patterns = e.schema.get("patternProperties") if isinstance(e.schema, dict) else None
                patterns = patterns if isinstance(patterns, dict) else {}
                drop |= {
                    path + (k,)
                    for k, v in e.instance.items()
                    if v is None and k in names and k not in own and not any(key_matches(p, k) for p in patterns)
                }
            todo.extend(e.context or [])
        nxt = _without(current, drop)
        if not drop or nxt == current:
            break
        current = nxt
    # The object rejects a null its key's own schema allows for being there at all (maxProperties,
    # dependentRequired, a branch's not/required): one such null, or all of them, dropped where
    # that makes the value valid (a required null never does: without it the value is invalid).
    for base in [current] if current is value else [current, value]:
        nulls = _null_paths(base, names)[:64]
        for paths in [*([p] for p in nulls), nulls if len(nulls) > 1 else []]:
            if not paths:
                continue
            candidate = _without(base, set(paths))
            try:
                if validator.is_valid(candidate):
                    return candidate
            except Exception:  # noqa: BLE001 - as above
                return value
    return value


def _null_paths(value: Any, names: set[str], here: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """The paths of the nulls held by keys some schema names (``names``), shallowest first."""
    out: list[tuple[Any, ...]] = []
    if depth > 64:
        return out
    if isinstance(value, dict):
        out += [here + (k,) for k, v in value.items() if v is None and k in names]
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                out += _null_paths(v, names, here + (k,), depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                out += _null_paths(v, names, here + (i,), depth + 1)
    return out


def _without(value: Any, paths: set[tuple[Any, ...]]) -> Any:
    """A copy of ``value`` without the nulls at ``paths`` (deepest first)."""
    if not paths:
        return value
    nxt = _copy(value)
    for path in sorted(paths, key=len, reverse=True):
        holder = nxt
        for step in path[:-1]:
            try:
                holder = holder[step]
            except (KeyError, IndexError, TypeError):
                holder = None
                break
        if isinstance(holder, dict) and holder.get(path[-1], 0) is None:
            del holder[path[-1]]
    return nxt


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# What `vance schemas plan` shows.


def plan_report(plan: ProviderPlan, capabilities: Capabilities, *, model: str, require_strict: bool) -> dict[str, Any]:
    """The plan as ``vance schemas plan --json`` prints it: the format ("strict json_schema",
    "json_schema", "json_object" or "prompt"), whether strict is on and, if not, why
    (``strictOff``: a pointer and a reason), every downgrade as a pointer, where it points ("schema":
    the caller's, "sent": the provider schema) and a reason (one entry per pointer; the strict-off
    line is ``strictOff``), and the schema sent (None when the schema travels in the prompt)."""
    off: dict[str, Any] | None = None
    if plan.strict_off is not None:
        off = {"pointer": plan.strict_off[0], "reason": plan.strict_off[1]}
    elif not plan.strict and plan.mode != "json_schema":
        off = {
            "pointer": None,
            "reason": f"the model takes no json_schema response format, so no schema is sent ({plan.mode}: "
            "the prompt carries your schema, checked locally)",
        }
    elif not plan.strict and family_for(capabilities).no_strict:
        off = {"pointer": None, "reason": family_for(capabilities).no_strict}
    elif not plan.strict and not capabilities.strict_json_schema:
        off = {
            "pointer": None,
            "reason": f"the provider of this model (family {capabilities.family}) does not enforce strict schemas "
            f'(if it does: [models."{model}".capabilities] strict_json_schema = true in config.toml)',
        }
    elif not plan.strict and not require_strict:
        off = {"pointer": None, "reason": "structure.requireProviderStrictOutput is false"}
    downgrades: list[dict[str, Any]] = []
    for line in plan.downgrades:
        if plan.strict_off is not None and line.startswith("strict output off: "):
            continue
        pointers = getattr(line, "pointers", None) or ("(schema)",)
        reason = getattr(line, "reason", line)
        sent = getattr(line, "sent", False)
        downgrades += [{"pointer": p, "in": "sent" if sent else "schema", "reason": reason} for p in pointers]
    return {
        "model": model,
        "family": capabilities.family,
        "rules": plan.family,
        "format": "strict json_schema" if plan.mode == "json_schema" and plan.strict else plan.mode,
        "strict": plan.strict,
        "strictOff": off,
        "downgrades": downgrades,
        "envelope": plan.envelope,
        "schema": plan.schema,
    }
