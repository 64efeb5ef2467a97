"""Per-turn engine overhead: one Ford turn against a bare model call to the same local server.

Run: python bench/bench_turn.py [--turns N]. One process, one local OpenAI-compatible server
(tests/fakeserver.py, its default responder answers with a `respond` call). Interleaved:

- baseline: the chat-completions request the engine sent last, POSTed with httpx and parsed,
  nothing else;
- vance: `Runtime.send` + `Runtime.drive` of an Arthur process: recipe snapshot, tool set,
  request building, the direct transport, respond handling, events, and every atomic save
  (temp file, fsync, rename) the turn makes.

Prints both medians, the ratio (goal ≤ 1.1×) and peak RSS; exit 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=100)
    args = ap.parse_args()
    return asyncio.run(main_async(args.turns))


if __name__ == "__main__":
    sys.exit(main())
