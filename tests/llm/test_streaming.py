"""Streamed calls over both transports: the same Completion as `complete`, plus display deltas."""

from __future__ import annotations

import pytest

from tests.llm.test_contract import READ, RESPOND, litellm_loaded, make, user  # noqa: F401  (fixtures)
from vance_cli.errors import TransportError
from vance_cli.llm.base import Completion, StreamDelta
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.llm.streaming import ChunkAssembler
from vance_cli.messages import ToolCall, Usage


def _shape(c: Completion):
    return (c.text, [(t.id, t.name, t.arguments) for t in c.tool_calls], c.finish_reason,
            (c.usage.calls, c.usage.prompt_tokens, c.usage.completion_tokens))


async def test_streamed_text_equals_the_non_streamed_completion(make, fake_openai):
    model, _ = make(fake_openai.url)
    text = "Hello there, this is a reply long enough for several chunks."
    fake_openai.enqueue(text=text, usage={"prompt_tokens": 11, "completion_tokens": 13})
    fake_openai.enqueue(text=text, usage={"prompt_tokens": 11, "completion_tokens": 13})
    plain = await model.complete(user())
    deltas: list[StreamDelta] = []
    streamed = await model.stream(user(), deltas.append)
    assert _shape(streamed) == _shape(plain)
    assert _shape(streamed)[3] == (1, 11, 13)
    assert "".join(d.text for d in deltas) == text
    assert len([d for d in deltas if d.text]) > 3  # it really arrived in pieces
    assert fake_openai.requests[1]["stream"] is True
    assert fake_openai.requests[1]["stream_options"] == {"include_usage": True}
    assert "stream" not in fake_openai.requests[0]


async def test_streamed_tool_calls_equal_the_non_streamed_completion(make, fake_openai):
    model, _ = make(fake_openai.url)
    calls = [("file_read", {"path": "notes/a-rather-long-file-name.txt"}),
             ("respond", {"message": "I read the file and here is what it says: " + "x" * 50})]
    for _ in range(2):
        fake_openai.enqueue(tool_calls=calls, usage={"prompt_tokens": 7, "completion_tokens": 9})
    plain = await model.complete(user(tools=[READ, RESPOND]))
    deltas: list[StreamDelta] = []
    streamed = await model.stream(user(tools=[READ, RESPOND]), deltas.append)
    # ids are numbered per enqueue by the server: compare the rest
    assert [(t.name, t.arguments) for t in streamed.tool_calls] == [(t.name, t.arguments) for t in plain.tool_calls]
    assert all(t.id for t in streamed.tool_calls)
    assert streamed.finish_reason == plain.finish_reason == "tool_calls"
    assert (streamed.usage.prompt_tokens, streamed.usage.completion_tokens) == (7, 9)
    by_index: dict[int, str] = {}
    for d in deltas:
        if d.tool_index is not None:
            by_index[d.tool_index] = by_index.get(d.tool_index, "") + d.arguments
    assert [by_index[0], by_index[1]] == [t.arguments for t in plain.tool_calls]
    assert [d.tool_name for d in deltas if d.tool_name] == ["file_read", "respond"]


async def test_a_streamed_http_error_maps_like_complete(make, fake_openai):
    model, _ = make(fake_openai.url)
    fake_openai.enqueue_error(401)
    with pytest.raises(TransportError) as info:
        await model.stream(user(), lambda d: None)
    assert info.value.status == 401 and "API key" in (info.value.hint or "")


async def test_a_stream_cut_short_is_retried_and_the_display_restarts(make, fake_openai):
    if make.kind == "litellm":
        pytest.skip("litellm reports a cut stream in its own way; the direct transport owns this rule")
    model, delays = make(fake_openai.url)
    fake_openai.enqueue(text="the first attempt that breaks off", cut_after=3)
    fake_openai.enqueue(text="second attempt")
    deltas: list[StreamDelta] = []
    completion = await model.stream(user(), deltas.append)
    assert completion.text == "second attempt"
    restart = next(i for i, d in enumerate(deltas) if d.restart)
    assert "".join(d.text for d in deltas[restart:]) == "second attempt"
    assert len(delays) == 1


def test_assembler_keeps_calls_by_index_and_the_last_usage():
    a = ChunkAssembler()
    a.add({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "y", "arguments": "{"}}]}}]})
    a.add({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x", "arguments": "{}"}}]}}]})
    a.add({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"arguments": "}"}}]}, "finish_reason": "tool_calls"}]})
    a.add({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}})
    body = a.body("m")
    calls = body["choices"][0]["message"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [("a", "x", "{}"), ("b", "y", "{}")]
    assert body["usage"] == {"prompt_tokens": 1, "completion_tokens": 2} and a.finished


async def test_models_without_stream_replay_their_completion():
    done = Completion(text="hi", tool_calls=[ToolCall(id="c", name="respond", arguments='{"message": "yo"}')],
                      usage=Usage(calls=1))
    model = ScriptedModel([done])
    deltas: list[StreamDelta] = []
    result = await model.stream(user(), deltas.append)
    assert result.text == "hi" and result.tool_calls[0].arguments == '{"message": "yo"}'
    assert deltas == [StreamDelta(text="hi"), StreamDelta(tool_index=0, tool_name="respond", arguments='{"message": "yo"}')]
