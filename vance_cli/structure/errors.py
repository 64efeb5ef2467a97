"""The structure tool's user-facing errors (all exit 1 on the CLI, like every VanceError)."""

from __future__ import annotations

from typing import Any

from vance_cli.errors import InvalidSchema, VanceError

__all__ = ["InvalidSchema", "SchemaNotFound", "check_refs", "check_schema", "unresolvable_ref"]

# The keywords whose values are subschemas in Draft 2020-12 (the same table the `referencing`
# library crawls), so the walk below visits exactly the places a validator would follow a $ref
# from, and never mistakes a "$ref" key inside `enum`, `const`, `default` or `examples` for one.
_IN_VALUE = frozenset(
    {
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_IN_SUBARRAY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_IN_SUBVALUES = frozenset({"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"})
REF_HINT = (
    'point every "$ref" at a definition inside the schema (e.g. "#/$defs/<name>" with a matching '
    '"$defs" entry) or fix its spelling; remote schemas are never fetched'
)


class SchemaNotFound(VanceError):
    """A named schema no scope holds."""


def _ptr(parts: tuple[str, ...]) -> str:
    items = [p.replace("~", "~0").replace("/", "~1") for p in parts]
    return "/" + "/".join(items) if items else "the root"


def unresolvable_ref(ref: str, where: str = "the schema", at: str | None = None, why: str | None = None) -> InvalidSchema:
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
    from referencing.jsonschema import DRAFT202012

    root = DRAFT202012.create_resource(schema)
    # The specifications registry has no retrieve function: an unknown URI raises instead of going online.
    registry = SPECIFICATIONS.with_resource(uri=root.id() or "", resource=root).crawl()
    resolver = registry.resolver_with_root(root)

    def walk(node: Any, parts: tuple[str, ...], resolver: Any, depth: int) -> None:
        if not isinstance(node, dict) or depth > 200:
            return
        if parts and isinstance(node.get("$id"), str):
            resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if not isinstance(ref, str):
                continue
            try:
                target = resolver.lookup(ref).contents
            except Unresolvable as exc:
                raise unresolvable_ref(ref, where, _ptr((*parts, key)), _why(exc)) from None
            if not isinstance(target, (dict, bool)):
                raise unresolvable_ref(ref, where, _ptr((*parts, key)), f"it points at a {type(target).__name__}, not a schema")
        for key, value in node.items():
            if key in _IN_VALUE:
                walk(value, (*parts, key), resolver, depth + 1)
            elif key in _IN_SUBARRAY and isinstance(value, list):
                for i, sub in enumerate(value):
                    walk(sub, (*parts, key, str(i)), resolver, depth + 1)
            elif key in _IN_SUBVALUES and isinstance(value, dict):
                for name, sub in value.items():
                    walk(sub, (*parts, key, str(name)), resolver, depth + 1)

    walk(schema, (), resolver, 0)


def check_schema(schema: Any, where: str = "the schema") -> dict[str, Any]:
    """Raise InvalidSchema unless ``schema`` is a JSON object that passes the 2020-12 meta-schema,
    every ``$ref`` in it resolves inside it, and validating against it terminates."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError, best_match

    if not isinstance(schema, dict):
        raise InvalidSchema(
            f"{where} must be a JSON object (a JSON Schema), got {type(schema).__name__}",
            hint='pass a JSON Schema object such as {"type": "object", "properties": {...}}',
        )
    try:
        Draft202012Validator.check_schema(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    except SchemaError:
        validator = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
        err = best_match(validator.iter_errors(schema))
        at = "/" + "/".join(str(p) for p in err.absolute_path) if err.absolute_path else "the root"
        raise InvalidSchema(
            f"{where} is not a valid JSON Schema (Draft 2020-12): at {at}: {err.message}",
            hint="fix the schema; https://json-schema.org/draft/2020-12 lists the keywords",
        ) from None
    check_refs(schema, where)
    # A root-level $ref loop passes the meta-schema but makes every validation recurse forever.
    from vance_cli.llm.reasons import make_validator

    probe = make_validator(schema)
    try:
        probe.is_valid(None)
        probe.is_valid({})
    except RecursionError:
        raise InvalidSchema(
            f"{where} refers to itself without descending into the value (a $ref loop)",
            hint='make every recursive "$ref" sit under properties or items',
        ) from None
    return schema
