"""The structure tool's user-facing errors (all exit 1 on the CLI, like every VanceError).

InvalidSchema lives with the other errors (``vance_cli.errors``) and is raised by the schema check
(``vance_cli.schema.check``); it is named here too because callers catch both.
"""

from __future__ import annotations

from vance_cli.errors import InvalidSchema, VanceError

__all__ = ["InvalidSchema", "SchemaNotFound", "error_object"]


class SchemaNotFound(VanceError):
    """A named schema no scope holds."""


def error_object(message: str, hint: str | None, kind: str, code: int) -> dict:
    """The object `vance structure --json` prints for a failure, and `vance mcp serve`'s structure
    returns for one: ``{"status": "error", "errors": [...], "hint": ..., "errorType": ..., "exitCode": N}``."""
    return {"status": "error", "errors": [message], "hint": hint, "errorType": kind, "exitCode": code}
