"""Gemini (``responseJsonSchema``): the family's rules.

From Google's structured-output documentation for the Gemini API (PEERS.md "Provider strict-mode
limits"): string, number, integer, boolean, object, array, null; ``enum``, ``format`` (date-time,
date, time), ``minimum``, ``maximum``, ``items``, ``prefixItems``, ``minItems``, ``maxItems``,
``anyOf``, ``$ref``. Unsupported keywords are ignored silently by the API, so they are removed and
reported here instead.
"""

from __future__ import annotations

from vance_cli.llm.output.walker import BASE_KEYWORDS, Family


class Gemini(Family):
    name = "gemini"
    supported = BASE_KEYWORDS | {"format", "minimum", "maximum", "prefixItems", "minItems", "maxItems"}
    formats = frozenset({"date-time", "date", "time"})
    const_to_enum = True


GEMINI = Gemini()
