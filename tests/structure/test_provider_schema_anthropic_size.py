"""Review 15d: a closed schema whose inlined form passes the 2,000,000-character bound sends deep
$refs as any value; it must not go out as litellm's output_format (Anthropic compiles that grammar
whatever `strict` says: "The compiled grammar is too large" 400s, e.g. TanStack/ai#682), but with
an open root, as litellm's json_tool_call tool, as past the 24-optional limit."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from tests.structure.strict_rules import anthropic_wire
from tests.structure.suite_driver import FAMILIES
from vance_cli.llm.output.plan import build_plan

N = 14
DEFS = {f"D{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/D{i+1}"}, "b": {"$ref": f"#/$defs/D{i+1}"}},
                  "required": ["a", "b"], "additionalProperties": False} for i in range(N)}
DEFS[f"D{N}"] = {"type": "integer"}
SCHEMA = {"$defs": DEFS, "$ref": "#/$defs/D0"}


@pytest.mark.parametrize("family", ["anthropic+strict", "anthropic"])
def test_a_schema_too_large_to_inline_does_not_go_out_as_output_format(family):
    plan = build_plan(SCHEMA, FAMILIES[family], name="x")
    assert any("2000000 characters" in d for d in plan.downgrades)  # the plan knows it is too large
    wire, sent = anthropic_wire(plan.schema)
    assert wire != "output_format", f"{len(str(sent))} characters compiled as Anthropic JSON outputs (strict={plan.strict})"
