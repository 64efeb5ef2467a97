"""Gemini (``responseJsonSchema``): the family's rules.

From Google's structured-output documentation for the Gemini API (PEERS.md "Provider strict-mode
limits"): string, number, integer, boolean, object, array, null; ``enum``, ``format`` (date-time,
date, time), ``minimum``, ``maximum``, ``items``, ``prefixItems``, ``minItems``, ``maxItems``,
``anyOf``, ``$ref``. Unsupported keywords are ignored silently by the API, so they are removed and
reported here instead.
"""

from __future__ import annotations

import json
from typing import Any

from vance_cli.llm.output.merge import KEEP_ANNOTATIONS, Downgrade, ptr
from vance_cli.llm.output.walker import BASE_KEYWORDS, Family, provider_nodes
from vance_cli.schema.nodes import one_or_list, types_of_values


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


class Gemini(Family):
    name = "gemini"
    supported = BASE_KEYWORDS | {"format", "minimum", "maximum", "prefixItems", "minItems", "maxItems"}
    formats = frozenset({"date-time", "date", "time"})
    const_to_enum = True

    def tidy(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """Gemini's enum holds strings (and numbers): other values are sent as their types.

        An enum of null, booleans, arrays or objects (a const becomes one, and the envelope adds
        null) turns into an ``anyOf`` of the string/number enum and one ``{"type": t}`` per other
        value type: a superset, the exact values checked locally."""
        odd_nodes = [(parts, n) for parts, n in provider_nodes(provider) if _odd_enum(n)]
        if not odd_nodes:
            return provider
        replace: dict[int, dict[str, Any]] = {}
        for parts, node in odd_nodes:
            values = node["enum"]
            keep = [v for v in values if _scalar(v)]
            other = [v for v in values if not _scalar(v)]
            base = {k: v for k, v in node.items() if k not in ("enum", "type")}
            annotations = {k: v for k, v in base.items() if k in KEEP_ANNOTATIONS}
            alts: list[dict[str, Any]] = []
            if keep:
                alts.append({**base, "type": one_or_list(types_of_values(keep)), "enum": keep})
            for t in types_of_values(other):
                alts.append({**base, "type": t} if t in ("object", "array") else {"type": t})
            if len(alts) == 1:
                new = alts[0]
            else:
                new = {**annotations, "anyOf": [{k: v for k, v in a.items() if k not in KEEP_ANNOTATIONS} for a in alts]}
            replace[id(node)] = new
            shown = json.dumps(other, ensure_ascii=False)[:80]
            notes.append(
                Downgrade(
                    ptr(parts),
                    f"enum values {shown} sent as their types (gemini's enum takes strings and numbers; checked locally)",
                    sent=True,
                )
            )
        return _replaced(provider, replace)


def _odd_enum(node: dict[str, Any]) -> bool:
    values = node.get("enum")
    return isinstance(values, list) and any(not _scalar(v) for v in values)


def _replaced(node: Any, replace: dict[int, dict[str, Any]]) -> Any:
    if isinstance(node, dict):
        if id(node) in replace:
            node = replace[id(node)]
        return {k: (v if k in ("enum", "const") else _replaced(v, replace)) for k, v in node.items()}
    if isinstance(node, list):
        return [_replaced(v, replace) for v in node]
    return node


GEMINI = Gemini()
