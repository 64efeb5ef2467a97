"""allOf as one node: the conjunction the walk sends where a family takes no ``allOf`` (or not with ``$ref``).

``Merger.merge`` folds a list of schemas into one node, exactly where it can (properties,
required, types, enums and bounds intersect) and as a superset where it cannot (a conflicting
keyword keeps its first value, and says so); ``$ref`` items are inlined unless that would recurse.
``Merger.fold`` keeps the properties that removed branches declare, so a closed object still
accepts them. The walker (walker.py) is a Merger that also walks.

A key borrowed that way (from a removed branch, or from a sibling ``anyOf`` alternative) is only
exact where something gives it a schema in every case (``key_cover``): a closed object declaring
it with a branch's schema forbids the values the cases without that branch allow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from vance_cli.schema.nodes import asserting, json_equal, json_in, json_type, node_types
from vance_cli.schema.refs import Prepared
from vance_cli.text import json_pointer

Stack = tuple[str, ...]  # the definitions inlined on the way to a node ("#" is the root)
# Annotations the provider schemas keep (the model reads them); every other one is dropped silently:
# it constrains nothing, and some strict providers reject it.
KEEP_ANNOTATIONS = ("title", "description")
# What ``Merger.declared`` lists for a key only named (a bare ``required``, an ``if``'s test): no schema.
NAMED_ONLY: dict[str, Any] = {}


def ptr(parts: tuple[str, ...]) -> str:
    """The JSON pointer of a schema location, for downgrade lines ("(root)" for the root)."""
    return json_pointer(parts, "(root)")


class Downgrade(str):
    """One downgrade line, ``"<pointer>: <reason>"``, that keeps its parts: ``pointers`` and
    ``reason``. A pointer names the place in the caller's schema as the walk met it (its 2020-12
    form, definitions under ``$defs``; inside an object its allOf parts were merged into, where a
    part's keyword sits in the merged object); "(root)" is the root, "(schema)" the whole schema.
    With ``sent`` the pointers are into the provider schema instead (checks made on it: Gemini's
    enums, OpenAI's limits, refs that do not resolve). A str, so the lines read, compare and
    serialise as before; ``vance schemas plan`` reads the parts."""

    pointers: tuple[str, ...]
    reason: str
    sent: bool

    def __new__(
        cls, pointers: str | Sequence[str], reason: str, text: str | None = None, *, sent: bool = False
    ) -> Downgrade:
        where = (pointers,) if isinstance(pointers, str) else tuple(pointers)
        line = super().__new__(cls, text if text is not None else f"{', '.join(where)}: {reason}")
        line.pointers = where
        line.reason = reason
        line.sent = sent
        return line

    def __getnewargs_ex__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:  # copy and pickle
        return (self.pointers, self.reason, str(self)), {"sent": self.sent}


def _numbers(a: Any, b: Any) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))


_APPLICATORS = ("allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "then", "else", "dependentSchemas")


# The nodes and cases one ``key_cover`` call may look at: nested definitions that each split over
# every value of a discriminator (or each hold an if/then per value) cost values ** depth. Past it
# the answer is None (the coarse rule: a closed strict object cannot give the key a schema, so
# strict goes off, saying why).
CASE_BUDGET = 4096


def key_cover(
    node: Any,
    key: str,
    target: Callable[[str], Any],
    depth: int = 0,
    seen: frozenset[str] = frozenset(),
    budget: list[int] | None = None,
) -> list[Any] | None:
    """The schemas of which a value of property ``key`` meets one in every object ``node`` accepts.

    ``[]`` when no object ``node`` accepts holds ``key``; ``None`` when some case leaves its value
    free (a closed object that declares ``key`` with any narrower schema then forbids valid
    answers), or deciding it would look at more than ``CASE_BUDGET`` nodes and cases. A
    superset where it cannot be exact: one part of an allOf is enough."""
    if budget is None:
        budget = [CASE_BUDGET]
    budget[0] -= 1
    if budget[0] < 0:
        return None
    if node is False:
        return []
    if not isinstance(node, dict) or depth > 16:
        return None
    types = node_types(node)
    if types and "object" not in types:
        return []
    values = [node["const"]] if "const" in node else node.get("enum")
    if isinstance(values, list) and not any(isinstance(v, dict) and key in v for v in values):
        return []
    props = node.get("properties")
    if isinstance(props, dict) and key in props:
        return [props[key]]
    patterns = node.get("patternProperties")
    if isinstance(patterns, dict):
        matched = [sub for pattern, sub in patterns.items() if key_matches(pattern, key)]
        if matched:
            return matched
    extra = node.get("additionalProperties")
    if extra is False:
        return []
    if isinstance(extra, dict):
        return [extra]
    rest = node.get("unevaluatedProperties")
    if (rest is False or isinstance(rest, dict)) and not any(k in node for k in _APPLICATORS):
        return [] if rest is False else [rest]
    # Parts that always apply: one of them is enough.
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        found = key_cover(target(ref), key, target, depth + 1, seen | {ref}, budget)
        if found is not None:
            return found
    for part in node.get("allOf") or [] if isinstance(node.get("allOf"), list) else []:
        found = key_cover(part, key, target, depth + 1, seen, budget)
        if found is not None:
            return found
    # Alternatives (one of them applies) and if/then/else: every case must hold it.
    cases: list[list[Any]] = []
    for k in ("anyOf", "oneOf"):
        if isinstance(node.get(k), list) and node[k]:
            cases.append(node[k])
    if "if" in node:
        cases.append([node.get("then", True), node.get("else", True)])
    for alts in cases:
        found = [key_cover(alt, key, target, depth + 1, seen, budget) for alt in alts]
        if all(f is not None for f in found):
            return [s for f in found for s in f]  # type: ignore[union-attr]
    return _cover_by_cases(node, key, target, depth, seen, budget)


_IF_ASIDE = frozenset({"title", "description", "$comment", "examples", "default"})
_VALUE_ASIDE = _IF_ASIDE | {"$anchor", "$id"}


def _always_parts(node: Any, target: Callable[[str], Any], depth: int, seen: frozenset[str]) -> list[dict[str, Any]] | None:
    """``node`` and every part that always applies with it (allOf items, $ref targets), flat,
    each without its allOf/$ref; None past the depth limit or at a part that is not an object schema."""
    out: list[dict[str, Any]] = []
    todo: list[tuple[Any, int, frozenset[str]]] = [(node, depth, seen)]
    while todo:
        n, d, refs = todo.pop()
        if n is True:
            continue
        if not isinstance(n, dict) or d > 16:
            return None
        out.append({k: v for k, v in n.items() if k not in ("allOf", "$ref")})
        if isinstance(n.get("allOf"), list):
            todo.extend((part, d + 1, refs) for part in n["allOf"])
        ref = n.get("$ref")
        if isinstance(ref, str) and ref not in refs:
            todo.append((target(ref), d + 1, refs | {ref}))
    return out


def _value_test(sub: Any, value: Any, target: Callable[[str], Any]) -> bool | None:
    """Whether ``value`` meets ``sub``, where ``sub`` says it with const/enum/type only (through
    $refs); None where it says more."""
    for _ in range(8):
        if isinstance(sub, dict) and set(sub) == {"$ref"} and isinstance(sub["$ref"], str):
            sub = target(sub["$ref"])
    if sub is True:
        return True
    if sub is False:
        return False
    if not isinstance(sub, dict) or set(sub) - _VALUE_ASIDE - {"const", "enum", "type"}:
        return None
    if "const" in sub and not json_equal(sub["const"], value):
        return False
    if isinstance(sub.get("enum"), list) and not json_in(value, sub["enum"]):
        return False
    types = node_types(sub)
    if types and json_type(value) not in types and not (json_type(value) == "integer" and "number" in types):
        return False
    return True


def _values_of(sub: Any, target: Callable[[str], Any]) -> list[Any] | None:
    """The finite set of values ``sub`` allows (its const or enum, through $refs), else None."""
    for _ in range(8):
        if isinstance(sub, dict) and isinstance(sub.get("$ref"), str) and not ({"const", "enum"} & sub.keys()):
            sub = target(sub["$ref"])
    if not isinstance(sub, dict):
        return None
    if "const" in sub:
        return [sub["const"]]
    if isinstance(sub.get("enum"), list):
        return list(sub["enum"])
    return None


def _decide(cond: Any, key: str, value: Any, target: Callable[[str], Any]) -> bool | None:
    """Whether an ``if`` holds for every object whose property ``key`` is ``value`` (True), for
    none (False), or depends on more than that (None)."""
    if isinstance(cond, bool):
        return cond
    if not isinstance(cond, dict):
        return None
    verdict: bool | None = True
    props = cond.get("properties") if isinstance(cond.get("properties"), dict) else {}
    if key in props:
        found = _value_test(props[key], value, target)
        if found is False:
            return False
        if found is None:
            verdict = None
    for name, sub in props.items():
        if name != key and sub is not True and sub != {}:
            verdict = None
    for k in cond:
        if k == "properties" or k in _IF_ASIDE:
            continue
        if k == "type" and "object" in node_types(cond):
            continue
        if k == "required" and isinstance(cond[k], list) and all(r == key for r in cond[k]):
            continue
        verdict = None
    return verdict


def _cover_by_cases(
    node: Any, key: str, target: Callable[[str], Any], depth: int, seen: frozenset[str], budget: list[int]
) -> list[Any] | None:
    """``key_cover`` case by case, where a required property with a few possible values (a
    discriminator: const/enum) decides every if/then/else of the parts that always apply: for each
    value, the branch that applies replaces each of them (github-issue-forms: an if/then without
    else for every value of the required ``type`` enum gives each key a schema, or forbids it, in
    every case). None where some case leaves the key free, nothing decides the conditions, or
    the cases looked at in this ``key_cover`` call pass ``budget``."""
    if depth > 12 or budget[0] <= 0:
        return None
    parts = _always_parts(node, target, depth, seen)
    if not parts:
        return None
    conditional = [p for p in parts if "if" in p and ("then" in p or "else" in p)]
    if not conditional:
        return None
    required = {r for p in parts if isinstance(p.get("required"), list) for r in p["required"] if isinstance(r, str)}
    for name in sorted(required):
        values: list[Any] | None = None
        for p in parts:
            props = p.get("properties")
            if isinstance(props, dict) and name in props:
                found = _values_of(props[name], target)
                if found is not None:
                    values = found if values is None else [v for v in values if json_in(v, found)]
        if values is None or len(values) > 64:
            continue
        cases: list[list[dict[str, Any]]] = []
        for value in values:
            case: list[dict[str, Any]] = []
            for p in parts:
                if p in conditional:
                    holds = _decide(p["if"], name, value, target)
                    if holds is None:
                        break
                    rest = {k: v for k, v in p.items() if k not in ("if", "then", "else")}
                    branch = p.get("then" if holds else "else", True)
                    case.append({"allOf": [rest, branch]} if rest else {"allOf": [branch]})
                else:
                    case.append(p)
            else:
                cases.append(case)
                continue
            break
        if len(cases) != len(values):
            continue  # some condition this property does not decide
        found_all: list[Any] = []
        for case in cases:
            found = key_cover({"allOf": case}, key, target, depth + 1, seen, budget)
            if found is None:
                return None
            found_all.extend(found)
        return found_all
    return None


def key_matches(pattern: str, key: str) -> bool:
    """Whether a patternProperties pattern matches ``key`` (an invalid pattern matches nothing)."""
    try:
        return re.search(pattern, key) is not None
    except re.error:
        return False


def borrowed_keys(
    parent: dict[str, Any], alts: list[Any], declared: list[dict[str, Any]], target: Callable[[str], Any]
) -> list[dict[str, list[Any] | None]]:
    """For each alternative of ``parent``'s anyOf/oneOf: every key a sibling declares (``declared``:
    one name → schemas map per alternative) that neither it nor ``parent``'s properties declare,
    with ``key_cover`` of it there (the alternative together with the keywords beside it)."""
    own = parent.get("properties") if isinstance(parent.get("properties"), dict) else {}
    # unevaluatedProperties beside the alternatives sees what they evaluate: not a cover by itself.
    beside = {k: v for k, v in parent.items() if k not in ("anyOf", "oneOf", "unevaluatedProperties")}
    out: list[dict[str, list[Any] | None]] = []
    for i, alt in enumerate(alts):
        keys: dict[str, list[Any] | None] = {}
        for j, found in enumerate(declared):
            for name in found:
                if j != i and name not in declared[i] and name not in own and name not in keys:
                    keys[name] = key_cover({"allOf": [beside, alt]} if beside else alt, name, target)
        out.append(keys)
    return out


class Merger:
    """The allOf algebra over one prepared schema, with the downgrade lines it leaves."""

    def __init__(self, prepared: Prepared) -> None:
        self.prepared = prepared
        self.downgrades: list[str] = []
        self._noted: set[str] = set()

    def note(self, parts: tuple[str, ...], what: str) -> None:
        line = Downgrade(ptr(parts), what)
        if line not in self._noted:
            self._noted.add(line)
            self.downgrades.append(line)

    def target(self, ref: str) -> Any:
        return self.prepared.target(ref)

    def lost(self, parts: tuple[str, ...], keyword: str) -> None:
        """A keyword left out of the merged node (the walker names the family that does not take it)."""
        self.note(parts, f"{keyword} removed (checked locally)")

    def inline(self, sub: Any, stack: Stack) -> tuple[Any, Stack, bool]:
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

    def merge(self, items: list[Any], parts: tuple[str, ...], stack: Stack) -> tuple[dict[str, Any], Stack, list[Any]]:
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
                resolved, inlined2, ok = self.inline(sub, inlined)
                if ok:
                    inlined = inlined2
                    queue.insert(0, resolved)
                else:
                    pending.append(sub["$ref"])
                    rest = {k: v for k, v in sub.items() if k != "$ref"}
                    if rest:
                        queue.insert(0, rest)
                continue
            if {"if", "then", "else"} & sub.keys() and {"if", "then", "else"} & merged.keys():
                # A second if/then/else folds as one: then and else only mean something with their if.
                folds.append({k: sub[k] for k in ("if", "then", "else") if k in sub})
                for k in ("if", "then", "else"):
                    if k in sub:
                        self.lost(parts, k)  # nothing conflicts: it is not sent, like the first
                sub = {k: v for k, v in sub.items() if k not in ("if", "then", "else")}
            for key, value in sub.items():
                if key == "allOf" and isinstance(value, list):
                    queue[0:0] = list(value)
                    continue
                if key not in merged:
                    merged[key] = value
                    continue
                old = merged[key]
                if key in KEEP_ANNOTATIONS or json_equal(old, value):
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
                    both += [
                        t
                        for t in ("integer",)
                        if t not in both and (("integer" in a and "number" in b) or ("number" in a and "integer" in b))
                    ]
                    merged[key] = (both[0] if len(both) == 1 else both) if both else old
                elif key in ("enum", "const"):
                    a = old if key == "enum" else [old]
                    b = value if key == "enum" else [value]
                    if isinstance(a, list) and isinstance(b, list):
                        both = [v for v in a if json_in(v, b)]
                        if key == "enum":
                            merged[key] = both or a
                        elif not both:
                            partly = True
                elif key in (
                    "minimum",
                    "exclusiveMinimum",
                    "minLength",
                    "minItems",
                    "minProperties",
                    "minContains",
                ) and _numbers(old, value):
                    merged[key] = max(old, value)
                elif key in (
                    "maximum",
                    "exclusiveMaximum",
                    "maxLength",
                    "maxItems",
                    "maxProperties",
                    "maxContains",
                ) and _numbers(old, value):
                    merged[key] = min(old, value)
                elif (
                    key
                    in (
                        "items",
                        "additionalProperties",
                        "contains",
                        "propertyNames",
                        "not",
                        "unevaluatedItems",
                        "unevaluatedProperties",
                    )
                    and isinstance(old, (dict, bool))
                    and isinstance(value, (dict, bool))
                ):
                    merged[key] = {"allOf": [old, value]} if key != "not" else {"anyOf": [old, value]}
                elif (
                    key in ("anyOf", "oneOf")
                    and isinstance(old, list)
                    and isinstance(value, list)
                    and len(old) * len(value) <= 16
                ):
                    merged[key] = [{"allOf": [x, y]} for x in old for y in value]
                elif key in ("anyOf", "oneOf", "then", "else", "if", "dependentSchemas"):
                    folds.append({key: value})
                    partly = True
                else:
                    partly = True  # keep the first value: a superset of the conjunction
        if pending:
            annotations = {k: v for k, v in merged.items() if k in KEEP_ANNOTATIONS}
            recursive = [r for r in dict.fromkeys(pending) if isinstance(self.target(r), dict)]
            if len(pending) == 1 and not asserting(merged):
                merged = {"$ref": pending[0], **annotations}  # a lone recursive ref stays a ref
            elif recursive:
                # A cycle stays a ref: the keywords beside it (and any other unmerged ref) are
                # dropped, a superset of the conjunction. Folding the target's properties back in
                # would walk the same node again with the same stack, without end.
                keep = recursive[0]
                dropped = [{k: v for k, v in merged.items() if k not in KEEP_ANNOTATIONS}, *folds]
                dropped += [{"$ref": r} for r in dict.fromkeys(pending) if r != keep]
                self.beside_cycle(parts, keep, dropped, stack)
                what = ", ".join(sorted({k for d in dropped for k in d}))
                self.note(parts, f"{what} beside the recursive $ref {keep} removed (checked locally)")
                return {"$ref": keep, **annotations}, inlined, []
            else:
                for ref in dict.fromkeys(pending):
                    self.note(parts, f"allOf item {ref} not merged (outside the schema; checked locally)")
        if partly:
            self.note(parts, "allOf partly merged (conflicting keywords kept from the first schema; checked locally)")
        return merged, inlined, folds

    def declared(
        self,
        node: Any,
        stack: Stack,
        depth: int = 0,
        *,
        conditions: bool = True,
        holds: Callable[[Any], bool] | None = None,
        done: set[str] | None = None,
    ) -> dict[str, list[Any]]:
        """Property name → the schemas a subschema (and what it combines) declares for it. A key
        only named (by a ``required`` without a ``properties`` entry, or with ``conditions`` by an
        ``if``, whose schema for it is a test, not a constraint) gets ``NAMED_ONLY``, the same
        object each time: a valid answer may hold it, with a value nothing here constrains.
        With ``holds`` (whether the value at hand meets an ``if``), only the ``then``/``else``
        that applies to that value counts. Each definition is read once per call (``done``): the
        same keys again add nothing, and a definition reached down many paths would cost their number."""
        found: dict[str, list[Any]] = {}
        if not isinstance(node, dict):
            return found
        if depth > 48:
            self.too_deep()
            return found
        done = set() if done is None else done
        if isinstance(node.get("$ref"), str):
            target = self.target(node["$ref"])
            if target is not None and node["$ref"] not in stack and node["$ref"] not in done:
                done.add(node["$ref"])
                more = self.declared(target, stack + (node["$ref"],), depth + 1, conditions=conditions, holds=holds, done=done)
                for k, v in more.items():
                    found.setdefault(k, []).extend(v)
        props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        for name, sub in props.items():
            found.setdefault(name, []).append(sub)
        for name in node.get("required") or [] if isinstance(node.get("required"), list) else []:
            if isinstance(name, str) and name not in props:
                found.setdefault(name, []).append(NAMED_ONLY)
        children: list[Any] = []
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                children += node[key]
        if holds is None:
            children += [node.get("then"), node.get("else")]
        elif "if" in node:
            children.append(node.get("then" if holds(node["if"]) else "else"))
        if isinstance(node.get("dependentSchemas"), dict):
            children += list(node["dependentSchemas"].values())
        for child in children:
            for k, v in self.declared(child, stack, depth + 1, conditions=conditions, holds=holds, done=done).items():
                found.setdefault(k, []).extend(v)
        # an `if` names keys too: a valid answer may hold one with any value where the `if` fails
        if conditions:
            for k in self.declared(node.get("if"), stack, depth + 1, conditions=conditions):
                found.setdefault(k, []).append(NAMED_ONLY)
        return found

    def too_deep(self) -> None:
        """``declared`` met parts nested too deep to list the keys they declare (the walker turns
        strict off: a closed object would forbid those keys; a superset is fine otherwise)."""

    def beside_cycle(self, parts: tuple[str, ...], ref: str, dropped: list[Any], stack: Stack) -> None:
        """Schemas ``merge`` drops beside the recursive ``ref`` it keeps (the walker turns strict off
        where that closes out a key they declare)."""

    def free_key(self, parts: tuple[str, ...], name: str, *, costly: bool = False) -> None:
        """A key ``fold`` declares with a branch's schema although some case leaves it any value,
        or (``costly``) deciding whether one does would look at more than ``CASE_BUDGET`` nodes and
        cases (the walker turns strict off there; a superset is fine otherwise)."""

    def fold(self, node: dict[str, Any], sources: list[Any], stack: Stack, parts: tuple[str, ...] = ()) -> dict[str, Any]:
        """Declare the properties that removed branches declare, as optional properties.

        ``sources`` each always apply (a removed if/then/else comes as one ``{"if", "then",
        "else"}``): a key gets the schema the node itself gives it (``additionalProperties``), or
        the branches' schemas where they hold it in every case, else any value (``{}``) and ``free_key``
        is told."""
        declared: dict[str, list[Any]] = {}
        for src in sources:
            for k, v in self.declared(src, stack).items():
                declared.setdefault(k, []).extend(v)
        props = dict(node.get("properties") or {}) if isinstance(node.get("properties"), dict) else {}
        added = False
        for name, schemas in declared.items():
            if name in props:
                # the node's own schema for it holds in every case; a key a branch's schema for it
                # declares inside, which that own schema leaves free, it cannot give a schema
                own_keys = self.declared(props[name], stack)
                for sub in schemas:
                    for inner in self.declared(sub, stack):
                        if inner not in own_keys and key_cover(props[name], inner, self.target) is None:
                            self.free_key(parts + ("properties", name), inner)
                continue
            # (its unevaluatedProperties saw the removed branches' keys: not a cover by itself)
            own = key_cover({k: v for k, v in node.items() if k != "unevaluatedProperties"}, name, self.target)
            # an `if`'s test or a bare `required` gives the key no schema (NAMED_ONLY)
            schemas = [s for s in schemas if s is not NAMED_ONLY]
            if own == []:
                continue  # the object forbids the key: no answer holds it
            if own:
                schemas = own
            else:
                budget = [CASE_BUDGET]
                cover = next((c for c in (key_cover(src, name, self.target, budget=budget) for src in sources) if c is not None), None)
                if cover is None:
                    # together they may give it a schema in every case (one if/then per value of
                    # a required enum, each folded from its own allOf part)
                    whole = {"allOf": [{k: v for k, v in node.items() if k != "unevaluatedProperties"}, *sources]}
                    cover = key_cover(whole, name, self.target, budget=budget)
                if cover == []:
                    continue  # forbidden in every case
                if cover is None:
                    # (not strict) any value: a branch's schema would forbid the value a case
                    # that leaves the key free allows
                    self.free_key(parts, name, costly=budget[0] < 0)
                    schemas = [{}]
                else:
                    schemas = schemas + [c for c in cover if not any(c is s for s in schemas)]
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
