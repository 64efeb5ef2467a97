"""Benjy at scale: wall time and controller tokens per item for 10, 100 and 500 items.

Run: python bench/bench_benjy.py [--sizes 10,100,500]. One process, a scripted stateless model
(tests/engines/benjy_brain.py: interpret returns N items, each worker writes one file and
responds, evaluate passes, reflect says yes), the real engine, scheduler, workers and atomic
saves. The model reports its prompt size as tokens (characters / 4), so the controller tokens
show whether the digest grows with the run. Chain per item: DO (a worker process) → EVALUATE →
CLOSE.

Goal: per-item cost stays flat — per-item CPU time and controller tokens at the largest size
within 1.5× of the smallest. Exit 1 when missed. Wall time is printed too; on a shared machine it
is dominated by fsync latency (9 durable saves per item: one of Benjy's, the worker's and the
delivery's), which drifts with the disk's load, so the small sizes run before and after the large
ones and their median is used.

What still grows (issue 20): Benjy's one save per item writes the whole process file, whose items
(all of them exist from the interpret step) and todos grow with the run (~2 ms at 500 items), and
the workspace fingerprint stats every file once per item (the bench's workers add a file each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
GOAL = 1.5

RECIPE = """\
name: bench-benjy
engine: benjy
params:
  doRecipe: benjy-do-coding
  features:
    interpret: { recipe: benjy-interpret }
    route: { recipe: benjy-route }
    evaluate: { recipe: benjy-evaluate }
    reflect: { recipe: benjy-reflect }
  maxInitialItems: 0
  maxStagnation: 50
"""


def run_size(items: int) -> dict:
    from tests.engines.benjy_brain import Brain
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.engines.benjy.state import load_state
    from vance_cli.llm.scripted import FunctionModel
    from vance_cli.runtime.benjy_service import BenjyService
    from vance_cli.runtime.runner import Runtime

    root = Path(tempfile.mkdtemp(prefix="vance-bench-benjy-"))
    (root / "home" / "recipes").mkdir(parents=True)
    (root / "home" / "recipes" / "bench-benjy.yaml").write_text(RECIPE)
    (root / "ws").mkdir()
    brain = Brain(items=items)

    def fn(request):
        reply = brain(request)
        chars = sum(len(m.content or "") for m in request.messages)
        reply["usage"] = {"prompt_tokens": chars // 4, "completion_tokens": len(reply.get("text") or "") // 4}
        return reply

    model = FunctionModel(fn)
    scopes = Scopes.discover(cwd=root, env={"VANCE_HOME": str(root / "home")})
    rt = Runtime(scopes, Settings.load(scopes, env={"VANCE_MODEL": "fn"}), model_factory=lambda m, s: model)
    svc = BenjyService(rt)
    process = svc.start("write the item files", recipe="bench-benjy", workspace=root / "ws").process  # held until run
    start, cpu = time.perf_counter(), time.process_time()
    result = asyncio.run(svc.run(process.id))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    state = load_state(result.process)
    assert result.process.status.value == "DONE", result.process.status_reason
    assert sum(1 for i in state.items if i.status == "done") == items
    evaluate_prompts = [len(r.messages[-1].content or "") for r in model.requests if not r.tools and "EVALUATE stage" in (r.messages[0].content or "")]
    size = rt.store.path(process.id).stat().st_size
    return {
        "items": items,
        "wall_s": wall,
        "ms_per_item": 1000 * wall / items,
        "cpu_ms_per_item": 1000 * cpu / items,
        "controller_tokens": state.counters.controllerTokens,
        "controller_tokens_per_item": state.counters.controllerTokens / items,
        "max_evaluate_prompt_chars": max(evaluate_prompts),
        "state_file_kb": size / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,500")
    args = parser.parse_args()
    os.environ.setdefault("VANCE_ALLOW_MODEL_REQUESTS", "0")
    run_size(3)  # warm-up: imports and first-use costs are not per-item costs
    sizes = [int(x) for x in args.sizes.split(",")]
    runs: dict[int, list[dict]] = {n: [] for n in sizes}
    small = [n for n in sizes if n < 100]
    for n in small:
        runs[n].append(run_size(n))
    for n in sizes:
        if n not in small:
            runs[n].append(run_size(n))
    for n in small:  # again after the large runs: the disk's load drifts
        runs[n] += [run_size(n), run_size(n)]

    def median(rs: list[dict]) -> dict:
        return sorted(rs, key=lambda r: r["cpu_ms_per_item"])[len(rs) // 2]

    rows = [median(runs[n]) for n in sizes]
    print(f"{'items':>6} {'wall s':>8} {'wall ms/item':>13} {'cpu ms/item':>12} {'ctrl tok/item':>14} {'eval prompt':>12} {'file KB':>8}")
    for r in rows:
        print(f"{r['items']:>6} {r['wall_s']:>8.2f} {r['ms_per_item']:>13.1f} {r['cpu_ms_per_item']:>12.1f} "
              f"{r['controller_tokens_per_item']:>14.1f} {r['max_evaluate_prompt_chars']:>12} {r['state_file_kb']:>8.0f}")
    first, last = rows[0], rows[-1]
    cpu_ratio = last["cpu_ms_per_item"] / first["cpu_ms_per_item"]
    wall_ratio = last["ms_per_item"] / first["ms_per_item"]
    token_ratio = last["controller_tokens_per_item"] / first["controller_tokens_per_item"]
    print(json.dumps({"cpu_per_item_ratio": round(cpu_ratio, 2), "wall_per_item_ratio": round(wall_ratio, 2),
                      "controller_tokens_per_item_ratio": round(token_ratio, 2), "goal": GOAL}))
    ok = cpu_ratio <= GOAL and token_ratio <= GOAL
    print("goal met" if ok else "goal missed: per-item cost grows with the run")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
