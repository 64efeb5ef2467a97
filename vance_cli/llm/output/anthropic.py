"""Anthropic (tool ``input_schema``, strict tools and JSON outputs): the family's rules.

From Anthropic's structured-outputs documentation ("JSON Schema limitations", shared by JSON
outputs and strict tool use; PEERS.md "Provider strict-mode limits"): supported are enums of
strings, numbers, bools or nulls ("Complex types within enums" are not), ``const``, ``anyOf``,
``allOf`` (not with ``$ref``), internal ``$ref``, ``required``, ``additionalProperties: false`` and
the string formats below. Not supported: recursion (strict mode), numeric constraints,
``minLength``/``maxLength``, array constraints beyond ``minItems`` 0 or 1, regexes with
backreferences, lookaround or word boundaries (``\\b``, ``\\B``). Strict tools: at most 24
optional parameters and 16 parameters with union types per request (litellm's
NATIVE_OUTPUT_MAX_OPTIONAL_PARAMETERS / NATIVE_OUTPUT_MAX_UNION_PARAMETERS, counted the way its
json_schema_utils counts them: a parameter is a schema under ``properties`` anywhere in the schema,
definitions once; optional is not in that object's ``required``; a union is ``anyOf``/``oneOf`` or
a ``type`` list). Anything else is a 400, which would step the model down to a weaker format.
"""

from __future__ import annotations

from typing import Any

from vance_cli.llm.output.walker import BASE_KEYWORDS, Family, NotStrict, enum_values_as_types, provider_nodes

MIN_ITEMS_MAX = 1  # minItems only 0 or 1
MAX_OPTIONAL_PARAMETERS = 24
MAX_UNION_PARAMETERS = 16


def regex_unsupported(pattern: str) -> str | None:
    """What Anthropic's regex support lacks in ``pattern`` (None: nothing): a backreference
    (``\\1``, ``\\k<name>``), a lookaround (``(?=``, ``(?!``, ``(?<=``, ``(?<!``) or a word boundary
    (``\\b``, ``\\B``). Escapes are read as escapes: ``\\\\b`` is a backslash and a ``b``."""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in "bB":
                return "word boundary"
            if nxt in "123456789" or (nxt == "k" and pattern[i + 2 : i + 3] == "<"):
                return "backreference"
            i += 2
            continue
        if c == "(" and (pattern[i + 1 : i + 3] in ("?=", "?!") or pattern[i + 1 : i + 4] in ("?<=", "?<!")):
            return "lookaround"
        i += 1
    return None


def _simple(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def parameter_counts(provider: Any) -> tuple[int, int]:
    """(optional parameters, parameters with union types) of a provider schema, as Anthropic's
    strict limits count them (see the module docstring)."""
    optional = unions = 0
    for _, node in provider_nodes(provider):
        props = node.get("properties")
        if not isinstance(props, dict):
            continue
        required = node.get("required") if isinstance(node.get("required"), list) else []
        optional += len(set(props) - set(required))
        for sub in props.values():
            if isinstance(sub, dict) and (
                isinstance(sub.get("anyOf"), list)
                or isinstance(sub.get("oneOf"), list)
                or (isinstance(sub.get("type"), list) and len(sub["type"]) > 1)
            ):
                unions += 1
    return optional, unions


class Anthropic(Family):
    name = "anthropic"
    supported = BASE_KEYWORDS | {"allOf", "const", "pattern", "format", "minItems"}
    formats = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"})
    recursion_ok = False

    def value_ok(self, key: str, value: Any) -> bool:
        if not super().value_ok(key, value):
            return False
        if key == "pattern":
            return isinstance(value, str) and regex_unsupported(value) is None
        if key == "minItems":
            return isinstance(value, int) and value <= MIN_ITEMS_MAX
        return True

    def strict_values_refused(self, node: dict[str, Any]) -> str:
        values = node["enum"] if isinstance(node.get("enum"), list) else [node["const"]] if "const" in node else []
        if all(_simple(v) for v in values):
            return ""
        return (
            "an enum or const holding objects or arrays, which Anthropic does not accept (\"complex types within "
            "enums\"; sent as their types, strict mode could not keep those objects closed)"
        )

    def finish(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """Strict: the request's parameter limits."""
        optional, unions = parameter_counts(provider)
        if optional > MAX_OPTIONAL_PARAMETERS:
            raise NotStrict(
                "(schema)",
                f"{optional} optional properties in the schema sent, past Anthropic's limit of "
                f"{MAX_OPTIONAL_PARAMETERS} optional parameters per strict request (listing more of them in "
                "`required` keeps strict)",
                limit=True,
            )
        if unions > MAX_UNION_PARAMETERS:
            raise NotStrict(
                "(schema)",
                f"{unions} properties with union types (anyOf or a type list) in the schema sent, past Anthropic's "
                f"limit of {MAX_UNION_PARAMETERS} union parameters per strict request",
                limit=True,
            )
        return provider

    def tidy(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        return enum_values_as_types(provider, notes, _simple, "anthropic's enum takes no objects or arrays")


ANTHROPIC = Anthropic()
