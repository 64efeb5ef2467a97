"""Time budgets for a local model (issue 18): a working llama.cpp server is never cut off, a hung
one still ends within max_total.

On this CPU one call to a 1.5B model takes 10-140 s, and a run died on the 120 s attempt / 180 s
call budget while the server was still working. For the local llama.cpp families every call is
streamed (the deltas of a call nobody displays are dropped), so each token and each keep-alive
comment is progress: max_total cuts only an attempt that has sent nothing at all.
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


@pytest.mark.parametrize("family", sorted(LOCAL_FAMILIES))
async def test_a_local_model_still_writing_past_max_total_is_not_cut_off(fake_openai, family):
    text = "one two three four five six seven eight nine ten " * 2
    fake_openai.enqueue(text=text, chunk_delay=0.25)  # about 1.6 s of tokens > max_total 1 s
    model = _local(fake_openai.url, family)
    try:
        started = time.monotonic()
        completion = await model.complete(user())
        took = time.monotonic() - started
    finally:
        await model.aclose()
    assert completion.text == text
    assert took > TIGHT["max_total"]  # it really ran past the whole-call budget
    assert fake_openai.requests[-1]["stream"] is True


async def test_keep_alive_comments_count_as_progress(fake_openai):
    fake_openai.enqueue(text="ready", keepalive=5, chunk_delay=0.3)  # 1.5 s of keep-alive, no token yet
    model = _local(fake_openai.url)
    try:
        completion = await model.stream(user(), lambda d: None)
    finally:
        await model.aclose()
    assert completion.text == "ready"


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
