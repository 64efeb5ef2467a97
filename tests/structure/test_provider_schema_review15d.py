"""Review 15d, finding 1: the way back kept one anyOf alternative's strip although the node around
it (its sibling keywords) rejects the result. Schema: root t is an integer; the first alternative
requires t, the second requires x and takes only null. The valid answer {"x": null} goes out under
strict as {"t": null, "x": null}; the first alternative alone accepted {"t": null} (x dropped),
then the root dropped t's null: {} came back, invalid (mangled, retried forever). fuzz5 seed 723
minimised."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.structure.suite_driver import FAMILIES, Case, Problems, run_case
from vance_cli.llm.output.plan import strip_injected_nulls
from vance_cli.schema.reasons import make_validator

SCHEMA = {
    "type": "object",
    "properties": {"t": {"type": "integer"}},
    "anyOf": [
        {"required": ["t"], "properties": {"x": {"type": "string"}}},
        {"properties": {"x": {"type": "null"}}, "required": ["x"]},
    ],
}


def test_the_way_back_keeps_a_required_null_of_the_alternative_that_holds():
    assert make_validator(SCHEMA).is_valid({"x": None})
    assert strip_injected_nulls({"t": None, "x": None}, SCHEMA) == {"x": None}


def test_the_first_alternative_still_strips_where_the_node_accepts_it():
    # t given: the first alternative holds with the root, x's injected null goes
    assert strip_injected_nulls({"t": 3, "x": None}, SCHEMA) == {"t": 3}


def test_the_suite_driver_sees_no_mangled_answer():
    p = Problems()
    run_case(Case("r15d", SCHEMA, [("x-null", {"x": None}, True)]), FAMILIES["openai"], p)
    assert not p.found.get("mangled"), p.found["mangled"]
