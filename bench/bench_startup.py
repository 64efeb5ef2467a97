"""Start-up: `vance --help` against `python -c "import typer"` (goal ≤ 1.6×).

Run: python bench/bench_startup.py [--runs N]. Both commands run interleaved in fresh
interpreters, the median of each is compared; exit 1 when the ratio misses the goal.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL = 1.6


def timed(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    baseline_cmd = [sys.executable, "-c", "import typer"]
    vance_cmd = [sys.executable, "-m", "vance_cli", "--help"]
    timed(vance_cmd, env)  # warm the page cache and .pyc files
    timed(baseline_cmd, env)
    base, ours = [], []
    for _ in range(args.runs):
        base.append(timed(baseline_cmd, env))
        ours.append(timed(vance_cmd, env))
    b, v = statistics.median(base), statistics.median(ours)
    ratio = v / b
    print(f"import typer: {b * 1000:.0f} ms   vance --help: {v * 1000:.0f} ms   ratio {ratio:.2f} (goal ≤ {GOAL})")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
