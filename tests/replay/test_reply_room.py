"""A reply cut off at the limit gets more room only when more room can help (issue 18; llm/room.py).

SmolLM2-135M looped: its cut-off reply got twice the room (4,096 -> 8,192 tokens, more than the
server's whole 8,192-token context) and the greeting took 593 s. A loop is not truncation, and the
room never exceeds what the context window leaves.
"""

from __future__ import annotations

import pytest

from tests.replay.conftest import chat
from vance_cli.llm.base import Completion
from vance_cli.llm.output.json_call import call_for_json
from vance_cli.llm.room import more_room_for, repeats_itself
from vance_cli.messages import Message, Usage

LOOP = "Hello! I'm here to help. " * 60
LINES = "\n".join(["def f():", "    return 1"] + ["print('hello world')"] * 40)
PROSE = " ".join(f"Item {n} costs {n * 3} dollars and ships in {n % 5 + 1} days." for n in range(80))


def test_a_loop_is_told_from_a_long_reply():
    assert repeats_itself(LOOP) and repeats_itself(LINES) and repeats_itself("ab" * 200)
    assert not repeats_itself(PROSE) and not repeats_itself("short " * 10)
    assert not repeats_itself('{"items": [' + ", ".join(f'{{"id": {n}, "name": "n{n * 7}"}}' for n in range(60)))


def _cut(text, prompt_tokens=0):
    return Completion(text=text, finish_reason="length", usage=Usage(calls=1, prompt_tokens=prompt_tokens))


def test_the_room_doubles_within_the_limit_and_the_window_and_never_for_a_loop():
    assert more_room_for(_cut(PROSE), 4096, output_limit=None, context_window=None).tokens == 8192
    # SmolLM's case: 8192 tokens of context, a 1,600-token prompt: at most 6,592 for the reply
    capped = more_room_for(_cut(PROSE, 1600), 4096, output_limit=None, context_window=8192)
    assert capped.tokens == 6592
    full = more_room_for(_cut(PROSE, 5000), 4096, output_limit=None, context_window=8192)
    assert full.tokens is None and "context window" in full.reason
    looped = more_room_for(_cut(LOOP, 1600), 4096, output_limit=None, context_window=8192)
    assert looped.tokens is None and "repeats itself" in looped.reason
    # a tool call written over and over is a loop too
    calls = Completion(finish_reason="length", tool_calls=[{"id": "c", "name": "respond", "arguments": LOOP}])
    assert more_room_for(calls, 4096, output_limit=None, context_window=None).tokens is None


@pytest.mark.parametrize("kind", ["direct"])
async def test_a_chat_reply_that_loops_gets_no_more_room(kind, tmp_path, fake_openai, make_model):
    fake_openai.enqueue(text=LOOP, finish_reason="length", usage={"prompt_tokens": 900, "completion_tokens": 500})
    fake_openai.enqueue(tool_calls=[("respond", {"message": "hi", "awaiting_user_input": True})])
    run = await chat(tmp_path, make_model(kind, "openai/some-model", fake_openai.url, max_tokens=500))
    assert run.messages == ["hi"]
    assert [body["max_tokens"] for body in fake_openai.requests] == [500, 500]
    assert any("repeats itself" in line for line in run.journal)


@pytest.mark.parametrize("kind", ["direct"])
async def test_a_chat_reply_gets_only_what_the_context_window_leaves(kind, tmp_path, fake_openai, make_model):
    fake_openai.enqueue(tool_calls=[("respond", '{"message": "The capital of Fra')], finish_reason="length",
                        usage={"prompt_tokens": 1600, "completion_tokens": 4096})
    fake_openai.enqueue(tool_calls=[("respond", {"message": "Paris", "awaiting_user_input": True})])
    model = make_model(kind, "openai/some-model", fake_openai.url, max_tokens=4096, context_window=8192)
    run = await chat(tmp_path, model)
    assert run.messages == ["Paris"]
    assert [body["max_tokens"] for body in fake_openai.requests] == [4096, 6592]  # not 8192


async def test_a_structure_reply_that_loops_is_not_asked_again_with_more_room(fake_openai, make_model):
    fake_openai.enqueue(text='{"name": "' + "la " * 300, finish_reason="length")
    fake_openai.enqueue(text='{"name": "Ada"}')
    model = make_model("direct", "openai/some-model", fake_openai.url, max_tokens=300)
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    result = await call_for_json(model, messages=[Message(role="user", content="Ada")], schema=schema)
    assert result.status == "ok"
    assert [body["max_tokens"] for body in fake_openai.requests] == [300, 300]
    assert any("repeats itself" in note for note in result.notes)
