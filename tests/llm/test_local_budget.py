"""Time budgets for a local model (issue 18): a working llama.cpp server is never cut off, a hung
one still ends within max_total.

On this CPU one call to a 1.5B model takes 10-140 s, and a run died on the 120 s attempt / 180 s
call budget while the server was still working. For llama-server every call is streamed with
its prompt progress (the deltas of a call nobody displays are dropped), so each token and each
progress chunk is progress: max_total cuts only an attempt that has sent no chunk at all; SSE
comments (pings) are not progress.
"""
from __future__ import annotations

import time

import pytest

from tests.llm.test_contract import user
from vance_cli.errors import TransportError
from vance_cli.llm.capabilities import LOCAL_FAMILIES
from vance_cli.llm.openai_compat import OpenAICompatModel
from vance_cli.llm.profile import build_profile

TIGHT = {"attempts": 1, "base_delay": 0.0, "max_delay": 0.0, "max_total": 1.0}  # seconds for the whole call


def _local(url, family="llama-server", **kw):
    profile = build_profile("openai/qwen", api_base=url, retries=TIGHT, timeout=5.0, capabilities=LOCAL_FAMILIES[family], **kw)
    return OpenAICompatModel(profile)


async def test_a_local_model_still_writing_past_max_total_is_not_cut_off(fake_openai):
    text = "one two three four five six seven eight nine ten " * 2
    fake_openai.enqueue(text=text, chunk_delay=0.25)  # about 1.6 s of tokens > max_total 1 s
    model = _local(fake_openai.url)
    try:
        started = time.monotonic()
        completion = await model.complete(user())
        took = time.monotonic() - started
    finally:
        await model.aclose()
    assert completion.text == text
    assert took > TIGHT["max_total"]  # it really ran past the whole-call budget
    body = fake_openai.requests[-1]
    assert body["stream"] is True and body["return_progress"] is True  # llama-server's prompt progress


async def test_prompt_progress_counts_as_progress(fake_openai):
    fake_openai.enqueue(text="ready", progress=5, chunk_delay=0.3)  # 1.5 s reading the prompt, no token yet
    model = _local(fake_openai.url)
    try:
        completion = await model.complete(user())
    finally:
        await model.aclose()
    assert completion.text == "ready"


async def test_a_server_that_only_pings_still_ends_within_max_total(fake_openai):
    """llama-cpp-python's server sends ': ping' comments even while its model is stuck: not progress."""
    fake_openai.enqueue(text="late", keepalive=20, chunk_delay=0.3)  # 6 s of pings, then the answer
    model = _local(fake_openai.url, "llama-cpp-python")
    started = time.monotonic()
    try:
        with pytest.raises(TransportError):
            await model.stream(user(), lambda d: None)
    finally:
        await model.aclose()
    assert time.monotonic() - started < 4.0


async def test_llama_cpp_python_calls_are_not_streamed_behind_the_callers_back(fake_openai):
    """Its stream carries no usage: streamed, every call would count 0 tokens (review of issue 18)."""
    fake_openai.enqueue(text="hi", usage={"prompt_tokens": 1600, "completion_tokens": 3})
    model = _local(fake_openai.url, "llama-cpp-python")
    try:
        completion = await model.complete(user())
    finally:
        await model.aclose()
    assert completion.usage.prompt_tokens == 1600
    assert "stream" not in fake_openai.requests[-1]


async def test_a_hung_local_server_still_ends_within_max_total(fake_openai):
    fake_openai.enqueue(text="too late", delay=4.0)  # accepts the request and says nothing
    model = _local(fake_openai.url)
    started = time.monotonic()
    try:
        with pytest.raises(TransportError) as info:
            await model.complete(user())
    finally:
        await model.aclose()
    assert time.monotonic() - started < 3.0
    assert "budget of the whole call" in info.value.message


async def test_other_servers_are_not_streamed_behind_the_callers_back(fake_openai):
    fake_openai.enqueue(text="hi")
    profile = build_profile("openai/qwen", api_base=fake_openai.url, retries=TIGHT, timeout=5.0)
    model = OpenAICompatModel(profile)
    try:
        assert (await model.complete(user())).text == "hi"
    finally:
        await model.aclose()
    assert "stream" not in fake_openai.requests[-1]
