"""Gemini (``responseJsonSchema``): the family's rules.

From Google's structured-output documentation for the Gemini API (PEERS.md "Provider strict-mode
limits"): string, number, integer, boolean, object, array, null; ``enum``, ``format`` (date-time,
date, time), ``minimum``, ``maximum``, ``items``, ``prefixItems``, ``minItems``, ``maxItems``,
``anyOf``, ``$ref``. Unsupported keywords are ignored silently by the API, so they are removed and
reported here instead.
"""

from __future__ import annotations

from typing import Any

from vance_cli.llm.output.walker import BASE_KEYWORDS, Family, enum_values_as_types


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


class Gemini(Family):
    name = "gemini"
    supported = BASE_KEYWORDS | {"format", "minimum", "maximum", "prefixItems", "minItems", "maxItems"}
    formats = frozenset({"date-time", "date", "time"})
    const_to_enum = True

    def tidy(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """Gemini's enum holds strings (and numbers): other values are sent as their types
        (walker.enum_values_as_types: a superset, the exact values checked locally)."""
        return enum_values_as_types(provider, notes, _scalar, "gemini's enum takes strings and numbers")


GEMINI = Gemini()
