"""Benchmark: `vance structure --batch` against a bare httpx asyncio script, and its memory as IN grows.

What it measures (issue 20), against an instant local OpenAI-compatible server started by this
script (``serve``: asyncio, keep-alive, one fixed valid reply, in its own process):

1. **Throughput.** The same N records through ``vance structure --batch IN --jobs J`` and through a
   bare script (``BARE``: httpx.AsyncClient, J workers, the same request body vance sends, the
   reply parsed and one line written per record). Both run as fresh processes and are timed from
   start to exit (start-up counts for both), interleaved, after one warm-up each; the ratio is
   vance / bare (the goal: at most 1.5). Each side's own in-process rate (after start-up) is shown too.
2. **Memory.** Peak RSS (``wait4``) of ``vance structure --batch`` at 1,000, 10,000 and 100,000
   records (``--sizes``), with the time each took; the goal is flat.

Run it from the repository root::

    python bench/bench_batch.py                      # throughput at 2,000 records x 3 runs, memory at 1k/10k/100k
    python bench/bench_batch.py -n 5000 --runs 5 --sizes 1000,10000

No network access beyond 127.0.0.1; no API keys needed. Exits 1 when the throughput ratio is above 1.5.
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

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["title", "priority", "tags"],
    "additionalProperties": False,
}
ANSWER = {"result": {"title": "printer on fire", "priority": 5, "tags": ["office", "urgent"]}, "_need": None}
GOAL = 1.5

# --------------------------------------------------------------------------- the instant server

SERVER = r"""
import asyncio, json, sys
answer = json.dumps({"result": __ANSWER__, "_need": None})
body = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
}).encode()
ok = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
models = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]}).encode()
models_ok = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(models)).encode() + b"\r\n\r\n" + models
missing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
dump = sys.argv[1] if len(sys.argv) > 1 else None

async def handle(reader, writer):
    global dump
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            data = await reader.readexactly(length) if length else b""
            if head.startswith(b"POST"):
                if dump:
                    open(dump, "wb").write(data)
                    dump = None
                writer.write(ok)
            elif head.startswith(b"GET /v1/models"):
                writer.write(models_ok)
            else:
                writer.write(missing)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
""".replace("__ANSWER__", repr(ANSWER["result"]))

# --------------------------------------------------------------------------- the bare baseline

BARE = r"""
import asyncio, json, sys, time
started = time.monotonic()
import httpx
url, source, template, out, jobs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
body = json.load(open(template))

async def main():
    ready = time.monotonic()
    async with httpx.AsyncClient(timeout=60) as client:
        with open(source, encoding="utf-8") as lines, open(out, "w", encoding="utf-8") as sink:
            async def worker():
                for line in lines:
                    record = json.loads(line)
                    request = dict(body, messages=[body["messages"][0], {"role": "user", "content": record["prompt"]}])
                    response = await client.post(url + "/chat/completions", json=request)
                    reply = response.json()
                    data = json.loads(reply["choices"][0]["message"]["content"])
                    sink.write(json.dumps({"id": record["id"], "status": "ok", "data": data["result"]}) + "\n")
            await asyncio.gather(*(worker() for _ in range(jobs)))
    print(json.dumps({"elapsed": time.monotonic() - ready}))

asyncio.run(main())
"""


def start_server(dump: Path | None = None) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", SERVER, *([str(dump)] if dump else [])], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/v1"


def write_records(path: Path, n: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"t{i}", "prompt": f"Ticket {i}: the printer on floor {i % 7} is on fire again, urgent"}) + "\n")


def vance_env(home: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VANCE_", "OPENAI_"))}
    env.update({"VANCE_HOME": str(home), "VANCE_MODEL": "openai/bench", "VANCE_API_BASE": url, "VANCE_API_KEY": "x",
                "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""), "NO_COLOR": "1"})
    return env


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds (user + system), peak RSS in MB, stdout) of one process (wait4)."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"{cmd[:6]} failed ({proc.returncode}): {err.read().decode()[-2000:]}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read().decode()


def vance_cmd(source: Path, schema: Path, out: Path, jobs: int) -> list[str]:
    return [sys.executable, "-m", "vance_cli", "structure", "--batch", str(source), "--schema", str(schema),
            "--out", str(out), "--jobs", str(jobs), "--json"]


def summary_of(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=2000, help="records for the throughput runs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--sizes", default="1000,10000,100000", help="record counts for the memory runs ('' to skip)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "home").mkdir()
        schema = root / "schema.json"
        schema.write_text(json.dumps(SCHEMA))
        template = root / "body.json"
        server, url = start_server(dump=template)
        try:
            env = vance_env(root / "home", url)
            source = root / "in.jsonl"
            write_records(source, args.n)
            # warm-up: also records the request body vance sends, which the bare script then sends too
            run_measured(vance_cmd(source, schema, root / "warm.jsonl", args.jobs), env)
            bare_cmd = [sys.executable, "-c", BARE, url, str(source), str(template), str(root / "bare.jsonl"), str(args.jobs)]
            run_measured(bare_cmd, env)
            runs: dict[str, dict[str, list[float]]] = {side: {"wall": [], "cpu": [], "inner": []} for side in ("vance", "bare")}
            for run in range(args.runs):
                for side in (("vance", "bare") if run % 2 == 0 else ("bare", "vance")):
                    if side == "vance":
                        out = root / f"v{run}.jsonl"
                        wall, cpu, _, stdout = run_measured(vance_cmd(source, schema, out, args.jobs), env)
                        summary = summary_of(stdout)
                        assert summary["ok"] == args.n, summary
                        inner = summary["elapsed"]
                        out.unlink()
                    else:
                        wall, cpu, _, stdout = run_measured(bare_cmd, env)
                        inner = json.loads(stdout)["elapsed"]
                    runs[side]["wall"].append(wall)
                    runs[side]["cpu"].append(cpu)
                    runs[side]["inner"].append(inner)
            med = {side: {k: statistics.median(v) for k, v in data.items()} for side, data in runs.items()}
            low = {side: min(data["wall"]) for side, data in runs.items()}
            ratio = med["vance"]["wall"] / med["bare"]["wall"]
            print(f"throughput, {args.n:,} records, --jobs {args.jobs}, {args.runs} interleaved runs each (medians; load {os.getloadavg()[0]:.1f}):")
            for side, label in (("vance", "vance --batch"), ("bare", "bare httpx   ")):
                m = med[side]
                print(f"  {label}  wall {m['wall']:6.2f} s ({args.n / m['wall']:5.0f} rec/s, best {low[side]:.2f} s)"
                      f"  cpu {m['cpu']:6.2f} s ({m['cpu'] / args.n * 1e3:.2f} ms/rec)"
                      f"  after start-up {m['inner']:6.2f} s ({args.n / m['inner']:5.0f} rec/s)")
            print(f"  ratio vance/bare: wall {ratio:.2f} (best {low['vance'] / low['bare']:.2f}), cpu {med['vance']['cpu'] / med['bare']['cpu']:.2f},"
                  f" after start-up {med['vance']['inner'] / med['bare']['inner']:.2f}   (goal: wall <= {GOAL})")

            sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
            if sizes:
                print(f"memory, --jobs {args.jobs}:")
            for n in sizes:
                big = root / f"in{n}.jsonl"
                write_records(big, n)
                out = root / f"out{n}.jsonl"
                wall, cpu, rss, stdout = run_measured(vance_cmd(big, schema, out, args.jobs), env)
                summary = summary_of(stdout)
                assert summary["ok"] == n, summary
                print(f"  {n:>7,} records: peak RSS {rss:6.1f} MB, {wall:6.1f} s wall ({n / wall:5.0f} rec/s), cpu {cpu:6.1f} s,"
                      f" IN {big.stat().st_size / 1e6:.1f} MB, OUT {out.stat().st_size / 1e6:.1f} MB (load {os.getloadavg()[0]:.1f})")
                big.unlink()
                out.unlink()
        finally:
            server.terminate()
            server.wait()
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
