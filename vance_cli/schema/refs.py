"""References: every ``$ref`` resolved the way the validator resolves it, the ref graph, and the one cycle finder.

``prepare_schema`` gives a schema's 2020-12 form (``dialects.upgrade``) with every definition a
reference reaches hoisted to one place and every internal ``$ref`` (JSON pointer, ``$anchor``,
base-URI form, into ``definitions`` or any other container) pointed at ``#`` or
``#/$defs/<name>``. Everything downstream (the provider schemas, the way back, the check for
``$ref`` loops) reads that prepared form, so it never resolves a reference again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from vance_cli.schema.keywords import LIST, MAP, ONE
from vance_cli.text import pointer_token

# A name prepare_schema never gives a definition, so a converter can add its own under it (the
# provider schema keeps the reply envelope's target there).
RESERVED_DEF = "__target"
DEFS = "#/$defs/"


def subschemas(node: dict[str, Any]):
    """(key, index-or-name, subschema) for every subschema position of a 2020-12 node."""
    for key, value in node.items():
        if key in ONE:
            yield key, None, value
        elif key in LIST and isinstance(value, list):
            for i, sub in enumerate(value):
                yield key, i, sub
        elif key in MAP and isinstance(value, dict):
            for name, sub in value.items():
                yield key, name, sub


@dataclass
class Prepared:
    body: Any  # the root schema without its definitions; refs rewritten
    defs: dict[str, Any]  # name → schema (refs rewritten)
    unresolved: list[str]  # refs that point outside the schema (kept as they are)
    check_defs: dict[str, Any] | None = None  # the way back's validation root, made once

    def target(self, ref: str) -> Any:
        """The node a prepared ref (``#`` or ``#/$defs/<name>``) points at; None for any other."""
        if ref == "#":
            return self.body
        name = def_of(ref)
        return self.defs.get(name) if name is not None else None


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _def_name(ref: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", ref.split("#", 1)[-1]).strip("_.-") or "ref"
    base = base[-60:]
    name, n = base, 2
    while name in taken or name == RESERVED_DEF:
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
    from vance_cli.schema.dialects import upgrade

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
            # A name a JSON pointer would need escaped ("/", "~", "%", quotes) is renamed, so every
            # rewritten ref is a plain "#/$defs/<name>" that needs no escaping to resolve.
            plain = _PLAIN_NAME.fullmatch(name) is not None
            final = (
                name
                if plain and name not in taken and name != RESERVED_DEF
                else _def_name(f"{container}_{name}" if plain else f"#{name}", taken)
            )
            taken.add(final)
            target_name[id(sub)] = final
            originals[final] = sub

    # Resolve every ref the way a validator would (anchors, $id bases, any JSON pointer).
    refs_of: dict[int, str] = {}  # id(node holding a $ref) → the new ref
    dynamic_of: dict[int, str] = {}  # id(node holding a $dynamicRef that is a plain $ref) → the new ref
    unresolved: list[str] = []
    if has_key(root, ("$ref", "$dynamicRef")):
        _resolve_refs(root, target_name, taken, originals, refs_of, unresolved, dynamic_of)

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
            elif key == "$dynamicRef" and id(node) in dynamic_of:
                # The same as a $ref to its one possible target (see _resolve_refs).
                if "$ref" in node:
                    out["allOf"] = [*(out.get("allOf") or []), {"$ref": dynamic_of[id(node)]}]
                else:
                    out["$ref"] = dynamic_of[id(node)]
            elif key == "allOf" and isinstance(value, list) and "allOf" in out:
                out[key] = [rewrite(v, depth + 1) for v in value] + out[key]
            elif key in ONE:
                out[key] = rewrite(value, depth + 1)
            elif key in LIST and isinstance(value, list):
                out[key] = [rewrite(v, depth + 1) for v in value]
            elif key in MAP and isinstance(value, dict):
                if key in ("$defs", "definitions"):
                    continue  # every definition a ref reaches lives in the root $defs now
                out[key] = {k: rewrite(v, depth + 1) for k, v in value.items()}
            else:
                out[key] = value
        return out

    body = rewrite(root)
    defs = {name: rewrite(sub) for name, sub in originals.items()}
    return Prepared(body=body, defs=defs, unresolved=list(dict.fromkeys(unresolved)))


def _dynamic_anchors(root: Any) -> dict[str, int]:
    """How many schema nodes declare each ``$dynamicAnchor`` name."""
    counts: dict[str, int] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if isinstance(n.get("$dynamicAnchor"), str):
                counts[n["$dynamicAnchor"]] = counts.get(n["$dynamicAnchor"], 0) + 1
            stack.extend(sub for _, _, sub in subschemas(n))
    return counts


def _resolve_refs(root, target_name, taken, originals, refs_of, unresolved, dynamic_of) -> None:
    """Fill ``refs_of`` (and ``dynamic_of``) with the prepared form of every ref of ``root``.

    A ``$dynamicRef`` is a plain ``$ref`` where its target cannot change with the dynamic scope
    (2020-12 §8.2.3.2): its initial target declares no ``$dynamicAnchor`` of the fragment's name,
    or the whole schema declares that anchor once. Any other stays for the walk to relax."""
    nested_ids = has_key(root, ("$id",), skip_root=True)
    anchors: dict[str, int] | None = None
    resolver_for: Any = None  # built only for refs a plain JSON pointer cannot resolve

    def base_resolver() -> Any:
        nonlocal resolver_for
        if resolver_for is None:
            from referencing import Registry
            from referencing.jsonschema import DRAFT202012

            resource = DRAFT202012.create_resource(root)
            registry = Registry().with_resource(uri=resource.id() or "", resource=resource)
            if nested_ids or has_key(root, ("$anchor", "$dynamicAnchor")):
                registry = registry.crawl()
            resolver_for = registry.resolver_with_root(resource)
        return resolver_for

    def lookup(ref: str, resolver: Any) -> Any:
        from referencing.exceptions import Unresolvable

        if not nested_ids and (ref == "#" or ref.startswith("#/")):
            try:
                return resolve_pointer(root, ref)
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
        for key, into in (("$ref", refs_of), ("$dynamicRef", dynamic_of)):
            if not isinstance(node.get(key), str):
                continue
            ref = node[key]
            target = lookup(ref, resolver)
            if key == "$dynamicRef":
                fragment = ref.rsplit("#", 1)[-1] if "#" in ref else ""
                if anchors is None:
                    anchors = _dynamic_anchors(root)
                if not isinstance(target, (dict, bool)) or (
                    isinstance(target, dict)
                    and target.get("$dynamicAnchor") == fragment
                    and anchors.get(fragment, 0) != 1
                ):
                    continue  # resolved by the dynamic scope (or not at all): left to the walk
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
                into[id(node)] = "#" if name == "#" else f"{DEFS}{name}"
        for _, _, sub in subschemas(node):
            stack.append((sub, resolver, False))


def has_key(node: Any, keys: tuple[str, ...], *, skip_root: bool = False) -> bool:
    """Whether a (sub)schema holds one of ``keys`` with a string value (not looking into enum etc.)."""
    stack = [node]
    first = True
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if not (first and skip_root) and any(isinstance(n.get(k), str) for k in keys):
                return True
            first = False
            stack.extend(sub for _, _, sub in subschemas(n))
    return False


def resolve_pointer(root: Any, ref: str) -> Any:
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


# ---------------------------------------------------------------------------------------------
# The ref graph of a prepared schema (or a provider schema built from one).


def def_of(ref: str) -> str | None:
    """The definition name of ``#/$defs/<name>``; None for any other ref."""
    return ref[len(DEFS) :] if ref.startswith(DEFS) else None


def refs_in(node: Any) -> set[str]:
    """Every ``$ref`` value in ``node`` (not looking into enum and const values)."""
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


def rewrite_refs(node: Any, fn: Callable[[str], str]) -> Any:
    """A copy of ``node`` with every ``$ref`` value replaced by ``fn(ref)``."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out[k] = fn(v)
            elif k in ("enum", "const"):
                out[k] = v
            else:
                out[k] = rewrite_refs(v, fn)
        return out
    if isinstance(node, list):
        return [rewrite_refs(v, fn) for v in node]
    return node


def reachable(body: Any, defs: dict[str, Any]) -> list[str]:
    """The definitions a schema reaches from its body, in their original order."""
    seen: set[str] = set()
    todo = list(refs_in(body))
    while todo:
        name = def_of(todo.pop())
        if name is None or name in seen or name not in defs:
            continue
        seen.add(name)
        todo.extend(refs_in(defs[name]))
    return [n for n in defs if n in seen]


# The places where a subschema applies to the same value as its parent (no descent into it).
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LIST = ("allOf", "anyOf", "oneOf")


def _in_place_refs(node: Any) -> set[str]:
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
    return refs


def ref_graph(body: Any, defs: dict[str, Any], *, in_place: bool = False) -> dict[str, set[str]]:
    """``#`` and ``#/$defs/<name>`` → the refs each holds (``in_place``: only those that apply to
    the same value, not to a property or item of it)."""
    edges = _in_place_refs if in_place else refs_in
    graph = {"#": edges(body)}
    for name, sub in defs.items():
        graph[f"{DEFS}{name}"] = edges(sub)
    return graph


def find_cycle(graph: dict[str, set[str]], starts: Iterable[str]) -> str | None:
    """One node of a cycle reachable from ``starts`` (refs to nodes outside the graph are
    ignored), or None; depth-first without recursion."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in starts:
        if state.get(start) or start not in graph:
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


def in_place_cycle(schema: Any) -> str | None:
    """A `$ref` chain that comes back to where it started without descending into the value
    (e.g. ``{"not": {"$ref": "#"}}``): validating against it never ends. Returns one ref of it."""
    prepared = prepare_schema(schema)
    graph = ref_graph(prepared.body, prepared.defs, in_place=True)
    return find_cycle(graph, ["#", *(f"{DEFS}{n}" for n in reachable(prepared.body, prepared.defs))])


def is_recursive(body: Any, defs: dict[str, Any]) -> bool:
    """Whether a $ref cycle (recursion) runs among the definitions, or back to the root."""
    graph = ref_graph(body, defs)
    return find_cycle(graph, graph) is not None
