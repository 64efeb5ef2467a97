"""The shared walk: a caller's prepared schema turned into what one provider family can be sent.

The rule every family keeps: **the provider schema never excludes an answer the caller's schema
accepts** (apart from keys no schema declares, which closed objects do not produce; that is
reported). What a family cannot enforce is removed (a relaxation, reported as a *downgrade*, still
checked locally, its value appended to the node's ``description`` so the model can still follow
it); what cannot be relaxed raises ``NotStrict`` and strict mode goes off, with the reason.

The walk is the same for every family; a ``Family`` (one subclass per module: openai.py,
anthropic.py, gemini.py, ollama.py, other.py) says which keywords and values it takes and how strict mode
shapes a node. In strict mode every object is closed (``additionalProperties: false``, reported
when the caller's schema left it open) and typed; where the family wants it (OpenAI), every
property is required (optional ones become unions with ``null``), a ``$ref`` never has sibling
keywords (the target is inlined, or the annotations dropped when it is recursive), and
multi-type ``type`` lists are split into alternatives. Everywhere: ``oneOf`` becomes ``anyOf``
where it is not taken, ``allOf`` (also with ``$ref``) is merged where it is not taken, keywords
beside an ``anyOf`` are distributed into the alternatives in strict mode, and the properties that
removed branches (``if/then/else``, ``dependentSchemas``, unmerged parts) declare stay as
optional properties.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vance_cli.llm.output.merge import CASE_BUDGET, KEEP_ANNOTATIONS, Downgrade, Merger, Stack, borrowed_keys, ptr
from vance_cli.schema.nodes import (
    ASSERTING,
    LIST_KEYS,
    MAP_KEYS,
    ONE_KEYS,
    VALUE_KEYS,
    asserting,
    json_equal,
    json_type,
    make_nullable,
    node_types,
    one_or_list,
    prune_for_types,
    types_of_values,
)
from vance_cli.schema.refs import Prepared, def_of, is_recursive, refs_in, subschemas

# What every family takes.
BASE_KEYWORDS = frozenset(
    {"type", "enum", "required", "properties", "items", "anyOf", "$ref", "$defs", "additionalProperties"}
)


class NotStrict(Exception):
    """Strict mode cannot express this schema without excluding valid answers (or breaks a limit)."""

    def __init__(self, where: str, why: str, *, limit: bool = False) -> None:
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why
        self.limit = limit  # a schema-wide limit (may pass when refs are not inlined)


class Family:
    """What one provider family enforces; the walk removes (and reports) anything else.

    Subclassed once per family module, beside the provider's documentation it follows.
    """

    name = "other"
    supported: frozenset[str] = frozenset()
    formats: frozenset[str] | None = None  # None: every format passes through
    const_to_enum = False
    all_required = False  # every property required, optional → nullable (OpenAI strict)
    recursion_ok = True
    ref_siblings = True  # False: a $ref node may carry no other keyword (OpenAI)
    single_types = False  # True: `type` is one name or [name, "null"]; other lists become anyOf
    passthrough = False  # send the caller's schema as written (other.py)
    no_strict = ""  # why this family is never asked for strict mode (ollama.py)
    spread_alternatives = False  # True: keywords beside an anyOf go into each alternative, strict or not (ollama.py)

    def value_ok(self, key: str, value: Any) -> bool:
        """Whether a plain constraint (a value, not a subschema) can be sent to this family."""
        if key not in self.supported:
            return False
        if key == "format" and self.formats is not None:
            return value in self.formats
        return True

    def strict_values_refused(self, node: dict[str, Any]) -> str:
        """Why strict mode cannot send this node's enum/const values ("" when it can)."""
        return ""

    def finish(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """Schema-wide rules on the final strict schema (OpenAI's limits); NotStrict to turn strict off."""
        return provider

    def tidy(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """Rules on every final provider schema of this family, strict or not (after the envelope)."""
        return provider


def provider_nodes(node: Any, parts: tuple[str, ...] = ()):
    """(parts, node) for every schema node of a provider schema, parents first."""
    stack: list[tuple[tuple[str, ...], Any]] = [(parts, node)]
    while stack:
        here, n = stack.pop()
        if not isinstance(n, dict):
            continue
        yield here, n
        for key, value in n.items():
            if key in ONE_KEYS:
                stack.append((here + (key,), value))
            elif key in LIST_KEYS and isinstance(value, list):
                stack.extend((here + (key, str(i)), v) for i, v in enumerate(value))
            elif key in MAP_KEYS and isinstance(value, dict):
                stack.extend((here + (key, k), v) for k, v in value.items())


def whole_numbers(value: Any) -> Any:
    """``value`` with integral floats as ints (-2.0 → -2; the same JSON Schema number), deeply."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    return value


# Counting keywords: an integral float (2.0) is the same count, and providers want an integer.
COUNT_KEYS = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"}
)


# ---------------------------------------------------------------------------------------------
# The walk.


def _object_structure(node: dict[str, Any]) -> bool:
    return bool(
        {"properties", "required", "additionalProperties", "patternProperties"} & node.keys()
    ) or "object" in node_types(node)


class Walker(Merger):
    """One walk over a prepared schema for one family, strict or not; collects the downgrades."""

    def __init__(self, family: Family, strict: bool, prepared: Prepared, *, inline_annotated: bool = True) -> None:
        super().__init__(prepared)
        self.family = family
        self.strict = strict
        self.inline_annotated = inline_annotated
        self.closed: list[str] = []  # pointers of objects closed here (one summary line)
        self.nulls_injected = False
        self.refs: set[str] = set()
        self._anchors: dict[str, list[Any]] | None = None

    def lost(self, parts: tuple[str, ...], keyword: str) -> None:
        self.note(parts, f"{keyword} removed (not enforced by {self.family.name}; checked locally)")

    def summary(self) -> list[str]:
        lines = list(self.downgrades)
        if self.closed:
            closed = sorted(dict.fromkeys(self.closed), key=lambda p: (p != "(root)", p))
            shown = ", ".join(closed[:8]) + (f" and {len(closed) - 8} more" if len(closed) > 8 else "")
            why = "additionalProperties set to false (keys the schema does not declare are not produced)"
            lines.append(Downgrade(closed, why, text=f"{shown}: {why}"))
        return lines

    # -- the walk ---------------------------------------------------------------------------------

    def walk(self, node: Any, parts: tuple[str, ...], stack: Stack = ()) -> Any:
        if isinstance(node, bool):
            if self.strict and node is True:
                raise NotStrict(ptr(parts), "a schema that allows any value, which strict mode cannot express")
            if self.strict and node is False:
                raise NotStrict(ptr(parts), "a `false` schema, which strict mode cannot express")
            return node
        if not isinstance(node, dict):
            return node
        node = {k: v for k, v in node.items() if k not in ("$defs", "definitions")}
        sup = self.family.supported
        folds: list[Any] = []

        # A $ref beside other keywords means both apply (2020-12): merge them like allOf.
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) > 1:
            node = self._needless_siblings(node, ref, parts)
            others = asserting(node) - {"$ref"}
            if others or (not self.family.ref_siblings and self.inline_annotated):
                rest = {k: v for k, v in node.items() if k != "$ref"}
                node = {**rest, "allOf": [{"$ref": ref}] + list(rest.get("allOf") or [])}
            elif not self.family.ref_siblings:
                node = {"$ref": ref}  # the target holds its own annotations
        # Strict mode closes every object: allOf parts closed one by one would each forbid the
        # others' properties, so a strict allOf is always merged into one node.
        if isinstance(node.get("allOf"), list) and ("allOf" not in sup or self.strict or contains_ref(node["allOf"])):
            base = {k: v for k, v in node.items() if k != "allOf"}
            node, stack, more = self.merge([base, *node["allOf"]], parts, stack)
            folds += more
            if isinstance(node.get("$ref"), str) and len(node) > 1 and not self.family.ref_siblings:
                node = {"$ref": node["$ref"]}
        alt_key = "anyOf"  # what the caller called the alternatives (their downgrade pointers)
        if "oneOf" in node and "oneOf" not in sup:
            alts = node.pop("oneOf")
            if "anyOf" not in node and isinstance(alts, list):
                node["anyOf"] = alts
                alt_key = "oneOf"
                self.note(parts, "oneOf relaxed to anyOf (exactly-one checked locally)")
            elif isinstance(alts, list) and isinstance(node.get("anyOf"), list):
                node, stack, more = self.merge(
                    [{k: v for k, v in node.items() if k not in ("anyOf",)}, {"anyOf": node["anyOf"]}, {"anyOf": alts}],
                    parts,
                    stack,
                )
                folds += more
                self.note(parts, "oneOf relaxed to anyOf (exactly-one checked locally)")
            else:
                self.lost(parts, "oneOf")
        if "const" in node and self.family.const_to_enum:
            const = node.pop("const")
            # const and enum both apply: their intersection, or const alone (a superset) when empty.
            node["enum"] = [const]
        if self.strict and self.family.strict_values_refused(node):
            raise NotStrict(ptr(parts), self.family.strict_values_refused(node))
        if isinstance(node.get("enum"), list) and "type" not in node and node["enum"] and self.strict:
            node["type"] = one_or_list(types_of_values(node["enum"]))

        # Keywords for types the value cannot have constrain nothing.
        types = node_types(node)
        if isinstance(node.get("type"), list) and len(set(types)) == 1:
            node["type"] = types[0]
        if types:
            node = prune_for_types(node, types)
            if isinstance(node.get("enum"), list):
                # type and enum both apply: only the values of an allowed type can occur.
                fitting = [
                    v
                    for v in node["enum"]
                    if json_type(v) in types or (json_type(v) == "integer" and "number" in types)
                ]
                if len(fitting) != len(node["enum"]):
                    node = {**node, "enum": fitting} if fitting else {k: v for k, v in node.items() if k != "enum"}
            if self.family.single_types and "enum" in node and {"object", "array"} & set(types):
                node = {k: v for k, v in node.items() if k != "enum"}
                self.lost(parts, "enum of objects or arrays")

        if isinstance(node.get("$dynamicRef"), str) and ("$dynamicRef" not in sup):
            # Removed below; the properties its possible targets declare stay allowed. Once per
            # path: a target that holds the same $dynamicRef (a recursive list) is not folded
            # into itself again (below that, the node allows any value, or strict goes off).
            mark = f"$dynamicRef {node['$dynamicRef']}"
            if mark not in stack:
                targets = self.dynamic_targets(node["$dynamicRef"])
                folds += targets if len(targets) < 2 else [{"anyOf": targets}]  # it resolves to one of them
                stack = stack + (mark,)
        if self.strict and isinstance(node.get("anyOf"), list):
            node = self._share_properties(node, parts, stack)
        if (self.strict or self.family.spread_alternatives) and "anyOf" in node and isinstance(node["anyOf"], list):
            spread = {k: v for k, v in node.items() if k != "anyOf" and k in ASSERTING}
            if spread:
                return self._distribute(node, spread, parts, stack, folds, alt_key)
        if (
            self.strict
            and self.family.single_types
            and len([t for t in types if t != "null"]) > 1
            and "anyOf" not in node
        ):
            return self._split_types(node, types, parts, stack)

        # Removed branches must not take away the properties they declare.
        closing = (self.strict and (_object_structure(node) or folds)) or node.get("additionalProperties") is False
        branches: dict[str, Any] = {}  # if/then/else fold as one: then and else together cover every case
        for key in ("if", "then", "else", "dependentSchemas"):
            if key in node and key not in sup:
                value = node.pop(key)
                self.lost(parts, key)
                if key == "dependentSchemas":
                    folds.append({key: value})
                else:
                    branches[key] = value
        if branches:  # an `if` alone still names keys (Merger.declared)
            folds.append(branches)
        if (
            isinstance(node.get("prefixItems"), list)
            and "prefixItems" not in sup
            and isinstance(node.get("items"), (dict, bool))
        ):
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
                raise NotStrict(
                    ptr(parts),
                    "an object whose keys are only given by patterns (strict mode needs its properties declared)",
                )
            if self.strict and any(sub is not False for sub in patterns.values()):
                # Closed to its named properties, the object could not hold the keys the
                # patterns allow (additionalProperties: false does not forbid those).
                raise NotStrict(
                    ptr(parts),
                    "an object with patternProperties (strict mode closes it to its named properties, "
                    "so keys the patterns allow could not be sent)",
                )
            if not self.strict and extra is not None and extra is not True:
                # Keys matching a pattern must stay allowed once the patterns are gone.
                allowed = [s for s in patterns.values()] + ([] if extra is False else [extra])
                node = dict(node)
                node["additionalProperties"] = allowed[0] if len(allowed) == 1 else {"anyOf": allowed}
        types = node_types(node)
        if closing and folds and (not types or "object" in types):
            # (a value that cannot be an object holds no keys: nothing to keep allowed)
            node = self.fold(node, folds, stack, parts)
        if self.strict and isinstance(node.get("required"), list):
            node = self._declare_required(node, parts)

        out: dict[str, Any] = {}
        moved: list[str] = []
        for key, value in node.items():
            if key in KEEP_ANNOTATIONS:
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
                if isinstance(value, list) and value:
                    out["enum"] = whole_numbers(value)
                elif isinstance(value, list):
                    # No value is valid; dropping the enum sends a superset (a strict node then
                    # has no type left, and strict goes off).
                    self.note(parts, "empty enum removed (no value is valid; checked locally)")
            elif key == "const":
                out["const"] = whole_numbers(value)
            elif key == "required":
                if isinstance(value, list):
                    out["required"] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
            elif key in MAP_KEYS:
                if key not in sup or key in ("$defs", "definitions"):
                    if key not in ("$defs", "definitions"):
                        self.lost(parts, key)
                    continue
                if isinstance(value, dict):
                    out[key] = {k: self.walk(v, parts + (key, k), stack) for k, v in value.items()}
            elif key in LIST_KEYS:
                if key not in sup:
                    self.lost(parts, key)
                    continue
                if isinstance(value, list):
                    where = alt_key if key == "anyOf" else key
                    out[key] = [self.walk(v, parts + (where, str(i)), stack) for i, v in enumerate(value)]
            elif key in ONE_KEYS:
                if key not in sup:
                    self.lost(parts, key)
                    continue
                if key == "additionalProperties" and isinstance(value, bool):
                    out[key] = value
                elif key == "additionalProperties" and self.strict:
                    out[key] = value  # closed below; never sent
                else:
                    out[key] = self.walk(value, parts + (key,), stack)
            elif key in VALUE_KEYS:
                if key in COUNT_KEYS and isinstance(value, float) and value.is_integer():
                    value = int(value)
                if self.family.value_ok(key, value):
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
        if "$ref" in out and len(out) > 1 and not self.family.ref_siblings:
            out = {"$ref": out["$ref"]}
        return out

    def _needless_siblings(self, node: dict[str, Any], ref: str, parts: tuple[str, ...]) -> dict[str, Any]:
        """``node`` without the plain constraints beside its ``$ref`` that merging would only remove
        again: the ones this family cannot send (reported), and the ones the target states itself.
        Merging inlines the target (and, down a chain of such refs, every next one, for every
        definition walked: cubic); a ref without them stays a ref."""
        target = self.target(ref)
        out = dict(node)
        for key, value in node.items():
            plain = key in VALUE_KEYS and key not in KEEP_ANNOTATIONS
            if not plain and key not in ("type", "enum", "const", "required"):
                continue
            if isinstance(target, dict) and key in target and json_equal(target[key], value):
                del out[key]
            elif plain and self.family.ref_siblings and not self.family.value_ok(key, value):
                del out[key]
                self.lost(parts, key)
                hint = f"Constraints: {key}={json.dumps(value, ensure_ascii=False)}."
                out["description"] = f"{out['description']} {hint}" if isinstance(out.get("description"), str) else hint
        return out

    def dynamic_targets(self, ref: str) -> list[Any]:
        """Every node a ``$dynamicRef`` may end at: those whose ``$dynamicAnchor`` is its fragment."""
        name = ref.rsplit("#", 1)[-1]
        if self._anchors is None:
            self._anchors = {}
            stack = [self.prepared.body, *self.prepared.defs.values()]
            while stack:
                n = stack.pop()
                if isinstance(n, dict):
                    if isinstance(n.get("$dynamicAnchor"), str):
                        self._anchors.setdefault(n["$dynamicAnchor"], []).append(n)
                    stack.extend(sub for _, _, sub in subschemas(n))
        return list(self._anchors.get(name, []))

    def _share_properties(self, node: dict[str, Any], parts: tuple[str, ...], stack: Stack) -> dict[str, Any]:
        """Strict alternatives closed one by one would forbid combining keys that different
        alternatives declare ({"a": 1, "b": 2} for anyOf [{a}, {b}]); each alternative that does
        not declare such a key declares it with the schema it gives the key in every case
        (``key_cover``: its additionalProperties schema, say). Where it leaves the key any value,
        no closed alternative can say that (the sibling's schema would forbid valid answers:
        {"a": 1, "b": "x"} for oneOf [{a: integer}, {b: integer}]): NotStrict."""
        alts = node["anyOf"]
        if len(alts) < 2:
            return node
        declared = [self.declared(a, stack) if isinstance(a, dict) else {} for a in alts]
        shared: list[Any] = []
        changed = False
        for i, (alt, keys) in enumerate(zip(alts, borrowed_keys(node, alts, declared, self.target), strict=True)):
            more: dict[str, Any] = {}
            for name, cover in keys.items():
                if cover is None:
                    raise NotStrict(
                        ptr(parts),
                        f"an anyOf/oneOf whose alternative {i} allows any value for {name!r}, which another "
                        f"alternative declares (closed by strict mode, it could only give {name!r} that schema, "
                        "forbidding valid answers; additionalProperties: false on the alternative keeps strict)",
                    )
                unique: list[Any] = []
                for sch in cover:
                    if not any(json_equal(sch, u) for u in unique):
                        unique.append(sch)
                if unique:
                    more[name] = unique[0] if len(unique) == 1 else {"anyOf": unique}
            if more:
                shared.append({"allOf": [alt, {"properties": more}]})
                changed = True
            else:
                shared.append(alt)
        return {**node, "anyOf": shared} if changed else node

    def beside_cycle(self, parts: tuple[str, ...], ref: str, dropped: list[Any], stack: Stack) -> None:
        if not self.strict:
            return
        own = self.declared(self.target(ref), stack)
        for sub in dropped:
            names = [k for k in self.declared(sub, stack) if k not in own]
            if names or (isinstance(sub, dict) and sub.get("patternProperties")):
                what = repr(names[0]) if names else "keys its patternProperties allow"
                raise NotStrict(
                    ptr(parts),
                    f"a recursive $ref ({ref}) whose sibling keywords declare {what}, which the target does "
                    "not (the cycle stays a ref without them; closed by strict mode, the target would "
                    "forbid that key)",
                )

    def too_deep(self) -> None:
        if self.strict:
            raise NotStrict(
                "(schema)",
                "a schema whose if/then/else, allOf, anyOf and $ref parts nest more than 48 levels deep "
                "at one object (the keys they declare cannot all be listed; closed by strict mode, the "
                "object would forbid the others)",
            )

    def free_key(self, parts: tuple[str, ...], name: str, *, costly: bool = False) -> None:
        if self.strict and costly:
            raise NotStrict(
                ptr(parts),
                f"an object where only conditional parts declare {name!r}, over more cases than strict mode "
                f"decides ({CASE_BUDGET} schemas and cases, nested if/then/else over a discriminator; closed "
                f"by strict mode, a schema for {name!r} that some case leaves free would forbid valid answers; "
                f"declaring {name!r} in the object's own properties keeps strict)",
            )
        if self.strict:
            raise NotStrict(
                ptr(parts),
                f"an object that allows any value for {name!r} where only a conditional part declares it "
                "(an if, then without else, dependentSchemas, one anyOf/oneOf alternative; closed by strict mode, it "
                f"could only give {name!r} that part's schema, forbidding valid answers; declaring {name!r} in "
                "the object's own properties keeps strict)",
            )

    def _distribute(
        self,
        node: dict[str, Any],
        spread: dict[str, Any],
        parts: tuple[str, ...],
        stack: Stack,
        folds: list[Any],
        alt_key: str = "anyOf",
    ) -> dict[str, Any]:
        """Keywords beside an anyOf, moved into each alternative (exact: A ∧ (B ∨ C) = (A ∧ B) ∨ (A ∧ C))."""
        out: dict[str, Any] = {k: v for k, v in node.items() if k in KEEP_ANNOTATIONS and isinstance(v, str)}
        alts = []
        for i, alt in enumerate(node["anyOf"]):
            here = parts + (alt_key, str(i))
            merged, inlined, more = self.merge([spread, alt], here, stack)
            if folds or more:
                merged = self.fold(merged, folds + more, inlined, here)
            alts.append(self.walk(merged, here, inlined))
        unique: list[Any] = []
        for alt in alts:
            if not any(json_equal(alt, u) for u in unique):
                unique.append(alt)
        if len(unique) == 1:
            single = dict(unique[0])
            for k, v in out.items():
                single.setdefault(k, v)
            if "$ref" in single and len(single) > 1 and not self.family.ref_siblings:
                single = {"$ref": single["$ref"]}
            return single
        out["anyOf"] = unique
        return out

    def _split_types(
        self, node: dict[str, Any], types: list[str], parts: tuple[str, ...], stack: Stack
    ) -> dict[str, Any]:
        """A multi-type node as an anyOf of single-type nodes (each with its type's keywords)."""
        out: dict[str, Any] = {k: v for k, v in node.items() if k in KEEP_ANNOTATIONS and isinstance(v, str)}
        rest = {k: v for k, v in node.items() if k not in KEEP_ANNOTATIONS and k != "type"}
        alts = []
        for t in types:
            alt = prune_for_types({**rest, "type": t}, [t])
            if isinstance(alt.get("enum"), list):
                alt["enum"] = [
                    v for v in alt["enum"] if json_type(v) == t or (t == "number" and json_type(v) == "integer")
                ]
                if not alt["enum"]:
                    continue
            alts.append(self.walk(alt, parts, stack))
        if not alts:  # no value satisfies the caller's schema; any superset will do
            alts.append(
                self.walk(
                    prune_for_types({k: v for k, v in rest.items() if k != "enum"} | {"type": types[0]}, types[:1]),
                    parts,
                    stack,
                )
            )
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
                raise NotStrict(ptr(parts), f"an object that requires {name!r} without declaring its schema")
            props[name] = schema
        return {**node, "properties": props}

    def _strict_node(self, out: dict[str, Any], parts: tuple[str, ...]) -> None:
        """OpenAI/Anthropic strict: closed objects, typed values; optional → nullable for OpenAI."""
        types = node_types(out)
        # Without a type, `properties` and `items` constrain only objects and arrays: every other
        # value is valid too, which a strict (typed) node cannot say.
        if not types and "properties" in out and not ({"anyOf", "$ref", "enum", "const"} & out.keys()):
            raise NotStrict(ptr(parts), 'a schema with properties but no "type" (any non-object value is valid too)')
        if not types and "items" in out and not ({"anyOf", "$ref", "enum", "const"} & out.keys()):
            raise NotStrict(ptr(parts), 'a schema with items but no "type" (any non-array value is valid too)')
        if not (types or {"anyOf", "$ref", "enum", "const"} & out.keys()):
            if "additionalProperties" in out:
                raise NotStrict(ptr(parts), "a free-form object (strict mode needs its properties declared)")
            raise NotStrict(ptr(parts), "a value without a type, which strict mode cannot express")
        if "object" in types or (not types and "properties" in out):
            props = out.get("properties")
            if not isinstance(props, dict):
                props = {}
            if not props and out.get("additionalProperties") is not False:
                raise NotStrict(ptr(parts), "a free-form object (strict mode needs its properties declared)")
            out["properties"] = props
            if out.get("additionalProperties") is not False:
                self.closed.append(ptr(parts))
                out["additionalProperties"] = False
            if self.family.all_required:
                required = [r for r in out.get("required", []) if r in props]
                for key in props:
                    if key not in required:
                        props[key] = make_nullable(props[key])
                        self.nulls_injected = True
                out["required"] = list(props)
            elif "required" in out:
                out["required"] = [r for r in out["required"] if r in props]
        if "array" in types and "items" not in out and "prefixItems" not in out:
            raise NotStrict(ptr(parts), "an array whose items are unconstrained")


def contains_ref(node: Any, *, in_values: bool = False) -> bool:
    """Whether ``node`` holds an object with a ``$ref`` key (``in_values``: also inside enum and
    const values, as llama.cpp's resolve_refs reads them)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if "$ref" in n:
                return True
            stack.extend(v for k, v in n.items() if in_values or k not in ("enum", "const"))
        elif isinstance(n, list):
            stack.extend(n)
    return False


def transform(
    prepared: Prepared, family: Family, strict: bool, *, inline_annotated: bool = True
) -> tuple[Any, dict[str, Any], Walker]:
    """(body, reached definitions, the walker with its downgrades): ``prepared`` walked for ``family``."""
    t = Walker(family, strict, prepared, inline_annotated=inline_annotated)
    body = t.walk(prepared.body, (), ("#",))
    # Only the definitions the walked schema still points at: one inlined everywhere it is used
    # is not walked again on its own (down a chain of refs with siblings, each definition would
    # inline the rest of the chain once more: cubic in its length).
    walked: dict[str, Any] = {}
    todo = [n for n in map(def_of, refs_in(body)) if n is not None and n in prepared.defs]
    while todo:
        name = todo.pop(0)
        if name in walked:
            continue
        walked[name] = t.walk(prepared.defs[name], ("$defs", name), (f"#/$defs/{name}",))
        todo.extend(
            n for n in map(def_of, refs_in(walked[name])) if n is not None and n in prepared.defs and n not in walked
        )
    defs = {name: walked[name] for name in prepared.defs if name in walked}  # the caller's order
    if strict:
        if not family.recursion_ok and is_recursive(body, defs):
            raise NotStrict("(root)", "a recursive schema, which this provider's strict mode does not accept")
        for ref in sorted(refs_in(body) | refs_in(list(defs.values()))):
            if ref != "#" and def_of(ref) not in defs:
                raise NotStrict("(root)", f"a $ref ({ref}) that does not resolve inside the schema")
    return body, defs, t


# ---------------------------------------------------------------------------------------------
# Shared by the family modules' tidy steps.


def enum_values_as_types(
    provider: dict[str, Any], notes: list[str], ok: Any, why: str
) -> dict[str, Any]:
    """``provider`` with every enum (or const) holding a value ``ok`` refuses sent as its types.

    The enum becomes an ``anyOf`` of the enum of the values ``ok`` takes and one ``{"type": t}``
    per type of the others (a superset; the exact values are checked locally), with a downgrade
    line saying ``why``. Gemini: strings and numbers only; Anthropic: no objects or arrays."""
    odd_nodes = [(parts, n) for parts, n in provider_nodes(provider) if _odd_values(n, ok)]
    if not odd_nodes:
        return provider
    replace: dict[int, dict[str, Any]] = {}
    for parts, node in odd_nodes:
        values = node["enum"] if "enum" in node else [node["const"]]
        keep = [v for v in values if ok(v)]
        other = [v for v in values if not ok(v)]
        base = {k: v for k, v in node.items() if k not in ("enum", "const", "type")}
        annotations = {k: v for k, v in base.items() if k in KEEP_ANNOTATIONS}
        alts: list[dict[str, Any]] = []
        if keep:
            alts.append({**base, "type": one_or_list(types_of_values(keep)), "enum": keep})
        for t in types_of_values(other):
            alts.append({**base, "type": t} if t in ("object", "array") else {"type": t})
        if len(alts) == 1:
            new = alts[0]
        else:
            new = {**annotations, "anyOf": [{k: v for k, v in a.items() if k not in KEEP_ANNOTATIONS} for a in alts]}
        replace[id(node)] = new
        shown = json.dumps(other, ensure_ascii=False)[:80]
        notes.append(Downgrade(ptr(parts), f"enum values {shown} sent as their types ({why}; checked locally)", sent=True))
    return _replaced(provider, replace)


def _odd_values(node: dict[str, Any], ok: Any) -> bool:
    values = node.get("enum")
    if isinstance(values, list):
        return any(not ok(v) for v in values)
    return "const" in node and not ok(node["const"])


def _replaced(node: Any, replace: dict[int, dict[str, Any]]) -> Any:
    if isinstance(node, dict):
        if id(node) in replace:
            node = replace[id(node)]
        return {k: (v if k in ("enum", "const") else _replaced(v, replace)) for k, v in node.items()}
    if isinstance(node, list):
        return [_replaced(v, replace) for v in node]
    return node
