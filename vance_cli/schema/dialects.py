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

from vance_cli.schema.keywords import LIST, MAP, OLD_ONE, ONE
from vance_cli.text import pointer_token

__all__ = ["DRAFT_NAMES", "dialect_of", "meta_validator", "upgrade", "validator_class"]

DRAFT_NAMES = {
    "Draft3Validator": "Draft 3",
    "Draft4Validator": "Draft 4",
    "Draft6Validator": "Draft 6",
    "Draft7Validator": "Draft 7",
    "Draft201909Validator": "Draft 2019-09",
    "Draft202012Validator": "Draft 2020-12",
}
_OLD = ("Draft3Validator", "Draft4Validator", "Draft6Validator", "Draft7Validator")

# Keywords whose values are subschemas (a union over the drafts), by shape; `items` apart, as it
# may be the tuple form.
_ONE = tuple(k for k in ONE if k != "items") + OLD_ONE
_LIST = LIST
_MAP = MAP
_KEYWORDS = frozenset(
    set(_ONE)
    | set(_LIST)
    | (set(_MAP) - {"$defs", "definitions"})
    | {
        "items",
        "dependencies",
        "type",
        "enum",
        "const",
        "required",
        "format",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "minContains",
        "maxContains",
        "title",
        "description",
        "default",
        "examples",
        "readOnly",
        "writeOnly",
        "deprecated",
        "$comment",
        "contentMediaType",
        "contentEncoding",
        "$anchor",
        "$dynamicAnchor",
        "$dynamicRef",
        "$recursiveRef",
    }
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


def unknown_dialect(schema: Any) -> str | None:
    """The declared ``$schema`` when no validator knows it (None: none declared, or a known one)."""
    from jsonschema.validators import validator_for

    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if not isinstance(declared, str):
        return None
    for candidate in (declared, _normal_uri(declared), _normal_uri(declared) + "#"):
        if validator_for({"$schema": candidate}, default=None) is not None:
            return None
    return declared


_META: dict[str, Any] = {}


def meta_validator(cls: Any) -> Any:
    """A validator of schemas written in ``cls``'s draft: the same rules as ``cls.check_schema``,
    fast on big schemas.

    ``is_valid`` runs the meta-schema compiled into plain Python checks (``_MetaCheck``: about
    a second for a 5.9 MB schema, against ~20 s in jsonschema, whose 2019-09/2020-12 meta-schemas
    resolve ``$recursiveRef``/``$dynamicRef`` through the dynamic scope at every subschema);
    ``iter_errors`` (for the message, once a schema failed) is jsonschema's, over the same
    meta-schema with its vocabularies merged into one schema whose recursion is a plain ``$ref``.
    tests/structure/test_schema_check.py holds both to jsonschema's own verdict.
    """
    name = cls.__name__
    check = _META.get(name)
    if check is None:
        check = _META[name] = _MetaCheck(cls)
    return check


class _MetaCheck:
    def __init__(self, cls: Any) -> None:
        from jsonschema import Draft202012Validator

        self.cls = cls
        if cls.__name__ in ("Draft201909Validator", "Draft202012Validator"):
            self.meta = _flatten_meta(cls.META_SCHEMA["$id"])
            self.errors_validator = Draft202012Validator(self.meta, format_checker=cls.FORMAT_CHECKER)
            ref_siblings = True
        else:
            self.meta = cls.META_SCHEMA
            self.errors_validator = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
            ref_siblings = False
        try:
            self.fast = _compile_meta(self.meta, cls, ref_siblings=ref_siblings)
        except _Unsupported:  # a meta-schema keyword the compiler does not know: jsonschema decides
            self.fast = self.errors_validator.is_valid

    def is_valid(self, schema: Any) -> bool:
        return self.fast(schema)

    def iter_errors(self, schema: Any):
        return self.errors_validator.iter_errors(schema)


class _Unsupported(Exception):
    pass


_ANNOTATION_WORDS = frozenset(
    {
        "$schema",
        "$id",
        "id",
        "title",
        "description",
        "default",
        "$comment",
        "deprecated",
        "definitions",
        "$defs",
        "examples",
    }
)


def _canonical(value: Any) -> Any:
    """A hashable key under which JSON-equal values (1 and 1.0, not 1 and true) coincide."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", float(value))
    if isinstance(value, (list, dict)):
        import json

        return ("j", json.dumps(value, sort_keys=True, default=str))
    return ("s", value) if isinstance(value, str) else ("0", None)


def _compile_meta(meta: dict[str, Any], cls: Any, *, ref_siblings: bool) -> Any:
    """``meta`` as one Python predicate, for the keywords meta-schemas use (draft 4 to 2020-12)."""
    import re

    integer_floats = cls.__name__ not in ("Draft3Validator", "Draft4Validator")
    formats = cls.FORMAT_CHECKER
    compiled: dict[str, Any] = {}

    def is_number(x: Any) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    type_tests = {
        "object": lambda x: isinstance(x, dict),
        "array": lambda x: isinstance(x, list),
        "string": lambda x: isinstance(x, str),
        "boolean": lambda x: isinstance(x, bool),
        "null": lambda x: x is None,
        "number": is_number,
        "integer": lambda x: is_number(x) and (isinstance(x, int) or (integer_floats and float(x).is_integer())),
    }

    def resolve(ref: str) -> Any:
        if ref == "#":
            return meta
        if not ref.startswith("#/"):
            raise _Unsupported(ref)
        node: Any = meta
        for part in ref[2:].split("/"):
            node = node[pointer_token(part)]
        return node

    def by_ref(ref: str) -> Any:
        if ref not in compiled:
            compiled[ref] = None  # recursion: looked up at call time
            compiled[ref] = build(resolve(ref))
        return lambda x: compiled[ref](x)

    def build(node: Any) -> Any:
        if node is True:
            return lambda x: True
        if node is False:
            return lambda x: False
        if not isinstance(node, dict):
            raise _Unsupported(repr(node))
        checks: list[Any] = []
        if "$ref" in node:
            checks.append(by_ref(node["$ref"]))
            if not ref_siblings:
                return checks[0]
        for key, value in node.items():
            if key == "$ref" or key in _ANNOTATION_WORDS:
                continue
            if key == "type":
                names = value if isinstance(value, list) else [value]
                tests = [type_tests[n] for n in names]
                checks.append(lambda x, t=tests: any(f(x) for f in t))
            elif key == "properties":
                subs = {k: build(v) for k, v in value.items()}
                checks.append(lambda x, s=subs: not isinstance(x, dict) or all(f(x[k]) for k, f in s.items() if k in x))
            elif key == "additionalProperties":
                declared = set(node.get("properties") or {})
                patterns = [re.compile(p) for p in (node.get("patternProperties") or {})]
                if patterns:
                    raise _Unsupported("additionalProperties with patternProperties")
                sub = build(value)
                checks.append(
                    lambda x, d=declared, f=sub: (
                        not isinstance(x, dict) or all(f(v) for k, v in x.items() if k not in d)
                    )
                )
            elif key == "propertyNames":
                sub = build(value)
                checks.append(lambda x, f=sub: not isinstance(x, dict) or all(f(k) for k in x))
            elif key == "items":
                if not isinstance(value, (dict, bool)):
                    raise _Unsupported("tuple items")
                sub = build(value)
                checks.append(lambda x, f=sub: not isinstance(x, list) or all(f(v) for v in x))
            elif key in ("allOf", "anyOf"):
                subs = [build(v) for v in value]
                if key == "allOf":
                    checks.append(lambda x, s=subs: all(f(x) for f in s))
                else:
                    checks.append(lambda x, s=subs: any(f(x) for f in s))
            elif key == "enum":
                allowed = {_canonical(v) for v in value}
                checks.append(lambda x, a=allowed: _canonical(x) in a)
            elif key == "minItems":
                checks.append(lambda x, n=value: not isinstance(x, list) or len(x) >= n)
            elif key == "uniqueItems":
                if value:
                    checks.append(lambda x: not isinstance(x, list) or len({_canonical(v) for v in x}) == len(x))
            elif key == "minimum":
                exclusive = node.get("exclusiveMinimum") is True  # draft 4
                checks.append(lambda x, n=value, e=exclusive: not is_number(x) or (x > n if e else x >= n))
            elif key == "exclusiveMinimum":
                if isinstance(value, bool):
                    continue  # draft 4: read with minimum
                checks.append(lambda x, n=value: not is_number(x) or x > n)
            elif key == "pattern":
                rx = re.compile(value)
                checks.append(lambda x, r=rx: not isinstance(x, str) or r.search(x) is not None)
            elif key == "format":
                checks.append(lambda x, f=value: formats.conforms(x, f))
            elif key == "dependencies":
                deps = {k: v for k, v in value.items()}
                if not all(isinstance(v, list) for v in deps.values()):
                    raise _Unsupported("schema dependencies")
                checks.append(
                    lambda x, d=deps: (
                        not isinstance(x, dict) or all(all(r in x for r in req) for k, req in d.items() if k in x)
                    )
                )
            else:
                raise _Unsupported(key)
        if len(checks) == 1:
            return checks[0]
        return lambda x, c=checks: all(f(x) for f in c)

    return build(meta)


def _flatten_meta(uri: str) -> dict[str, Any]:
    from jsonschema_specifications import REGISTRY

    main = REGISTRY[uri].contents
    base = uri.rsplit("/", 1)[0] + "/"
    parts = [main] + [REGISTRY[base + item["$ref"]].contents for item in main.get("allOf", [])]
    dropped = (
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$id",
        "$schema",
        "$vocabulary",
        "$comment",
        "default",
        "title",
        "deprecated",
    )

    def fix(node: Any) -> Any:
        if isinstance(node, list):
            return [fix(v) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$dynamicRef", "$recursiveRef") and value in ("#meta", "#"):
                out["$ref"] = "#"
            elif key == "$ref" and isinstance(value, str) and "#/$defs/" in value:
                out["$ref"] = "#/$defs/" + value.split("#/$defs/", 1)[1]
            elif key not in dropped:
                out[key] = fix(value)
        return out

    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for part in parts:
        for key, value in (part.get("properties") or {}).items():
            if key in properties:
                raise AssertionError(f"meta-schema keyword {key} defined twice")  # would need an allOf
            properties[key] = fix(value)
        for key, value in (part.get("$defs") or {}).items():
            fixed = fix(value)
            if defs.setdefault(key, fixed) != fixed:
                raise AssertionError(f"meta-schema definition {key} differs between vocabularies")
    return {"type": ["object", "boolean"], "properties": properties, "$defs": defs}


def dialect_of(schema: Any) -> str:
    """ "Draft 7", "Draft 2020-12", ...: the dialect name used in messages."""
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
            # A sibling $id (or draft-4 id) is ignored too: it does not change the base the $ref
            # resolves against (the suite's "$ref prevents a sibling $id from changing the base uri").
            node = {k: v for k, v in node.items() if k == "$ref" or (k not in _KEYWORDS and k not in ("$id", "id"))}
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
            elif key == "$ref" and isinstance(value, str) and value.startswith("#/"):
                out[key] = _upgraded_pointer(value, schema)
            else:
                out[key] = value
    return root


def _upgraded_pointer(ref: str, schema: dict[str, Any]) -> str:
    """A draft 4-7 JSON-pointer ref into the 2020-12 copy: through a tuple ``items`` it leads to
    ``prefixItems``, through ``additionalItems`` to ``items``, through ``dependencies`` to
    ``dependentSchemas``; a pointer that does not follow the schema is left as it is."""
    from urllib.parse import unquote

    from vance_cli.text import json_pointer, pointer_token

    node: Any = schema
    out: list[str] = []
    tokens = [pointer_token(unquote(t)) for t in ref[2:].split("/")]
    changed = False
    for token in tokens:
        if isinstance(node, dict):
            if token == "items" and isinstance(node.get("items"), list):
                out.append("prefixItems")
                changed = True
            elif token == "additionalItems" and isinstance(node.get("items"), list):
                out.append("items")
                changed = True
            elif token == "dependencies" and isinstance(node.get("dependencies"), dict):
                out.append("dependentSchemas")
                changed = True
            else:
                out.append(token)
            if token not in node:
                return ref
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            out.append(token)
            node = node[int(token)]
        else:
            return ref
    return "#" + json_pointer(out) if changed else ref
