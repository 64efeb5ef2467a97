"""What a turn costs per message of history (issue 20: 32 µs a message, 336 ms a turn at 10,000):
the request carries the history's own messages (no copy each), and their wire form is built once
per model call (the context check and the body share it); bench/bench_turn.py --history times it."""

from __future__ import annotations

import asyncio
import json
import math

from tests.engines.harness import respond, run_engine
from vance_cli.llm import wire
from vance_cli.llm.base import ChatRequest
from vance_cli.llm.context import CHARS_PER_TOKEN, TOKENS_PER_MESSAGE, estimate_tokens, fit
from vance_cli.llm.openai_compat import OpenAICompatModel
from vance_cli.llm.profile import build_profile
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.messages import Message, ToolCall


def test_the_request_carries_the_history_messages_themselves(tmp_path, monkeypatch):
    seen: list[ChatRequest] = []
    complete = ScriptedModel.complete

    async def spy(self, request):
        seen.append(request)
        return await complete(self, request)

    monkeypatch.setattr(ScriptedModel, "complete", spy)
    run = run_engine(tmp_path, [respond("hi")], user="hello")
    (request,) = seen
    assert request.messages[0].role == "system"
    assert request.messages[1] is run.process.history[0]  # the person's message, not a copy
    assert request.messages[1].meta  # its meta stays on it; the wire form leaves it out
    assert "meta" not in wire.wire_messages(request.messages, "m")[1]


def test_the_wire_form_is_built_once_per_call(fake_openai, monkeypatch):
    built: list[str] = []
    to_openai = Message.to_openai
    monkeypatch.setattr(Message, "to_openai", lambda self, **kw: built.append(self.content) or to_openai(self, **kw))
    model = OpenAICompatModel(build_profile("openai/m", api_base=fake_openai.url, timeout=5, context_window=100_000))
    fake_openai.enqueue(text="ok")
    request = ChatRequest(messages=[Message(role="user", content=f"m{n}") for n in range(50)])
    assert fit(request, model.context_window, model.max_tokens, model.name).fits
    asyncio.run(model.complete(request))
    assert len(built) == 50  # the check's, taken by the body
    assert len(fake_openai.requests[0]["messages"]) == 50
    # a second call of the same request (a retry) builds its own
    fake_openai.enqueue(text="ok")
    asyncio.run(model.complete(request))
    assert len(built) == 100
    asyncio.run(model.aclose())


def test_the_estimate_is_the_characters_of_each_message_as_before():
    call = ToolCall(id="c1", name="file_read", arguments='{"path": "a\\nb"}', extra={"extra_content": {"x": "é"}})
    messages = [
        Message(role="system", content="SYSTEM"),
        Message(role="user", content='héllo "quoted"\n\ttab \u2028 日本'),
        Message(role="assistant", tool_calls=[call], extras={"reasoning_content": "thinking"}, extras_from="m"),
        Message(role="tool", tool_call_id="c1", name="file_read", content=""),
        Message(role="assistant", content=""),  # never sent
    ]
    request = ChatRequest(messages=messages)
    sent = wire.wire_messages(messages, "m")
    chars = sum(len(json.dumps(m, ensure_ascii=False)) for m in sent)  # one dumps per message, as before
    assert estimate_tokens(request, "m") == math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * len(sent)
    assert estimate_tokens(ChatRequest(messages=[])) == 0
