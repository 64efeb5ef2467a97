"""Per-turn engine overhead: one Ford turn against a bare model call to the same local server.

Run: python bench/bench_turn.py [--turns N]. One process, one local OpenAI-compatible server
(tests/fakeserver.py, its default responder answers with a `respond` call). Interleaved:

- baseline: the chat-completions request the engine sent last, POSTed with httpx and parsed,
  nothing else;
- vance: `Runtime.send` + `Runtime.drive` of an Arthur process: recipe snapshot, tool set,
  request building, the direct transport, respond handling, events, and every atomic save
  (temp file, fsync, rename) the turn makes.

Prints both medians, the ratio (goal ≤ 1.1×) and peak RSS; exit 1 when the goal is missed.

``--history 10,1000,10000``: the cost that grows with the chat instead. For each size, an Arthur
process with that many messages of history (user question, respond call, its result), turns
against a local server in its own process (``python -m tests.fakeserver``, so its CPU is not
ours), CPU time of this process per turn (median) against the bare POST of the same body, and
the durable save of one more message alone (``ProcessStore.save``: CPU and wall time, bytes
written). Goals: the save flat (at the largest size within 1.5× of the smallest), and the turn's
own CPU beyond the bare call at most ``HISTORY_GOAL_US`` µs per message of history (the request
must carry every message; building it should cost little more than sending it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
GOAL = 1.1
SAVE_GOAL = 1.5
HISTORY_GOAL_US = 5.0


async def main_async(turns: int) -> int:
    import httpx

    from tests.fakeserver import FakeOpenAIServer
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.runtime.runner import Runtime

    home = Path(tempfile.mkdtemp(prefix="vance-bench-"))
    env = {"VANCE_HOME": str(home), "VANCE_MODEL": "openai/bench-model"}
    with FakeOpenAIServer() as server:
        env["VANCE_API_BASE"] = server.url
        os.environ.update(env)
        scopes = Scopes.discover(cwd=home)
        settings = Settings.load(scopes)
        rt = Runtime(scopes, settings)
        process = rt.new_process("arthur")
        client = httpx.AsyncClient(timeout=30)

        # the request the engine sends on the first call of a turn, for the bare baseline
        from vance_cli.config.recipes import Recipe
        from vance_cli.tools.registry import builtin_registry

        recipe = Recipe.model_validate(process.recipe)
        reg = builtin_registry()
        body = {
            "model": "bench-model",
            "messages": [{"role": "system", "content": recipe.systemPrompt}, {"role": "user", "content": "hello"}],
            "tools": [reg.get(n).spec().to_openai() for n in recipe.tool_names()],
        }

        async def bare() -> None:
            # the exact body the engine sent on its last call: same payload, no engine
            r = await client.post(server.url + "/chat/completions", json=server.requests[-1] if server.requests else body)
            r.raise_for_status()
            r.json()

        history_cap = 40  # keep the history (and so the file) the size of a normal chat

        async def turn() -> None:
            if len(process.history) > history_cap:
                del process.history[:-4]
            rt.send(process, "hello", save=False)  # as `vance chat` does
            await rt.drive(process)

        with rt.store.lock(process.id):
            for _ in range(5):  # warm-up: imports, connection pools, jsonschema
                await bare()
                await turn()
            base, ours = [], []
            for _ in range(turns):
                t0 = time.perf_counter()
                await bare()
                base.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                await turn()
                ours.append(time.perf_counter() - t0)
        await client.aclose()
        await rt.aclose()
    b, v = statistics.median(base), statistics.median(ours)
    ratio = v / b
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"bare call: {b * 1000:.2f} ms   vance turn: {v * 1000:.2f} ms   "
        f"overhead {(v - b) * 1000:.2f} ms   ratio {ratio:.2f} (goal ≤ {GOAL})   peak RSS {rss_mb:.0f} MB"
    )
    return 0 if ratio <= GOAL else 1


def fill_history(process, messages: int) -> None:
    """``messages`` messages of a chat: the person's question, a respond call, its result."""
    import json

    from vance_cli.messages import Message, ToolCall

    n = 0
    while len(process.history) < messages:
        process.history.append(Message(role="user", content=f"question {n}: what does the file a{n}.txt say about the plan?",
                                        meta={"inbox_id": f"i{n}", "kind": "user"}))
        answer = {"message": f"answer {n}: the file says the plan is on track; " + "details " * 20, "awaiting_user_input": True}
        process.history.append(Message(role="assistant", tool_calls=[ToolCall(id=f"call_{n}", name="respond", arguments=json.dumps(answer))]))
        process.history.append(Message(role="tool", tool_call_id=f"call_{n}", name="respond", content="delivered",
                                       meta={"delivered": True}))
        n += 1
    del process.history[messages:]


def _written(path: Path) -> int:
    """Bytes of the process file and everything beside it that holds its history."""
    return sum(p.stat().st_size for p in path.parent.glob(path.stem + "*") if p.suffix != ".lock")


async def history_async(sizes: list[int], turns: int) -> int:
    import subprocess

    import httpx

    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.messages import Message
    from vance_cli.runtime.runner import Runtime

    server = subprocess.Popen([sys.executable, "-m", "tests.fakeserver", "--port", "0"], cwd=REPO,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        client = httpx.AsyncClient(timeout=60)
        rows = []
        for size in sizes:
            home = Path(tempfile.mkdtemp(prefix="vance-bench-history-"))
            env = {"VANCE_HOME": str(home), "VANCE_MODEL": "openai/bench-model", "VANCE_API_BASE": url}
            os.environ.update(env)
            scopes = Scopes.discover(cwd=home)
            rt = Runtime(scopes, Settings.load(scopes))
            process = rt.new_process("arthur")
            fill_history(process, size)
            rt.store.save(process)
            last_body: dict = {}

            async def bare() -> float:
                t0 = time.process_time()
                r = await client.post(url + "/chat/completions", json=last_body)
                r.raise_for_status()
                r.json()
                return time.process_time() - t0

            async def turn() -> float:
                t0 = time.process_time()
                rt.send(process, "hello", save=False)
                await rt.drive(process)
                return time.process_time() - t0

            with rt.store.lock(process.id):
                await turn()  # warm-up, and the body the bare call sends
                await turn()
                ours, base = [], []
                for _ in range(turns):
                    ours.append(await turn())
                    # the exact body of the turn's model call, from the server's side
                    last_body = rt_last_request(rt, process)
                    base.append(await bare())
                saves, walls, written = [], [], []
                path = rt.store.path(process.id)
                for n in range(max(5, turns)):
                    process.history.append(Message(role="user", content=f"one more message {n}", meta={"kind": "user"}))
                    before = (_written(path), path.stat().st_size)
                    t0, w0 = time.process_time(), time.perf_counter()
                    rt.store.save(process)
                    saves.append(time.process_time() - t0)
                    walls.append(time.perf_counter() - w0)
                    written.append(_bytes_written(path, before))
            await rt.aclose()
            rows.append({"messages": size, "turn_ms": 1000 * statistics.median(ours), "bare_ms": 1000 * statistics.median(base),
                         "save_ms": 1000 * statistics.median(saves), "save_wall_ms": 1000 * statistics.median(walls),
                         "file_kb": _written(path) / 1024, "save_kb": statistics.median(written) / 1024})
        await client.aclose()
    finally:
        server.terminate()
        server.wait()
    print(f"{'messages':>8} {'turn cpu ms':>12} {'bare cpu ms':>12} {'overhead ms':>12} {'save cpu ms':>12} "
          f"{'save wall ms':>13} {'file KB':>8} {'save KB':>8}")
    for r in rows:
        print(f"{r['messages']:>8} {r['turn_ms']:>12.2f} {r['bare_ms']:>12.2f} {r['turn_ms'] - r['bare_ms']:>12.2f} "
              f"{r['save_ms']:>12.2f} {r['save_wall_ms']:>13.2f} {r['file_kb']:>8.0f} {r['save_kb']:>8.1f}")
    first, last = rows[0], rows[-1]
    save_ratio = last["save_ms"] / first["save_ms"]
    slope_us = 1000 * ((last["turn_ms"] - last["bare_ms"]) - (first["turn_ms"] - first["bare_ms"])) / (last["messages"] - first["messages"])
    turn_slope_us = 1000 * (last["turn_ms"] - first["turn_ms"]) / (last["messages"] - first["messages"])
    print(json.dumps({"save_ratio": round(save_ratio, 2), "save_goal": SAVE_GOAL,
                      "turn_us_per_message": round(turn_slope_us, 2),
                      "overhead_us_per_message": round(slope_us, 2), "overhead_goal_us": HISTORY_GOAL_US}))
    ok = save_ratio <= SAVE_GOAL and slope_us <= HISTORY_GOAL_US
    print("goal met" if ok else "goal missed")
    return 0 if ok else 1


def rt_last_request(rt, process) -> dict:
    """The chat-completions body the engine built last (re-built here the same way it is sent)."""
    from vance_cli.llm.wire import wire_messages

    model = rt.model(process.model or rt.settings.resolve_model(None))
    request = model.last_request  # set by the bench's hook below
    return {"model": "bench-model", "messages": wire_messages(request.messages, model.name),
            "tools": [t.to_openai() for t in request.tools]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--history", metavar="SIZES", help="e.g. 10,1000,10000: the cost that grows with the history")
    args = ap.parse_args()
    if args.history:
        _hook_last_request()
        return asyncio.run(history_async([int(x) for x in args.history.split(",")], min(args.turns, 15)))
    return asyncio.run(main_async(args.turns))


def _hook_last_request() -> None:
    """Keep the last request each model was asked (for the bare call's body)."""
    from vance_cli.llm.openai_compat import OpenAICompatModel

    original = OpenAICompatModel.complete

    async def complete(self, request):
        self.last_request = request
        return await original(self, request)

    OpenAICompatModel.complete = complete


def _bytes_written(path: Path, before: tuple[int, int]) -> int:
    """What one save wrote: the new process file, plus what was appended beside it."""
    total, head = _written(path), path.stat().st_size
    return head + max(0, (total - head) - (before[0] - before[1]))


if __name__ == "__main__":
    sys.exit(main())
