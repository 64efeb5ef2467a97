"""Benchmark: what converting the JSON Schema Test Suite's schemas costs (issue 15).

Every schema of the vendored suite (tests/structure/jsts: draft2020-12 and draft7), for the seven
capability sets of tests/structure/suite_driver.py (each family's defaults and the strict
override), with and without the ``_need`` escape: ``build_plan`` only (the schema check is done
once per schema beforehand, as a structure call does). Baseline in the same run: jsonschema's own
``check_schema`` of the same schemas, once per conversion. Goal: all conversions in at most 5 CPU
seconds. Exit 1 when missed.

Run from the repository root:

    .venv/bin/python bench/bench_suite.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

GOAL_SECONDS = 5.0


def main() -> int:
    from jsonschema.validators import validator_for

    from tests.structure.suite_driver import FAMILIES, cases, suite_files
    from vance_cli.errors import InvalidSchema
    from vance_cli.llm.output.plan import build_plan
    from vance_cli.schema.check import check_schema

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    schemas = []
    for path in suite_files():
        for case in cases(path):
            schema = case.schema if isinstance(case.schema, dict) else {"allOf": [case.schema]}
            try:
                check_schema(schema)
            except InvalidSchema:
                continue
            schemas.append(schema)

    def convert() -> int:
        n = 0
        for schema in schemas:
            for caps in FAMILIES.values():
                for need in (False, True):
                    build_plan(schema, caps, allow_need=need, name="bench")
                    n += 1
        return n

    def baseline() -> None:
        for schema in schemas:
            cls = validator_for(schema)
            for _ in range(len(FAMILIES) * 2):
                cls.check_schema(schema)

    ours, base = [], []
    count = 0
    for _ in range(args.runs):
        t = time.process_time()
        count = convert()
        ours.append(time.process_time() - t)
        t = time.process_time()
        baseline()
        base.append(time.process_time() - t)
    o, b = statistics.median(ours), statistics.median(base)
    print(f"{len(schemas)} schemas, {count} conversions: {o:.2f} s CPU ({1000 * o / count:.2f} ms each)")
    print(f"baseline, jsonschema check_schema as often: {b:.2f} s; ratio {o / b:.2f}")
    ok = o <= GOAL_SECONDS
    print(f"goal: at most {GOAL_SECONDS:.0f} s {'✓' if ok else '✗'}")
    ok = chains(args.runs) and ok
    ok = long_chain(args.runs) and ok
    return 0 if ok else 1


def chains(runs: int) -> bool:
    """Chains of $ref with a sibling at 50, 100 and 200 definitions (gemini): the growth per
    doubling (the review measured ~x8 for minProperties, cubic). Goal: at most x3 for a sibling the
    family drops (minProperties), which the walk now leaves beside the ref instead of inlining."""
    from tests.structure.instances import ref_chain
    from tests.structure.suite_driver import FAMILIES
    from vance_cli.llm.output.plan import build_plan

    caps = FAMILIES["gemini"]
    ok = True
    for beside in ({"minProperties": 1}, {"required": ["v"]}):
        times = []
        for n in (50, 100, 200):
            schema = ref_chain(n, beside)
            took = []
            for _ in range(runs):
                t = time.process_time()
                build_plan(schema, caps)
                took.append(time.process_time() - t)
            times.append(statistics.median(took))
        growth = max(times[1] / max(times[0], 1e-4), times[2] / max(times[1], 1e-4))
        goal = "minProperties" in beside
        if goal:
            ok = ok and growth <= 3
        shown = " / ".join(f"{t * 1000:.1f} ms" for t in times)
        mark = ("✓" if growth <= 3 else "✗") if goal else "(no goal)"
        print(f"$ref chain with {next(iter(beside))} beside, 50/100/200 defs: {shown}; growth per doubling x{growth:.1f} {mark}")
    return ok


LONG_CHAIN = 400
LONG_CHAIN_GOAL = 3.0  # at most this many times jsonschema's check_schema of the same schema


def long_chain(runs: int) -> bool:
    """A 400-long chain of $ref with a sibling, for OpenAI (strict wanted: the strict walk, its
    retry without inlined annotations, then the relaxed walk). Baseline in the same run:
    jsonschema's ``check_schema`` of the same schema. Before the fix each definition was walked on
    its own too, inlining the rest of the chain again (cubic: >30 s at 400)."""
    from jsonschema.validators import validator_for

    from tests.structure.instances import ref_chain
    from tests.structure.suite_driver import FAMILIES
    from vance_cli.llm.output.plan import build_plan

    caps = FAMILIES["openai"]
    ok = True
    for beside in ({"minProperties": 1}, {"description": "next"}):
        schema = ref_chain(LONG_CHAIN, beside)
        cls = validator_for(schema)
        ours, base = [], []
        for _ in range(runs):
            t = time.process_time()
            build_plan(schema, caps)
            ours.append(time.process_time() - t)
            t = time.process_time()
            cls.check_schema(schema)
            base.append(time.process_time() - t)
        o, b = statistics.median(ours), statistics.median(base)
        ratio = o / max(b, 1e-6)
        ok = ok and ratio <= LONG_CHAIN_GOAL
        mark = "✓" if ratio <= LONG_CHAIN_GOAL else "✗"
        print(
            f"$ref chain of {LONG_CHAIN} with {next(iter(beside))} beside (openai): {o * 1000:.0f} ms; "
            f"check_schema {b * 1000:.0f} ms; ratio x{ratio:.1f} (goal ≤ x{LONG_CHAIN_GOAL:.0f}) {mark}"
        )
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
