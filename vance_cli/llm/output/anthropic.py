"""Anthropic (tool ``input_schema``, strict tools and JSON outputs): the family's rules.

From Anthropic's structured-outputs documentation ("JSON Schema limitations"; PEERS.md "Provider
strict-mode limits"): supported are enums of primitives, ``const``, ``anyOf``, ``allOf`` (not with
``$ref``), internal ``$ref``, ``required``, ``additionalProperties: false`` and the string formats
below. Not supported: recursion (strict mode), numeric constraints, ``minLength``/``maxLength``,
array constraints beyond ``minItems`` 0 or 1, regexes with backreferences or lookaround.
"""

from __future__ import annotations

import re
from typing import Any

from vance_cli.llm.output.walker import BASE_KEYWORDS, Family

_LOOKAROUND = re.compile(r"\(\?<?[=!]|\\[1-9]|\\k<")
MIN_ITEMS_MAX = 1  # minItems only 0 or 1


class Anthropic(Family):
    name = "anthropic"
    supported = BASE_KEYWORDS | {"allOf", "const", "pattern", "format", "minItems"}
    formats = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"})
    recursion_ok = False

    def value_ok(self, key: str, value: Any) -> bool:
        if not super().value_ok(key, value):
            return False
        if key == "pattern":
            return isinstance(value, str) and not _LOOKAROUND.search(value)
        if key == "minItems":
            return isinstance(value, int) and value <= MIN_ITEMS_MAX
        return True


ANTHROPIC = Anthropic()
