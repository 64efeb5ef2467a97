"""The structure tool's user-facing errors (all exit 1 on the CLI, like every VanceError).

InvalidSchema lives with the other errors (``vance_cli.errors``) and is raised by the schema check
(``vance_cli.schema.check``); it is named here too because callers catch both.
"""

from __future__ import annotations

from vance_cli.errors import InvalidSchema, VanceError

__all__ = ["InvalidSchema", "SchemaNotFound"]


class SchemaNotFound(VanceError):
    """A named schema no scope holds."""
