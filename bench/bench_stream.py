"""A streamed reply in the chat screen (issue 16), headless with Textual's Pilot, offline.

The deltas of a 7 KB reply with a 60-item Markdown list and of a 64 KB reply go through the path
the app uses (MessageDelta events on the chat screen, painted by the streaming widget's timer, then
the MessageEvent); "unstreamed" is the MessageEvent alone. Two ways to feed the deltas:

- burst: every delta at once, then the message (a model faster than the screen). The screen does
  the whole work of the stream; nothing else is timed, so "streamed / unstreamed" compares like
  with like. Goal ≤ 1.2.
- paced: a delta every ~1 ms (the loop's sleeps). Timed: how long the deltas take to arrive
  (arrival), until the reply is fully shown, and the UI work not hidden behind the arrival
  (shown - arrival), as a ratio to unstreamed; and the latency of keys pressed every 100 ms while
  the deltas arrive (the worst one) and five after the reply is shown (the worst one).
  Goal: a key ≤ 50 ms.

A key is sent the way a terminal's driver sends it (``driver.send_message``) and timed until the
prompt holds it (``pilot.press`` waits for the app to be idle, ≥ 40 ms, so it cannot time a key).
"Fully shown": the last assistant MessageView holds the text, all its pieces painted, then the app
idle once. Exits 1 when a goal is missed.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time

os.environ.setdefault("VANCE_HOME", tempfile.mkdtemp(prefix="vance-bench-stream-"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from textual import events  # noqa: E402

from tests.tui.test_snapshots import FIXED_ID, _chat_app  # noqa: E402
from vance_cli.events import MessageDelta, MessageEvent  # noqa: E402
from vance_cli.tui.messages import EngineEvent  # noqa: E402

try:  # the widget of issue 16 (absent in a checkout from before it: then a view is one Markdown)
    from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces
except ImportError:  # pragma: no cover
    MarkdownPieces = None
from vance_cli.tui.widgets.message_view import MessageView  # noqa: E402
from vance_cli.tui.widgets.prompt_input import PromptInput  # noqa: E402


def list_reply() -> str:
    items = "".join(f"{i}. **item {i}**: check the `module_{i}` tests and fix what fails there\n" for i in range(1, 61))
    return "Here is the plan:\n\n" + items + "\nThat is all.\n"


def long_reply() -> str:
    para = ("The runtime saves each step before the next effect, so a crash loses nothing; "
            "the engine reads the process back and continues where it stopped. ") * 3
    out, n = [], 0
    while sum(map(len, out)) < 64_000:
        n += 1
        out.append(f"## Part {n}\n\n{para}\n\n- first point of part {n}\n- second point\n\n")
    return "".join(out)


def deltas(text: str, size: int = 24) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def _is_shown(app, text: str) -> bool:
    views = [v for v in app.screen.query(MessageView) if v.role == "assistant"]
    if not views or views[-1].text != text:
        return False
    bodies = list(views[-1].query(MarkdownPieces)) if MarkdownPieces is not None else []
    return not bodies or bodies[0].shown == text


async def _shown(pilot, text: str) -> None:
    while not _is_shown(pilot.app, text):
        await asyncio.sleep(0.002)
    await pilot.pause()


async def _key_latency(app) -> float:
    prompt = app.screen.query_one(PromptInput)
    before = prompt.text
    t = time.perf_counter()
    app._driver.send_message(events.Key("x", "x"))
    while prompt.text == before:
        await asyncio.sleep(0.001)
    return time.perf_counter() - t


async def run(text: str, mode: str) -> dict:
    """mode: "unstreamed", "burst" or "paced"."""
    os.environ["VANCE_HOME"] = tempfile.mkdtemp(prefix="vance-bench-stream-")
    app = _chat_app()
    out: dict = {}
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        during: list[float] = []
        done = asyncio.Event()

        async def probe() -> None:
            while not done.is_set():
                await asyncio.sleep(0.1)
                if not done.is_set():
                    during.append(await _key_latency(app))

        t = time.perf_counter()
        if mode != "unstreamed":
            prober = asyncio.create_task(probe()) if mode == "paced" else None
            sofar = ""
            for d in deltas(text):
                sofar += d
                screen.post_message(EngineEvent(MessageDelta(FIXED_ID, 1, sofar)))
                if mode == "paced":
                    await asyncio.sleep(0.001)  # a fast model: ~1 ms a delta
            out["arrival"] = time.perf_counter() - t
            done.set()
            if prober is not None:
                await prober
        screen.post_message(EngineEvent(MessageEvent(FIXED_ID, text)))
        await _shown(pilot, text)
        out["shown"] = time.perf_counter() - t
        out["during"] = max(during, default=0.0)
        out["during_n"] = len(during)
        after = []
        for _ in range(5):
            after.append(await _key_latency(app))
            await asyncio.sleep(0.05)
        out["after"] = max(after)
    return out


async def main() -> int:
    ok = True
    for name, text in (("7 KB list", list_reply()), ("64 KB", long_reply())):
        plain = await run(text, "unstreamed")
        burst = await run(text, "burst")
        paced = await run(text, "paced")
        ratio = burst["shown"] / plain["shown"]
        extra = paced["shown"] - paced["arrival"]
        ok &= ratio <= 1.2 and paced["during"] <= 0.05 and paced["after"] <= 0.05
        print(f"{name} ({len(text)} chars, {len(deltas(text))} deltas): unstreamed {plain['shown']:.2f} s; "
              f"burst {burst['shown']:.2f} s ({ratio:.2f}×, goal ≤ 1.2); "
              f"paced: arrival {paced['arrival']:.2f} s, shown {paced['shown']:.2f} s, beyond arrival {extra:.2f} s "
              f"({extra / plain['shown']:.2f}× unstreamed); key during ≤ {paced['during'] * 1000:.0f} ms "
              f"(worst of {paced['during_n']}), after ≤ {paced['after'] * 1000:.0f} ms "
              f"(unstreamed after {plain['after'] * 1000:.0f} ms; goal ≤ 50)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
