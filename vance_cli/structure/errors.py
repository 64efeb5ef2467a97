"""The structure tool's user-facing errors (all exit 1 on the CLI, like every VanceError)."""

from __future__ import annotations

from typing import Any

from vance_cli.errors import InvalidSchema, VanceError

__all__ = ["InvalidSchema", "SchemaNotFound", "check_schema"]


class SchemaNotFound(VanceError):
    """A named schema no scope holds."""


def check_schema(schema: Any, where: str = "the schema") -> dict[str, Any]:
    """Raise InvalidSchema unless ``schema`` is a JSON object that passes the 2020-12 meta-schema."""
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
    # A root-level $ref loop passes the meta-schema but makes every validation recurse forever.
    probe = Draft202012Validator(schema)
    try:
        probe.is_valid(None)
        probe.is_valid({})
    except RecursionError:
        raise InvalidSchema(
            f"{where} refers to itself without descending into the value (a $ref loop)",
            hint='make every recursive "$ref" sit under properties or items',
        ) from None
    except Exception:  # noqa: BLE001, S110 - unresolvable refs and the like surface later, with context
        pass
    return schema
