"""A resumed chat with a long transcript builds only the newest entries (issue 20: a widget for
each of 5,000 messages cost ~0.7 s before the app was ready; bench/bench_tui.py --ready-only)."""

from __future__ import annotations

import json

from tests.tui.conftest import SIZE, make_app, respond, wait_for
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.messages import Message, ToolCall
from vance_cli.tui.widgets import message_view
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.tool_line import ToolLine
from vance_cli.tui.widgets.transcript import MAX_MOUNTED

PAIRS = 1000


def _long_chat(app) -> None:
    process = app.controller.process
    for n in range(PAIRS):
        process.history.append(Message(role="user", content=f"question {n}"))
        call = ToolCall(id=f"c{n}", name="respond", arguments=json.dumps({"message": f"answer {n}"}))
        process.history.append(Message(role="assistant", tool_calls=[call]))
        process.history.append(Message(role="tool", tool_call_id=f"c{n}", name="respond", content="delivered",
                                       meta={"delivered": True}))
    process.history.append(Message(role="assistant", tool_calls=[ToolCall(id="f", name="file_list", arguments="{}")]))
    process.history.append(Message(role="tool", tool_call_id="f", name="file_list", content="a.txt"))
    app.controller.runtime.store.save(process)


async def test_a_long_transcript_builds_only_what_is_mounted(monkeypatch):
    built: list[str] = []
    init = MessageView.__init__

    def counting(self, text, *args, **kw):
        built.append(text)
        init(self, text, *args, **kw)

    monkeypatch.setattr(message_view.MessageView, "__init__", counting)
    app = make_app(ScriptedModel([respond("fine")]))
    _long_chat(app)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.screen.transcript
        await wait_for(pilot, lambda: len(transcript.entries) == MAX_MOUNTED)
        assert len(built) <= MAX_MOUNTED  # not one per message of the chat
        views = [w for w in transcript.entries if isinstance(w, MessageView)]
        assert views[-1].text == f"answer {PAIRS - 1}" and isinstance(transcript.entries[-1], ToolLine)
        assert transcript.entries[-1].ok is True  # the call and its result: one line
        assert transcript.hidden == 2 * PAIRS + 1 - MAX_MOUNTED  # the earlier ones counted, not built
        assert f"… {transcript.hidden} earlier entries not shown" in str(transcript.children[0].render())
    app.controller.close()
