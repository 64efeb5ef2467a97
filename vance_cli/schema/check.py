"""The schema check every entry point runs: meta-schema of the declared draft, depth, refs, termination.

Its errors are InvalidSchema (exit 1 on the CLI, like every VanceError), each with the fix.
"""

from __future__ import annotations

from typing import Any

from vance_cli.errors import InvalidSchema
from vance_cli.schema.keywords import LIST, MAP, OLD_MAP, OLD_ONE, ONE
from vance_cli.text import json_depth, json_pointer, shorten

__all__ = ["MAX_SCHEMA_DEPTH", "check_refs", "check_schema", "json_depth", "unresolvable_ref"]

# The keywords whose values are subschemas in Drafts 4 to 2020-12 (the tables the `referencing`
# library crawls), so the walk below visits exactly the places a validator would follow a $ref
# from, and never mistakes a "$ref" key inside `enum`, `const`, `default` or `examples` for one.
_IN_VALUE = frozenset(ONE) | frozenset(OLD_ONE)
_IN_SUBARRAY = frozenset(LIST) | {"items"}  # items: the tuple form
_IN_SUBVALUES = frozenset(MAP) | frozenset(OLD_MAP)
# How deeply a schema may nest (JSON levels). Real-world schemas stay below 25; the meta-schema
# check and validation recurse per level, and past ~100 levels Python's recursion limit ends them.
MAX_SCHEMA_DEPTH = 64
# The schemas (by identity) that passed check_schema lately: the same object is checked once.
_CHECKED: dict[int, Any] = {}
REF_HINT = (
    'point every "$ref" at a definition inside the schema (e.g. "#/$defs/<name>" with a matching '
    '"$defs" entry) or fix its spelling; remote schemas are never fetched'
)


def unresolvable_ref(
    ref: str, where: str = "the schema", at: str | None = None, why: str | None = None
) -> InvalidSchema:
    """The InvalidSchema for a ``$ref`` that leads nowhere (also used when validation trips on one)."""
    place = f" (at {at})" if at else ""
    reason = f": {why}" if why else ""
    return InvalidSchema(f"{where} is not usable: $ref {ref!r}{place} does not resolve{reason}", hint=REF_HINT)


def _why(exc: Exception) -> str:
    from referencing.exceptions import InvalidAnchor, NoSuchAnchor, PointerToNowhere

    if isinstance(exc, PointerToNowhere):
        return f"nothing is defined at {exc.ref}"
    if isinstance(exc, NoSuchAnchor):
        return f"no $anchor {exc.anchor!r} is defined"
    if isinstance(exc, InvalidAnchor):
        return f"#{exc.anchor} is not a valid anchor"
    return "it names no resource inside the schema"


def check_refs(schema: dict[str, Any], where: str = "the schema") -> None:
    """Resolve every ``$ref``/``$dynamicRef`` the way the validator would; InvalidSchema for the first that fails.

    Resolution uses the `referencing` resolver with a registry that holds the schema and the
    official meta-schemas only, so a remote reference is reported here instead of being fetched
    (or failing mid-validation) later.
    """
    from jsonschema_specifications import REGISTRY as SPECIFICATIONS
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012, specification_with

    from vance_cli.schema.dialects import validator_class

    dialect = validator_class(schema).META_SCHEMA.get("$schema") or validator_class(schema).META_SCHEMA.get("$id")
    spec = specification_with(dialect, default=DRAFT202012)
    root = spec.create_resource(schema)
    # The specifications registry has no retrieve function: an unknown URI raises instead of going online.
    registry = SPECIFICATIONS.with_resource(uri=root.id() or "", resource=root).crawl()
    resolver = registry.resolver_with_root(root)

    def walk(node: Any, parts: tuple[str, ...], resolver: Any, depth: int) -> None:
        if not isinstance(node, dict) or depth > 200:
            return
        if parts and isinstance(spec.id_of(node), str) and not spec.id_of(node).startswith("#"):
            resolver = resolver.in_subresource(spec.create_resource(node))
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if not isinstance(ref, str):
                continue
            try:
                target = resolver.lookup(ref).contents
            except Unresolvable as exc:
                raise unresolvable_ref(ref, where, json_pointer((*parts, key), "the root"), _why(exc)) from None
            if not isinstance(target, (dict, bool)):
                raise unresolvable_ref(
                    ref,
                    where,
                    json_pointer((*parts, key), "the root"),
                    f"it points at a {type(target).__name__}, not a schema",
                )
        for key, value in node.items():
            if key in _IN_VALUE:
                walk(value, (*parts, key), resolver, depth + 1)
            elif key in _IN_SUBARRAY and isinstance(value, list):
                for i, sub in enumerate(value):
                    walk(sub, (*parts, key, str(i)), resolver, depth + 1)
            elif key == "items":
                walk(value, (*parts, key), resolver, depth + 1)
            elif key in _IN_SUBVALUES and isinstance(value, dict):
                for name, sub in value.items():
                    walk(sub, (*parts, key, str(name)), resolver, depth + 1)

    walk(schema, (), resolver, 0)


def check_schema(schema: Any, where: str = "the schema") -> dict[str, Any]:
    """Raise InvalidSchema unless ``schema`` is a JSON object that passes the meta-schema of the
    draft its ``$schema`` declares (none: 2020-12), is not nested absurdly deep, every ``$ref`` in
    it resolves inside it, and validating against it terminates. The same object is checked once."""
    from jsonschema.exceptions import best_match

    from vance_cli.schema.dialects import dialect_of, meta_validator, unknown_dialect, validator_class

    if not isinstance(schema, dict):
        raise InvalidSchema(
            f"{where} must be a JSON object (a JSON Schema), got {type(schema).__name__}",
            hint='pass a JSON Schema object such as {"type": "object", "properties": {...}}',
        )
    if _CHECKED.get(id(schema)) is schema:
        return schema
    depth = json_depth(schema)
    if depth > MAX_SCHEMA_DEPTH:
        raise InvalidSchema(
            f"{where} nests {depth} levels deep; at most {MAX_SCHEMA_DEPTH} are supported",
            hint='move nested parts into "$defs" and point at them with "$ref"',
        )
    unknown = unknown_dialect(schema)
    if unknown is not None:
        raise InvalidSchema(
            f"{where} declares an unknown JSON Schema draft: \"$schema\": {shorten(unknown, 200)!r}",
            hint='use a known draft (e.g. "https://json-schema.org/draft/2020-12/schema" or '
            '"http://json-schema.org/draft-07/schema#"), or leave "$schema" out for 2020-12',
        )
    cls = validator_class(schema)
    if cls.__name__ == "Draft3Validator":
        raise InvalidSchema(
            f"{where} declares Draft 3 (\"$schema\": {shorten(str(schema['$schema']), 200)!r}), which Vance does not read: "
            "its \"required\", \"type\" and \"extends\" mean other things than in later drafts",
            hint='write it in Draft 4 or later (e.g. "http://json-schema.org/draft-07/schema#"), or leave "$schema" out for 2020-12',
        )
    meta = meta_validator(cls)
    err = None if meta.is_valid(schema) else best_match(meta.iter_errors(schema))
    if err is not None:
        at = json_pointer(err.absolute_path, "the root")
        name = dialect_of(schema)
        declared = "" if "$schema" in schema else " (no $schema given)"
        raise InvalidSchema(
            f"{where} is not a valid JSON Schema ({name}{declared}): at {at}: {shorten(err.message, 300)}",
            hint='fix the schema, or declare the draft it is written in with "$schema" (e.g. "http://json-schema.org/draft-07/schema#")',
        )
    from vance_cli.schema.refs import in_place_cycle, prepare_schema

    # Resolving every ref is part of preparing the provider schema (cached for the plan); the
    # slower per-ref walk runs only to say which ref failed, or for $dynamicRef it does not cover.
    if prepare_schema(schema).unresolved or _has_dynamic_ref(schema):
        check_refs(schema, where)
    # A $ref loop that never descends into the value passes the meta-schema but makes every
    # validation recurse forever (found statically: probing could crash inside `referencing`).
    if in_place_cycle(schema) is not None:
        raise InvalidSchema(
            f"{where} refers to itself without descending into the value (a $ref loop)",
            hint='make every recursive "$ref" sit under properties or items',
        )
    if len(_CHECKED) >= 16:
        _CHECKED.pop(next(iter(_CHECKED)))
    _CHECKED[id(schema)] = schema
    return schema


def _has_dynamic_ref(schema: Any) -> bool:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$dynamicRef" in node or "$recursiveRef" in node:
                return True
            stack.extend(v for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, list):
            stack.extend(node)
    return False
