"""Start-up costs, each as a ratio against a baseline measured interleaved in the same run.

1. `vance --help` against `python -c "import typer"` (goal ≤ 1.6×).
2. One headless turn, `vance chat -p hi`, against a loopback OpenAI-compatible server, against the
   floor: a fresh Python that imports httpx and posts the same request body to the same server
   (goal ≤ 1.5×).
3. `vance doctor --offline` and `vance demo` (no model call; a scripted brain): time to their
   first line of output against the whole of `vance --help` (goal ≤ 1.5×: they start as quickly
   as help; their own work streams after it). Their total times are printed too.

4. What each command imports (``--only imports``): a command that uses neither MCP nor ACP imports
   neither SDK (issue 19: `vance --help`, `vance chat -p`, `vance doctor --offline`, `vance mcp
   --help`, `vance mcp list` without servers, `vance acp --help`); litellm and textual are shown too.

Run: python bench/bench_startup.py [--runs N] [--only help|chat|doctor|demo|imports]. Each command
runs in a fresh interpreter; medians are compared; exit 1 when a ratio misses its goal or a command
imports an SDK it does not use.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GOALS = {"help": 1.6, "chat": 1.5, "doctor": 1.5, "demo": 1.5}

FLOOR = (
    "import json, sys, httpx\n"
    "body = json.load(open(sys.argv[2]))\n"
    "r = httpx.post(sys.argv[1] + '/chat/completions', json=body, headers={'Authorization': 'Bearer x'})\n"
    "print(r.json()['choices'][0]['message']['tool_calls'][0]['function']['arguments'])\n"
)


CPU: dict[str, list[float]] = {}

# Runs one command in this interpreter and names the optional SDKs and heavy libraries it imported.
IMPORT_PROBE = (
    "import sys\nfrom vance_cli.cli.main import run\n"
    "try:\n    run(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "sys.stderr.write('IMPORTED=' + ','.join(m for m in ('mcp', 'acp', 'litellm', 'textual') if m in sys.modules) + '\\n')\n"
)
# Commands that use neither MCP nor ACP: neither SDK may be imported (issue 19).
NO_SDK = (["--help"], ["chat", "-p", "hi", "-q"], ["doctor", "--offline"], ["mcp", "--help"], ["mcp", "list"], ["acp", "--help"])


def imports_of(argv: list[str], env: dict) -> set[str]:
    """The SDKs and heavy libraries ``vance ARGV`` imports (mcp, acp, litellm, textual)."""
    r = subprocess.run([sys.executable, "-c", IMPORT_PROBE, *argv], capture_output=True, text=True, env=env)
    line = next((x for x in r.stderr.splitlines() if x.startswith("IMPORTED=")), None)
    if line is None:
        raise SystemExit(f"vance {' '.join(argv)}: the import probe did not finish: {r.stderr[-500:]}")
    return {m for m in line.removeprefix("IMPORTED=").split(",") if m}


def check_imports(env: dict) -> bool:
    """Print what each command imports; False when one that uses neither imports mcp or acp."""
    from tests.fakeserver import FakeOpenAIServer

    ok = True
    with FakeOpenAIServer() as server:
        run_env = {**env, "VANCE_MODEL": "openai/bench-model", "VANCE_API_BASE": server.url, "VANCE_API_KEY": "x"}
        for argv in NO_SDK:
            got = imports_of(argv, run_env)
            sdks = got & {"mcp", "acp"}
            ok &= not sdks
            mark = "ok" if not sdks else f"MISSED: imports {', '.join(sorted(sdks))}"
            print(f"imports vance {' '.join(argv):<22} {', '.join(sorted(got)) or 'none of mcp, acp, litellm, textual'}   {mark}")
    return ok


def timed(cmd: list[str], env: dict) -> float:
    """Wall seconds of one run; its CPU seconds (user + sys, steadier on a busy machine) go to CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(" ".join(cmd), []).append(cpu)
    return wall


def first_line(cmd: list[str], env: dict) -> float:
    """Seconds until the command's first line of stdout (then it runs to its end, untimed)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.stdout.read()
    if proc.wait() != 0 and "doctor" not in cmd:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return elapsed


def compare(name: str, base_cmd: list[str], ours_cmd: list[str], env: dict, runs: int, labels: tuple[str, str],
            measure=timed) -> bool:
    measure(ours_cmd, env)  # warm the page cache and .pyc files
    timed(base_cmd, env)
    base, ours = [], []
    for _ in range(runs):
        base.append(timed(base_cmd, env))
        ours.append(measure(ours_cmd, env))
    b, v = statistics.median(base), statistics.median(ours)
    ratio = v / b
    goal = GOALS[name]
    mark = "ok" if ratio <= goal else "MISSED"
    print(f"{name:<7} {labels[0]}: {b * 1000:.0f} ms   {labels[1]}: {v * 1000:.0f} ms   ratio {ratio:.2f} (goal ≤ {goal}) {mark}")
    cpu_base, cpu_ours = CPU.get(" ".join(base_cmd)), CPU.get(" ".join(ours_cmd))
    if cpu_base and cpu_ours:
        cb, co = statistics.median(cpu_base), statistics.median(cpu_ours)
        print(f"        CPU time (user+sys): {cb * 1000:.0f} ms vs {co * 1000:.0f} ms, ratio {co / cb:.2f}")
    return ratio <= goal


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", choices=[*sorted(GOALS), "imports"])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vance-bench-"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "VANCE_HOME": str(tmp / "home"), "NO_COLOR": "1"}
    for var in ("VANCE_MODEL", "VANCE_API_BASE", "VANCE_API_KEY", "VANCE_TRANSPORT"):
        env.pop(var, None)
    # An installed vance has its bytecode compiled (pip does it at install); a source checkout gets
    # it on the first (warm-up) run. Some shells set this and would measure compiling instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    vance = [sys.executable, "-m", "vance_cli"]
    help_cmd = [*vance, "--help"]
    ok = True
    wanted = [args.only] if args.only else [*GOALS, "imports"]

    if "imports" in wanted:
        ok &= check_imports(env)

    if "help" in wanted:
        ok &= compare("help", [sys.executable, "-c", "import typer"], help_cmd, env, args.runs, ("import typer", "vance --help"))

    if "chat" in wanted:
        from tests.fakeserver import FakeOpenAIServer  # answers respond-capable requests with a respond call

        with FakeOpenAIServer() as server:
            chat_env = {**env, "VANCE_MODEL": "openai/bench-model", "VANCE_API_BASE": server.url, "VANCE_API_KEY": "x"}
            chat_cmd = [*vance, "chat", "-p", "hi", "-q"]
            subprocess.run(chat_cmd, env=chat_env, check=True, capture_output=True)
            body_file = tmp / "body.json"
            body_file.write_text(json.dumps(server.requests[-1]))
            floor_cmd = [sys.executable, "-c", FLOOR, server.url, str(body_file)]
            ok &= compare("chat", floor_cmd, chat_cmd, chat_env, args.runs, ("httpx floor", "vance chat -p hi"))

    if "doctor" in wanted:
        doctor_env = {**env, "VANCE_MODEL": "ollama/llama3.1"}
        doctor_cmd = [*vance, "doctor", "--offline"]
        ok &= compare("doctor", help_cmd, doctor_cmd, doctor_env, args.runs,
                      ("vance --help", "doctor --offline, first line"), measure=first_line)
        total = statistics.median(timed(doctor_cmd, doctor_env) for _ in range(max(3, args.runs // 3)))
        print(f"        (doctor --offline in all: {total * 1000:.0f} ms)")

    if "demo" in wanted:
        demo_cmd = [*vance, "demo", "--home", str(tmp / "demo")]
        ok &= compare("demo", help_cmd, demo_cmd, env, args.runs, ("vance --help", "demo, first line"), measure=first_line)
        total = statistics.median(timed(demo_cmd, env) for _ in range(max(3, args.runs // 3)))
        print(f"        (demo in all, three parts: {total * 1000:.0f} ms)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
