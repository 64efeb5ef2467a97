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
json_schema_utils counts them: a parameter is a schema under ``properties`` anywhere in the schema;
optional is not in that object's ``required``; a union is ``anyOf``/``oneOf`` or a ``type`` list).
Anything else is a 400, which would step the model down to a weaker format.

What litellm (``AnthropicConfig``) does with the schema decides the rest (review 15b):

- it picks the wire by the schema, not by ``strict``: with no open object, ``output_format``
  (Anthropic's JSON outputs, constrained, with the limits above), else a plain ``json_tool_call``
  tool (not constrained, no limits); so the limits hold for every plan that goes out closed, and a
  plan past them is sent with an open root (``Anthropic.tidy``), strict off;
- on the ``output_format`` path it sets ``additionalProperties: false`` on every object, and an
  object with ``properties`` and no ``additionalProperties`` is not open by its test: so a plan that
  is not strict sends every object the caller leaves open with ``additionalProperties: true``
  (``left_open_sent_open``; review 15c), and litellm sends it as its tool, unfiltered;
- it rewrites every ``$ref`` to ``/$defs/<last segment>`` (``"#"`` resolves to nothing, and on the
  tool path no ref keeps its ``#``), and on the ``output_format`` path inlines every definition,
  once per reference (leaving a recursive one dangling; a boolean definition crashes it): so the
  plan sends no ref (``inline_refs``), and the limits are counted on that inlined schema;
- a property named ``$ref`` makes its ref rewriting fail: sent as any object (strict off).
"""

from __future__ import annotations

import json
from typing import Any

from vance_cli.llm.output.merge import KEEP_ANNOTATIONS, Downgrade, ptr
from vance_cli.llm.output.walker import BASE_KEYWORDS, Family, NotStrict, enum_values_as_types, provider_nodes
from vance_cli.schema.nodes import LIST_KEYS, MAP_KEYS, ONE_KEYS, asserting, node_types
from vance_cli.schema.refs import def_of

MIN_ITEMS_MAX = 1  # minItems only 0 or 1
MAX_OPTIONAL_PARAMETERS = 24
MAX_UNION_PARAMETERS = 16
INLINED_MAX_CHARS = 2_000_000  # past this the schema sent would be unreasonably large (litellm stops at 10 MB)
INLINED_MAX_DEPTH = 64  # $refs inlined one inside another (as deep as a caller's schema may nest): a longer chain is sent as any value (or strict off)


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
    limits count them (see the module docstring; on the inlined schema, what Anthropic receives)."""
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


def _size(node: Any) -> int:
    return len(json.dumps(node, ensure_ascii=False, default=str))


def inline_refs(provider: dict[str, Any], notes: list[str], *, strict: bool = False,
                over: list[str] | None = None) -> dict[str, Any]:
    """``provider`` with no ``$ref`` and no ``$defs``: what litellm sends to Anthropic, made here.

    litellm rewrites every ``$ref`` of a response_format to ``/$defs/<last segment>``
    (``get_json_schema_from_pydantic_object``: ``"#"`` becomes ``/$defs/#``, and on the json_tool_call
    path no ``#`` is put back); on the ``output_format`` path it inlines every definition
    (``unpack_defs``, which takes no boolean definition) and drops ``$defs``, leaving a recursive
    ref dangling. So every ref is inlined here; a ref back into a definition being inlined (and
    ``"#"``) is sent as any value, a boolean schema as ``{}``, each with a downgrade line (checked
    locally). Past ``INLINED_MAX_CHARS`` the refs left are sent as any value too (one line, and
    their places appended to ``over``), or, ``strict``, NotStrict (a strict schema has no
    unconstrained node)."""
    defs = provider.get("$defs") if isinstance(provider.get("$defs"), dict) else {}
    body = {k: v for k, v in provider.items() if k != "$defs"}
    budget = [INLINED_MAX_CHARS]
    sizes: dict[str, int] = {}
    over = [] if over is None else over  # where a ref was left past the budget

    def note(where: str, why: str) -> None:
        line = Downgrade(where or "(root)", why, sent=True)
        if line not in notes:
            notes.append(line)

    def walk(node: Any, where: str, stack: tuple[str, ...]) -> Any:
        if node is True:
            return {}
        if node is False:
            note(where, "a false schema sent as any value (Anthropic takes no boolean schema, nor \"not\"; checked locally)")
            return {}
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = def_of(ref)
            if ref != "#" and name not in defs:
                return node  # (unresolvable: _fix_unresolvable sends it unconstrained)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if ref in stack:
                note(where, f"recursive $ref {ref} sent as any value (litellm cannot send a recursive schema to "
                     "Anthropic: it inlines $defs; checked locally)")
                target: Any = {}
            else:
                raw = body if ref == "#" else defs[name]
                if ref not in sizes:
                    sizes[ref] = _size(raw)
                budget[0] -= sizes[ref]
                if len(stack) > INLINED_MAX_DEPTH:
                    if strict:
                        raise NotStrict("(schema)", f"$refs inlined more than {INLINED_MAX_DEPTH} deep, as litellm "
                                        "would send them to Anthropic", limit=True)
                    note(where, f"$ref {ref} sent as any value (inlined more than {INLINED_MAX_DEPTH} deep, as "
                         "litellm would send it to Anthropic; checked locally)")
                    target = {}
                elif budget[0] < 0:
                    if strict:
                        raise NotStrict("(schema)", f"a schema that, with every definition inlined as litellm sends it "
                                        f"to Anthropic, would pass {INLINED_MAX_CHARS} characters", limit=True)
                    over.append(where or "(root)")
                    target = {}
                else:
                    target = walk(raw, where, stack + (ref,))
            rest = walk(rest, where, stack)
            if not rest:
                return target
            if not (asserting(rest)) and isinstance(target, dict):
                return {**target, **{k: v for k, v in rest.items() if k in KEEP_ANNOTATIONS}}
            return {**{k: v for k, v in rest.items() if k in KEEP_ANNOTATIONS}, "allOf": [target, {k: v for k, v in rest.items() if k not in KEEP_ANNOTATIONS}]}
        if isinstance(node.get("properties"), dict) and "$ref" in node["properties"]:
            node = {k: v for k, v in node.items() if k not in ("properties", "required", "additionalProperties")}
            note(where, 'properties removed: one is named "$ref", which litellm takes for a reference (it fails on '
                 "the request); sent as any object, checked locally")
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "additionalProperties" and isinstance(value, bool):
                out[key] = value
            elif key in ONE_KEYS:
                out[key] = walk(value, f"{where}/{key}", stack)
            elif key in LIST_KEYS and isinstance(value, list):
                out[key] = [walk(v, f"{where}/{key}/{i}", stack) for i, v in enumerate(value)]
            elif key in MAP_KEYS and isinstance(value, dict) and key != "$defs":
                out[key] = {k: walk(v, f"{where}/{key}/{k}", stack) for k, v in value.items()}
            else:
                out[key] = value
        return out

    out = walk(body, "", ("#",))
    if over:
        notes.append(Downgrade(over, f"{len(over)} $refs sent as any value (the schema with every definition inlined, "
                               f"as litellm sends it, would pass {INLINED_MAX_CHARS} characters; checked locally)",
                               text=f"{over[0]} and {len(over) - 1} more: $refs sent as any value (the schema "
                               f"with every definition inlined would pass {INLINED_MAX_CHARS} characters; checked locally)",
                               sent=True))
    return out


def left_open_sent_open(node: Any) -> Any:
    """``node`` with every object it leaves open (``properties`` or an object type, no
    ``additionalProperties``) sent with ``additionalProperties: true``: the same schema, said so
    that litellm reads it as open. Otherwise litellm finds no open object, sends the schema as
    ``output_format`` and closes every object there (``filter_anthropic_output_schema``), forbidding
    the keys the caller's schema allows. A strict plan has every object closed: nothing changes."""
    if isinstance(node, list):
        return [left_open_sent_open(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ONE_KEYS or key in LIST_KEYS:
            out[key] = left_open_sent_open(value)
        elif key in MAP_KEYS and isinstance(value, dict):
            out[key] = {k: left_open_sent_open(v) for k, v in value.items()}
        else:
            out[key] = value
    if "additionalProperties" not in out and (isinstance(out.get("properties"), dict) or "object" in node_types(out)):
        out["additionalProperties"] = True
    return out


def goes_out_closed(provider: Any) -> bool:
    """Whether litellm sends ``provider`` as Anthropic's ``output_format`` (constrained, with the
    limits) rather than as its json_tool_call tool: no open object in it, the way litellm's
    ``schema_has_open_object`` reads one (additionalProperties true or a schema, patternProperties,
    or an object type without properties and without ``additionalProperties: false``)."""
    for _, node in provider_nodes(provider):
        extra = node.get("additionalProperties")
        if extra is True or isinstance(extra, dict) or "patternProperties" in node:
            return False
        t = node.get("type")
        if (t == "object" or isinstance(t, list) and "object" in t) and "properties" not in node and extra is not False:
            return False
    return True


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
        """Strict: the request's parameter limits, counted on the schema Anthropic receives (every
        definition inlined, once per reference, as litellm sends it)."""
        for parts, node in provider_nodes(provider):
            if isinstance(node.get("properties"), dict) and "$ref" in node["properties"]:
                raise NotStrict(ptr(parts), 'a property named "$ref", which litellm takes for a reference '
                                "(it fails on the request; sent as any object)")
        provider = inline_refs(provider, notes, strict=True)
        problem = limits_passed(provider)
        if problem:
            more = " (listing more of them in `required` keeps strict)" if "optional" in problem else ""
            raise NotStrict("(schema)", problem + more, limit=True)
        return provider

    def tidy(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """Every plan: no ref (``inline_refs``), complex enums as their types, the objects left open
        said open (``left_open_sent_open``: none in a strict plan); a schema past the limits that
        litellm would still send as ``output_format`` (no open object: litellm picks the wire by the
        schema, not by ``strict``) goes out with an open root, as its json_tool_call tool, which has
        no such limits."""
        provider = enum_values_as_types(provider, notes, _simple, "anthropic's enum takes no objects or arrays")
        over: list[str] = []
        provider = left_open_sent_open(inline_refs(provider, notes, over=over))
        problem = limits_passed(provider)
        if not problem and over:  # (review 15d: a schema that large is a grammar too large to compile)
            problem = f"the schema with every definition inlined would pass {INLINED_MAX_CHARS} characters"
        if problem and goes_out_closed(provider):
            provider = {**provider, "additionalProperties": True}
            notes.append(Downgrade("(root)", f"additionalProperties set to true: {problem} (Anthropic's JSON "
                                   "outputs), so litellm is made to send it as a plain tool "
                                   "(json_tool_call, not constrained); checked locally", sent=True))
        return provider


def limits_passed(provider: dict[str, Any]) -> str:
    """What of Anthropic's per-request limits ``provider`` passes ("" if none)."""
    optional, unions = parameter_counts(provider)
    if optional > MAX_OPTIONAL_PARAMETERS:
        return (f"{optional} optional properties in the schema sent (definitions inlined), past Anthropic's limit "
                f"of {MAX_OPTIONAL_PARAMETERS} optional parameters per request")
    if unions > MAX_UNION_PARAMETERS:
        return (f"{unions} properties with union types (anyOf or a type list) in the schema sent (definitions "
                f"inlined), past Anthropic's limit of {MAX_UNION_PARAMETERS} union parameters per request")
    return ""


ANTHROPIC = Anthropic()
