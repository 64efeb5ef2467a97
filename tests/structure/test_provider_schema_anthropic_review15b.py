"""Issue 15, review 15b finding 1: Anthropic's limits on the schema Anthropic receives.

litellm (``AnthropicConfig``) picks the wire by the schema, not by ``strict``: a schema with no
open object goes out as ``output_format`` (Anthropic's JSON outputs: constrained decoding, the
documented limitations and the 24-optional / 16-union limits) with every ``$defs`` target inlined
(``native_output_format_schema`` → ``_defs_unpacked`` → ``unpack_defs``: one copy per reference, a
recursive one left dangling); a schema with an open object goes out as its json_tool_call tool
(no limits). So the anthropic plan sends no ref (inlined as litellm would), counts the limits on
that, and sends a schema past them with an open root (json_tool_call), strict or not.
"""

from __future__ import annotations

import pytest

from tests.structure.strict_rules import anthropic_problems, anthropic_wire
from tests.structure.suite_driver import FAMILIES
from vance_cli.llm.output.plan import build_plan

ITEM = {"type": "object", "properties": {f"o{i}": {"type": "string"} for i in range(5)}, "additionalProperties": False}
SIX_REFS = {
    "type": "object",
    "$defs": {"Item": ITEM},
    "properties": {f"p{j}": {"$ref": "#/$defs/Item"} for j in range(6)},
    "required": [f"p{j}" for j in range(6)],
    "additionalProperties": False,
}
UNION = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
SIX_UNION_REFS = {
    "type": "object",
    "$defs": {"U": {"type": "object", "properties": {f"u{i}": UNION for i in range(3)},
                    "required": [f"u{i}" for i in range(3)], "additionalProperties": False}},
    "properties": {f"p{j}": {"$ref": "#/$defs/U"} for j in range(6)},
    "required": [f"p{j}" for j in range(6)],
    "additionalProperties": False,
}
FLAT = {"type": "object", "properties": {f"o{i}": {"type": "string"} for i in range(30)}, "additionalProperties": False}
RECURSIVE = {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#"}},
             "required": ["v"], "additionalProperties": False}


def _counts(sent):
    from litellm.litellm_core_utils.prompt_templates.json_schema_utils import (
        schema_optional_property_count,
        schema_union_property_count,
    )

    return schema_optional_property_count(sent), schema_union_property_count(sent)


@pytest.mark.parametrize("family", ["anthropic", "anthropic+strict"])
@pytest.mark.parametrize("schema", [SIX_REFS, SIX_UNION_REFS, FLAT, RECURSIVE], ids=["refs", "union-refs", "flat", "recursive"])
def test_what_litellm_sends_as_output_format_keeps_anthropics_limits(schema, family):
    plan = build_plan(schema, FAMILIES[family], name="x")
    wire, sent = anthropic_wire(plan.schema)
    if wire == "output_format":
        optional, unions = _counts(sent)
        assert optional <= 24 and unions <= 16, (plan.strict, optional, unions)
    assert anthropic_problems(plan.schema, strict=plan.strict) == []


def test_strict_is_kept_only_within_the_limits_counted_inlined():
    plan = build_plan(SIX_REFS, FAMILIES["anthropic+strict"], name="x")
    assert not plan.strict and "30 optional properties" in plan.strict_off[1], plan.strict_off
    assert anthropic_wire(plan.schema)[0] == "tool"
    assert any("json_tool_call" in line for line in plan.downgrades), plan.downgrades
    plan = build_plan(SIX_UNION_REFS, FAMILIES["anthropic+strict"], name="x")
    assert not plan.strict and "18 properties with union types" in plan.strict_off[1], plan.strict_off


def test_within_the_limits_strict_stays_and_goes_out_as_output_format():
    schema = {**SIX_REFS, "properties": {f"p{j}": {"$ref": "#/$defs/Item"} for j in range(4)},
              "required": [f"p{j}" for j in range(4)]}
    plan = build_plan(schema, FAMILIES["anthropic+strict"], name="x")
    assert plan.strict
    wire, sent = anthropic_wire(plan.schema)
    assert wire == "output_format" and _counts(sent) == (20, 0)


def test_a_recursive_schema_is_not_sent_recursive():
    plan = build_plan(RECURSIVE, FAMILIES["anthropic+strict"], name="x")
    assert not plan.strict  # recursion
    wire, sent = anthropic_wire(plan.schema)
    assert "$ref" not in str(sent)
    assert any("recursive $ref" in line for line in plan.downgrades), plan.downgrades


def test_the_checker_sees_a_schema_past_the_limits_sent_closed():
    assert any("optional" in p for p in anthropic_problems(FLAT, strict=False))
    # (open: litellm's json_tool_call tool, no limits)
    assert not any("optional" in p for p in anthropic_problems({**FLAT, "additionalProperties": True}, strict=False))
    assert any("30 optional" in p for p in anthropic_problems(SIX_REFS, strict=True))  # counted inlined
    # the json_tool_call path: litellm rewrites "#/$defs/Item" to "/$defs/Item", which resolves to nothing
    assert any("/$defs/Item" in p for p in anthropic_problems({**SIX_REFS, "additionalProperties": True}))
    # output_format: a recursive definition dangles after litellm's unpack_defs
    assert any("$ref" in p or "recursive" in p for p in anthropic_problems(RECURSIVE))


def test_a_ref_bomb_is_inlined_within_a_bound_saying_so_once():
    n = 30  # each definition refers to the next twice: 2**30 copies inlined in full
    defs = {f"D{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}},
                      "required": ["a", "b"], "additionalProperties": False} for i in range(n)}
    defs[f"D{n}"] = {"type": "string"}
    schema = {"$defs": defs, "$ref": "#/$defs/D0"}
    import json

    from vance_cli.llm.output.anthropic import INLINED_MAX_CHARS

    plan = build_plan(schema, FAMILIES["anthropic+strict"], name="x")
    assert not plan.strict and "would pass" in plan.strict_off[1]  # strict has no unconstrained node
    assert len(json.dumps(plan.schema)) < 2 * INLINED_MAX_CHARS and "$ref" not in json.dumps(plan.schema)
    lines = [line for line in plan.downgrades if "would pass" in line and "additionalProperties" not in line]
    assert len(lines) == 2 and len(plan.downgrades) < 10, plan.downgrades[:5]  # strict-off + one line
    # and the root opened, so litellm sends it as a tool, not a grammar (review 15d)
    assert len([line for line in plan.downgrades if line.startswith("(root): additionalProperties set to true")]) == 1
