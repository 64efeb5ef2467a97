"""JSON Schema dialects: which draft a schema declares, and its Draft 2020-12 equivalent.

A schema's ``$schema`` picks the validator class for the meta-schema check and for local
validation (``jsonschema.validators.validator_for``); none declared, or one jsonschema does not
know, means Draft 2020-12. ``http``/``https`` and a trailing ``#`` are not told apart, so
``https://json-schema.org/draft-07/schema`` is Draft 7 as users mean it.

The provider side speaks 2020-12 only, so ``upgrade`` rewrites the keywords whose meaning changed
between drafts into their 2020-12 form (same accepted instances):

- draft 4: boolean ``exclusiveMinimum``/``exclusiveMaximum`` become the numeric keywords, ``id``
  becomes ``$id``;
- drafts 4-7: keywords next to ``$ref`` are ignored by the draft, so they are dropped (``$defs``
  and ``definitions`` stay: refs may point into them); ``dependencies`` splits into
  ``dependentRequired`` (arrays) and ``dependentSchemas`` (schemas);
- drafts 4-2019-09: array-form ``items`` is ``prefixItems`` and ``additionalItems`` is ``items``
  (``additionalItems`` next to a single ``items`` schema means nothing and goes);
- draft 6/7: an ``$id`` of the form ``#name`` is an anchor, kept as ``$anchor``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DRAFT_NAMES", "dialect_of", "upgrade", "validator_class"]

DRAFT_NAMES = {
    "Draft3Validator": "Draft 3",
    "Draft4Validator": "Draft 4",
    "Draft6Validator": "Draft 6",
    "Draft7Validator": "Draft 7",
    "Draft201909Validator": "Draft 2019-09",
    "Draft202012Validator": "Draft 2020-12",
}
_OLD = ("Draft3Validator", "Draft4Validator", "Draft6Validator", "Draft7Validator")

# Keywords whose values are subschemas (a union over the drafts), by shape.
_ONE = (
    "additionalProperties", "contains", "contentSchema", "else", "if", "not", "propertyNames",
    "then", "unevaluatedItems", "unevaluatedProperties", "additionalItems",
)
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("$defs", "definitions", "dependentSchemas", "patternProperties", "properties")
_KEYWORDS = frozenset(
    set(_ONE) | set(_LIST) | (set(_MAP) - {"$defs", "definitions"})
    | {"items", "dependencies", "type", "enum", "const", "required", "format", "pattern", "minimum", "maximum",
       "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems",
       "uniqueItems", "minProperties", "maxProperties", "dependentRequired", "minContains", "maxContains",
       "title", "description", "default", "examples", "readOnly", "writeOnly", "deprecated", "$comment",
       "contentMediaType", "contentEncoding", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef"}
)


def _normal_uri(uri: str) -> str:
    uri = uri.strip().rstrip("#")
    if uri.startswith("https://json-schema.org/"):
        uri = "http://" + uri[len("https://") :]
    return uri


def validator_class(schema: Any) -> Any:
    """The jsonschema validator class for ``schema``'s declared ``$schema`` (default 2020-12)."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if not isinstance(declared, str):
        return Draft202012Validator
    for candidate in (declared, _normal_uri(declared), _normal_uri(declared) + "#"):
        cls = validator_for({"$schema": candidate}, default=None)
        if cls is not None:
            return cls
    return Draft202012Validator


def dialect_of(schema: Any) -> str:
    """"Draft 7", "Draft 2020-12", ...: the dialect name used in messages."""
    return DRAFT_NAMES.get(validator_class(schema).__name__, "Draft 2020-12")


def upgrade(schema: Any) -> Any:
    """A new schema with ``schema``'s meaning in Draft 2020-12 form (the input is not modified)."""
    name = validator_class(schema).__name__
    if name == "Draft202012Validator":
        return schema
    old = name in _OLD
    draft4 = name in ("Draft3Validator", "Draft4Validator")

    # Iterative copy: a deep schema never meets the recursion limit here.
    root: dict[str, Any] | Any = {} if isinstance(schema, dict) else schema
    if not isinstance(schema, dict):
        return schema
    stack: list[tuple[dict[str, Any], dict[str, Any]]] = [(schema, root)]
    while stack:
        src, out = stack.pop()

        def sub(value: Any) -> Any:
            if isinstance(value, dict):
                fresh: dict[str, Any] = {}
                stack.append((value, fresh))
                return fresh
            return value

        node = src
        if old and "$ref" in node:
            # Drafts 4-7 ignore every keyword beside $ref. Other members stay: a JSON pointer may
            # still lead into them (definitions, "components", ...), and 2020-12 ignores them too.
            node = {k: v for k, v in node.items() if k == "$ref" or k not in _KEYWORDS}
        for key, value in node.items():
            if key in _ONE:
                if key == "additionalItems":
                    if isinstance(node.get("items"), list):
                        out["items"] = sub(value)
                    continue
                out[key] = sub(value)
            elif key in _LIST:
                out[key] = [sub(v) for v in value] if isinstance(value, list) else value
            elif key in _MAP:
                out[key] = {k: sub(v) for k, v in value.items()} if isinstance(value, dict) else value
            elif key == "items":
                if isinstance(value, list):
                    out["prefixItems"] = [sub(v) for v in value]
                else:
                    out.setdefault("items", sub(value))
            elif key == "dependencies" and isinstance(value, dict):
                required = {k: v for k, v in value.items() if isinstance(v, list)}
                schemas = {k: sub(v) for k, v in value.items() if not isinstance(v, list)}
                if required:
                    out["dependentRequired"] = required
                if schemas:
                    out["dependentSchemas"] = schemas
            elif draft4 and key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                if value and isinstance(node.get(bound), (int, float)):
                    out[key] = node[bound]
            elif draft4 and key in ("minimum", "maximum") and node.get("exclusive" + key.title()) is True:
                continue
            elif draft4 and key == "id" and isinstance(value, str):
                if value.startswith("#"):
                    out["$anchor"] = value[1:]
                else:
                    out["$id"] = value
            elif old and key == "$id" and isinstance(value, str) and value.startswith("#"):
                out["$anchor"] = value[1:]
            elif key == "$schema":
                continue  # the copy is 2020-12 now
            else:
                out[key] = value
    return root
