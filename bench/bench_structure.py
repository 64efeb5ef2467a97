"""Benchmark: one-shot `vance structure` vs. the same extraction with instructor over openai.

What it measures: the wall time of a fresh process doing one structured extraction with one
validation-reason loop (the first reply breaks a constraint, the second is valid), against a local
OpenAI-compatible fake server (tests/fakeserver.py) started by this script. Both sides make exactly
two HTTP calls per run (checked), get the same replies, and run as subprocesses, so start-up cost
(imports) counts, as it does for a user. Runs are interleaved (vance, instructor, instructor, vance,
...) after one untimed warm-up each, so disk caches and CPU noise hit both sides alike.

Run it from the repository root with the dev venv (instructor and openai are the "bench" extra)::

    /work/venv/bin/python bench/bench_structure.py            # 7 timed runs each
    /work/venv/bin/python bench/bench_structure.py -n 15      # more runs

It prints both medians and the ratio, and exits 1 when Vance's median is not below instructor's.
No network access beyond 127.0.0.1; no API keys needed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fakeserver import FakeOpenAIServer

PROMPT = "Mike broke the build this morning; it is urgent, top priority."
SCHEMA = {
    "type": "object",
    "properties": {
        "actor": {"type": "string"},
        "action": {"type": "string", "pattern": "^[a-z_]+$"},
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["actor", "action", "priority"],
    "additionalProperties": False,
}
INVALID = {"actor": "Mike", "action": "broke_build", "priority": 7}  # breaks maximum 5
VALID = {"actor": "Mike", "action": "broke_build", "priority": 5}

INSTRUCTOR_SCRIPT = r"""
import sys
import instructor
import openai
from pydantic import BaseModel, Field

class Action(BaseModel):
    actor: str
    action: str = Field(pattern=r"^[a-z_]+$")
    priority: int = Field(ge=1, le=5)

client = instructor.from_openai(openai.OpenAI(base_url=sys.argv[1], api_key="test"), mode=instructor.Mode.JSON)
result = client.chat.completions.create(
    model="test-model",
    response_model=Action,
    max_retries=3,
    messages=[{"role": "user", "content": sys.argv[2]}],
)
print(result.model_dump_json())
"""


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VANCE_", "OPENAI_"))}
    env.update(
        {
            "VANCE_HOME": home,
            "VANCE_MODEL": "openai/test-model",
            "VANCE_ALLOW_MODEL_REQUESTS": "0",  # loopback only: the bench can never reach a provider
            "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
            "NO_COLOR": "1",
        }
    )
    return env


def run_vance(server: FakeOpenAIServer, home: str, cwd: str) -> float:
    env = _env(home)
    env["VANCE_API_BASE"] = server.url
    env["VANCE_API_KEY"] = "test"
    cmd = [sys.executable, "-m", "vance_cli", "structure", PROMPT, "--schema", json.dumps(SCHEMA), "--max-loops", "3"]
    return _timed(server, cmd, env, cwd, "vance")


def run_instructor(server: FakeOpenAIServer, home: str, cwd: str) -> float:
    cmd = [sys.executable, "-c", INSTRUCTOR_SCRIPT, server.url, PROMPT]
    return _timed(server, cmd, _env(home), cwd, "instructor")


def _timed(server: FakeOpenAIServer, cmd: list[str], env: dict[str, str], cwd: str, who: str) -> float:
    server.reset()
    server.enqueue(text=json.dumps(INVALID))
    server.enqueue(text=json.dumps(VALID))
    start = time.perf_counter()
    proc = subprocess.run(cmd, check=False, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{who} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    if data != VALID:
        raise SystemExit(f"{who} returned {data!r}, expected {VALID!r}")
    if len(server.requests) != 2:
        raise SystemExit(f"{who} made {len(server.requests)} calls, expected 2 (one reason loop)")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=7, help="timed runs per side (default 7)")
    args = parser.parse_args(argv)

    vance: list[float] = []
    instr: list[float] = []
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        cwd = os.path.join(tmp, "cwd")
        os.makedirs(home)
        os.makedirs(cwd)
        run_vance(server, home, cwd)  # warm-up, untimed
        run_instructor(server, home, cwd)
        for i in range(args.runs):
            order = [(run_vance, vance), (run_instructor, instr)]
            if i % 2:
                order.reverse()
            for fn, bucket in order:
                bucket.append(fn(server, home, cwd))

    v, ins = statistics.median(vance), statistics.median(instr)
    print(f"runs per side:        {args.runs} (2 model calls each, one reason loop)")
    print(f"vance structure:      median {v * 1000:7.1f} ms  (min {min(vance) * 1000:.1f}, max {max(vance) * 1000:.1f})")
    print(f"instructor + openai:  median {ins * 1000:7.1f} ms  (min {min(instr) * 1000:.1f}, max {max(instr) * 1000:.1f})")
    print(f"ratio vance/instructor: {v / ins:.2f}")
    if v >= ins:
        print("FAIL: vance is not faster than instructor", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
