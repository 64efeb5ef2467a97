"""A streamed reply in the chat screen (issue 16), headless with Textual's Pilot, offline.

The deltas of a 7 KB reply with a 60-item Markdown list and of a 64 KB reply go through the path
the app uses (MessageDelta events on the chat screen, painted by the streaming widget's timer, then
the MessageEvent). Measured: time until the reply is fully shown, streamed vs unstreamed (the
MessageEvent alone), and the latency of a key pressed during and after the stream.
Goal: streamed ≤ 1.2× unstreamed, key ≤ 50 ms. Exits 1 when a goal is missed.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time

os.environ.setdefault("VANCE_HOME", tempfile.mkdtemp(prefix="vance-bench-stream-"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.tui.test_snapshots import FIXED_ID, _chat_app  # noqa: E402
from vance_cli.events import MessageDelta, MessageEvent  # noqa: E402
from vance_cli.tui.messages import EngineEvent  # noqa: E402
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


async def _shown(pilot, text: str) -> None:
    while True:
        views = list(pilot.app.screen.query(MessageView))
        if views and views[-1].text == text:
            await pilot.pause()
            return
        await asyncio.sleep(0.005)


async def _key_latency(pilot) -> float:
    prompt = pilot.app.screen.query_one(PromptInput)
    before = prompt.text
    t = time.perf_counter()
    await pilot.press("x")
    while prompt.text == before:
        await asyncio.sleep(0.001)
    return time.perf_counter() - t


async def run(text: str, streamed: bool) -> tuple[float, float, float]:
    os.environ["VANCE_HOME"] = tempfile.mkdtemp(prefix="vance-bench-stream-")
    app = _chat_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        during = 0.0
        t = time.perf_counter()
        if streamed:
            sofar = ""
            chunks = deltas(text)
            for k, d in enumerate(chunks):
                sofar += d
                screen.post_message(EngineEvent(MessageDelta(FIXED_ID, 1, sofar)))
                await asyncio.sleep(0.001)  # a fast model: ~1 ms a delta
                if k == len(chunks) // 2:
                    during = await _key_latency(pilot)
        screen.post_message(EngineEvent(MessageEvent(FIXED_ID, text)))
        await _shown(pilot, text)
        shown = time.perf_counter() - t
        after = await _key_latency(pilot)
    return shown, during, after


async def main() -> int:
    ok = True
    for name, text in (("7 KB list", list_reply()), ("64 KB", long_reply())):
        plain, _, plain_after = await run(text, streamed=False)
        shown, during, after = await run(text, streamed=True)
        ratio = shown / plain
        ok &= ratio <= 1.2 and during <= 0.05 and after <= 0.05
        print(f"{name} ({len(text)} chars, {len(deltas(text))} deltas): streamed {shown:.2f} s, unstreamed {plain:.2f} s "
              f"({ratio:.2f}×, goal ≤ 1.2); key during {during * 1000:.0f} ms, after {after * 1000:.0f} ms "
              f"(unstreamed after {plain_after * 1000:.0f} ms; goal ≤ 50)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
