"""Local validation (the schema's declared draft, default 2020-12, formats asserted) and the
reason text of spec §4.1.

The validator always runs against the caller's exact schema, never the provider-side copy. Each
error becomes one line "/pointer: constraint in words (was <value>)"; the reason message the model
sees lists at most ``MAX_REASON_ERRORS`` of them and ends with the spec's closing sentence.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from vance_cli.text import json_pointer, shorten

REASON_HEADER = "The previous output did not conform to the schema:"
REASON_FOOTER = "Please correct these and try again. Do not change fields that were valid."
NOT_JSON_HEADER = "The previous output was not valid JSON:"
NOT_JSON_FOOTER = (
    "Reply with a single JSON value only: no prose, no Markdown code fences. Do not change fields that were valid."
)
MAX_REASON_ERRORS = 10
MAX_VALUE_CHARS = 60
MAX_ENUM_SHOWN = 12  # allowed values listed in an enum error; the rest are counted
MAX_WORDS_CHARS = 400  # a message taken from jsonschema as it is, cut to this length
MAX_VALUE_DEPTH = 100  # deeper values are refused unchecked (validation recurses per level)
ROOT = "(root)"  # the empty pointer in words, so a line never starts with ":"


def make_validator(schema: dict[str, Any] | bool) -> Any:
    """A validator for the draft ``schema`` declares in ``$schema`` (none: 2020-12) that asserts
    ``format`` (date-time needs rfc3339-validator).

    Its registry knows the schema and the official meta-schemas only: jsonschema's default would
    fetch an unknown remote ``$ref`` over the network; here it raises (see ``error_lines``).
    """
    from referencing import Registry

    from vance_cli.schema.dialects import validator_class

    cls = guarded_class(validator_class(schema))
    return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=Registry())


_GUARDED: dict[Any, Any] = {}


def guarded_class(cls: Any) -> Any:
    """``cls`` whose ``multipleOf`` reports a number too large to divide (10**400 against 1e308:
    OverflowError inside jsonschema) as a failed check instead of raising."""
    guarded = _GUARDED.get(cls)
    if guarded is None:
        from jsonschema.validators import extend

        original = cls.VALIDATORS["multipleOf"]

        def multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Any:
            try:
                yield from original(validator, divisor, instance, schema)
            except OverflowError:
                yield ValidationError(f"{shorten(repr(instance), 40)} is too large to check as a multiple of {divisor!r}")

        guarded = _GUARDED[cls] = extend(cls, {"multipleOf": multiple_of})
    return guarded


def show_value(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """The offending value as JSON, cut to ``limit`` characters so a huge blob never floods the prompt."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text, limit)


def _num(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else value


def _types(value: Any) -> str:
    names = value if isinstance(value, list) else [value]
    return " or ".join(str(n) for n in names)


def _child(path: str, key: str) -> str:
    return json_pointer([key]) if path == ROOT else path + json_pointer([key])


def _extra_keys(err: ValidationError) -> list[str]:
    """Keys that additionalProperties/unevaluatedProperties rejected, recomputed from the schema."""
    if not isinstance(err.instance, dict):
        return []
    schema = err.schema if isinstance(err.schema, dict) else {}
    declared = set(schema.get("properties", {}) or {})
    patterns = []
    for pat in schema.get("patternProperties", {}) or {}:
        try:
            patterns.append(re.compile(pat))
        except re.error:
            continue
    extras = [k for k in err.instance if k not in declared and not any(p.search(k) for p in patterns)]
    if not extras:  # unevaluatedProperties: jsonschema names them in the message
        extras = [k for k in err.instance if repr(k) in err.message]
    return extras


def describe(err: ValidationError) -> list[str]:
    """One or more lines for one validator error: "<pointer>: <constraint in words>[ (was <value>)]"."""
    where = json_pointer(err.absolute_path, ROOT)
    kw = err.validator
    val = err.validator_value
    was = f" (was {show_value(err.instance)})"

    if kw == "required":
        missing = [p for p in (val or []) if isinstance(err.instance, dict) and p not in err.instance]
        named = [p for p in missing if err.message.startswith(repr(p))] or missing[:1]
        return [f"{_child(where, str(p))}: required property is missing" for p in named]
    if kw in ("additionalProperties", "unevaluatedProperties"):
        extras = _extra_keys(err)
        if extras:
            return [f"{_child(where, k)}: property is not allowed by the schema" for k in extras]
        return [f"{where}: additional properties are not allowed"]
    if kw == "format":
        # Spec §4.1 shows format lines without the value; the model has its own output right above.
        return [f'{where}: value must match format "{val}"']

    words: str
    if kw == "type":
        words = f"value must be of type {_types(val)}"
    elif kw == "enum":
        words = "value must be one of " + enum_list(val if isinstance(val, list) else [])
    elif kw == "const":
        words = f"value must be exactly {show_value(val, 40)}"
    elif kw == "maximum":
        words = f"value must be ≤ {_num(val)}"
    elif kw == "minimum":
        words = f"value must be ≥ {_num(val)}"
    elif kw == "exclusiveMaximum":
        words = f"value must be < {_num(val)}"
    elif kw == "exclusiveMinimum":
        words = f"value must be > {_num(val)}"
    elif kw == "multipleOf":
        words = f"value must be a multiple of {_num(val)}"
    elif kw == "pattern":
        words = f'value must match pattern "{val}"'
    elif kw == "minLength":
        words = f"value must be at least {val} characters long"
    elif kw == "maxLength":
        words = f"value must be at most {val} characters long"
    elif kw == "minItems":
        words = f"array must contain at least {val} items"
    elif kw == "maxItems":
        words = f"array must contain at most {val} items"
    elif kw == "uniqueItems":
        words = "array items must be unique"
    elif kw == "minProperties":
        words = f"object must have at least {val} properties"
    elif kw == "maxProperties":
        words = f"object must have at most {val} properties"
    elif kw in ("contains", "minContains"):
        words = "array must contain an item that matches the item schema"
    elif kw == "maxContains":
        words = f"array must contain at most {val} matching items"
    elif kw == "dependentRequired":
        present = [k for k, deps in (val or {}).items() if isinstance(err.instance, dict) and k in err.instance]
        words = err.message if not present else f"when {present[0]!r} is present, {err.message}"
        return [f"{where}: {words}"]
    elif kw in ("anyOf", "oneOf"):
        if kw == "oneOf" and _matches_several(err):
            words = "value must match exactly one of the alternatives, but matches several"
        else:
            inner = best_match(err.context) if err.context else None
            words = "value must match one of the allowed alternatives"
            if inner is not None and inner.validator not in ("anyOf", "oneOf"):
                detail = describe(inner)[0].split(": ", 1)[-1]
                words += f" (closest: {detail.split(' (was ', 1)[0]})"
    elif kw == "not":
        words = "value must not match the excluded schema"
    elif kw is None:  # a `false` subschema
        words = "no value is allowed here"
    elif kw == "propertyNames":
        words = f"property name is not allowed: {err.message}"
    else:
        words = shorten(err.message, MAX_WORDS_CHARS)
    return [f"{where}: {words}{was}"]


def enum_list(values: list[Any], limit: int = MAX_ENUM_SHOWN) -> str:
    """The allowed values, at most ``limit`` of them, then how many were left out."""
    shown = ", ".join(show_value(v, 40) for v in values[:limit])
    if len(values) > limit:
        shown += f" … ({len(values) - limit} more left out)"
    return shown


def _matches_several(err: ValidationError) -> bool:
    return "is valid under each of" in err.message


def _line_key(line: str) -> tuple:
    """Sort lines by the data location they name (numeric array indexes in numeric order)."""
    where = line.split(": ", 1)[0]
    if where == ROOT:
        return ()
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in where.lstrip("/").split("/"))


def error_lines(schema: dict[str, Any] | bool, instance: Any, validator: Any = None) -> list[str]:
    """Every validation problem as a line, in data order; empty when the instance is valid."""
    from vance_cli.schema.check import json_depth

    depth = json_depth(instance)
    if depth > MAX_VALUE_DEPTH:
        return [f"(root): the value nests {depth} levels deep; at most {MAX_VALUE_DEPTH} levels are accepted"]
    v = validator or make_validator(schema)
    lines: list[str] = []
    from referencing.exceptions import Unresolvable

    try:
        errors = list(v.iter_errors(instance))
    except RecursionError:
        from vance_cli.errors import InvalidSchema

        raise InvalidSchema(
            "the schema refers to itself without descending into the value (a $ref loop), so nothing can be validated against it",
            hint='make every recursive "$ref" sit under properties or items',
        ) from None
    except Unresolvable as exc:
        # jsonschema wraps referencing's error in a frozen attrs exception that crashes callers
        # which set attributes on it (typer does); translate it where it enters.
        from vance_cli.schema.check import unresolvable_ref

        ref = str(getattr(exc, "ref", "?"))
        raise unresolvable_ref(
            "#" + ref if ref.startswith("/") else ref, why="it names nothing inside the schema"
        ) from None
    for err in errors:
        for line in describe(err):
            if line not in lines:
                lines.append(line)
    return sorted(lines, key=_line_key)


def reason_text(lines: list[str], max_errors: int = MAX_REASON_ERRORS) -> str:
    """The §4.1 correction message for the model (appended as a user message)."""
    shown = lines[:max_errors]
    body = "\n".join(f"- {line}" for line in shown)
    if len(lines) > max_errors:
        body += f"\n- … and {len(lines) - max_errors} more"
    return f"{REASON_HEADER}\n{body}\n\n{REASON_FOOTER}"


def not_json_text(problem: str) -> str:
    """The correction message when the reply could not be parsed at all."""
    return f"{NOT_JSON_HEADER}\n- {problem}\n\n{NOT_JSON_FOOTER}"
