"""What every request carries and where it goes: max_tokens always, api_base per provider, the
price of a call, and a retry budget that bounds the whole call (and says what it is doing)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

from tests.cli.helpers import vance
from tests.replay.conftest import response, serve
from vance_cli.llm.base import ChatRequest
from vance_cli.llm.endpoints import normalize_api_base
from vance_cli.llm.model_map import DEFAULT_MAX_TOKENS, map_path
from vance_cli.messages import Message

ASK = ChatRequest(messages=[Message(role="user", content="hello")])


def litellm_map() -> dict:
    return json.loads(map_path().read_text(encoding="utf-8"))


# --- max_tokens -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["direct", "litellm"])
async def test_max_tokens_is_always_sent_from_the_map_or_the_default(kind, fake_openai, make_model):
    for _ in range(2):
        fake_openai.enqueue(text="x")
    known = make_model(kind, "openai/gpt-4o-mini", fake_openai.url)
    unknown = make_model(kind, "openai/my-local-model", fake_openai.url)
    await known.complete(ASK)
    await unknown.complete(ASK)
    assert fake_openai.requests[0]["max_tokens"] == litellm_map()["gpt-4o-mini"]["max_output_tokens"]
    assert fake_openai.requests[1]["max_tokens"] == DEFAULT_MAX_TOKENS


async def test_anthropic_never_gets_litellms_128000_for_a_model_it_does_not_know(fake_openai, make_model):
    fake_openai.enqueue(text="x")
    model = make_model("litellm", "anthropic/claude-not-in-the-map-9", fake_openai.url_root)
    await model.complete(ASK)
    assert fake_openai.requests[0]["max_tokens"] == DEFAULT_MAX_TOKENS  # litellm alone sends 128000


@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_max_tokens_and_price_are_configurable_per_model(transport, fake_openai, tmp_path):
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.llm.factory import make_model

    (tmp_path / "config.toml").write_text(
        f'[models."openai/my-local-model"]\napi_base = "{fake_openai.url}"\ntransport = "{transport}"\n'
        'max_tokens = 777\n[models."openai/my-local-model".price]\ninput = 2.0\noutput = 10.0\n'
    )
    settings = Settings.load(Scopes.discover(), env={"VANCE_HOME": str(tmp_path)})
    settings = Settings(settings.scopes, {**settings.as_dict(), **_load(tmp_path / "config.toml")})
    model = make_model("openai/my-local-model", settings)
    assert model.max_tokens == 777
    fake_openai.enqueue(text="x", usage={"prompt_tokens": 1000, "completion_tokens": 100})

    import asyncio

    completion = asyncio.run(model.complete(ASK))
    assert fake_openai.requests[0]["max_tokens"] == 777
    assert completion.usage.cost == pytest.approx(1000 * 2.0e-6 + 100 * 10.0e-6)


def _load(path):
    import tomllib

    return tomllib.loads(path.read_text())


async def test_openai_itself_gets_max_completion_tokens(monkeypatch):
    # OpenAI's reasoning models reject max_tokens. No network: httpx's MockTransport answers.
    from vance_cli.llm.openai_compat import OpenAICompatModel
    from vance_cli.llm.profile import build_profile

    monkeypatch.setenv("VANCE_ALLOW_MODEL_REQUESTS", "1")
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=response("openai_text"))

    profile = build_profile("openai/o3-mini", api_base="https://api.openai.com/v1", api_key="sk-test")
    model = OpenAICompatModel(profile, transport=httpx.MockTransport(handler), announce=None)
    await model.complete(ASK)
    await model.aclose()
    assert "max_tokens" not in seen[0]
    assert seen[0]["max_completion_tokens"] == litellm_map()["o3-mini"]["max_output_tokens"]


def test_reading_the_model_map_never_imports_litellm():
    code = (
        "import sys\n"
        "from vance_cli.llm.openai_compat import OpenAICompatModel\n"
        "from vance_cli.llm.capabilities import default_capabilities\n"
        "from vance_cli.llm.profile import build_profile\n"
        "m = OpenAICompatModel(build_profile('openai/gpt-4o-mini', api_base='http://127.0.0.1:9/v1'))\n"
        "assert m.max_tokens == 16384 and m.price is not None, (m.max_tokens, m.price)\n"
        "assert default_capabilities('o3-mini').parallel_tool_calls is False\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# --- api_base ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model,given,expected", [
    ("anthropic/claude-haiku-4-5", "http://h:1/v1", "http://h:1"),
    ("anthropic/claude-haiku-4-5", "http://h:1/v1/", "http://h:1"),
    ("anthropic/claude-haiku-4-5", "http://h:1/v1/messages", "http://h:1"),
    ("anthropic/claude-haiku-4-5", "https://proxy.example/anthropic", "https://proxy.example/anthropic"),
    ("gemini/gemini-2.5-flash", "http://h:1", "http://h:1/v1beta"),
    ("gemini/gemini-2.5-flash", "http://h:1/", "http://h:1/v1beta"),
    ("gemini/gemini-2.5-flash", "http://h:1/v1beta", "http://h:1/v1beta"),
    ("gemini/gemini-2.5-flash", "http://h:1/v1", "http://h:1/v1"),
    ("gemini/gemini-2.5-flash", "https://generativelanguage.googleapis.com/v1beta/openai",
     "https://generativelanguage.googleapis.com/v1beta"),
    ("ollama_chat/llama3.1", "http://localhost:11434/v1", "http://localhost:11434"),
    ("ollama/llama3.1", "http://localhost:11434", "http://localhost:11434"),
    ("openai/m", "http://h:8000/v1/chat/completions", "http://h:8000/v1"),
    ("openai/m", "http://h:8000/v1", "http://h:8000/v1"),
    ("m", "http://h:8000", "http://h:8000"),
    ("openai/m", None, None),
])
def test_api_base_is_written_the_way_each_provider_appends_to_it(model, given, expected):
    assert normalize_api_base(model, given) == expected


@pytest.mark.parametrize("model,base,path", [
    ("anthropic/claude-haiku-4-5", "url", "/v1/messages"),  # not /v1/v1/messages
    ("gemini/gemini-2.5-flash", "url_root", "/v1beta/models/gemini-2.5-flash:generateContent"),
])
async def test_one_vance_api_base_reaches_each_providers_path(model, base, path, fake_openai, make_model):
    fake_openai.enqueue(text="x")
    completion = await make_model("litellm", model, getattr(fake_openai, base)).complete(ASK)
    assert completion.text == "x"
    assert fake_openai.paths[0].split("?")[0] == path


async def test_a_pasted_chat_completions_url_is_not_doubled(fake_openai, make_model):
    fake_openai.enqueue(text="x")
    model = make_model("direct", "openai/m", fake_openai.url + "/chat/completions")
    assert (await model.complete(ASK)).text == "x"
    assert fake_openai.paths == ["/v1/chat/completions"]


async def test_a_query_string_in_api_base_stays_after_the_path(fake_openai, make_model):
    # Azure's OpenAI-compatible v1 endpoint is written with ?api-version=...: the path goes before it.
    fake_openai.enqueue(text="x")
    model = make_model("direct", "openai/m", fake_openai.url + "/?api-version=preview")
    assert (await model.complete(ASK)).text == "x"
    assert fake_openai.paths == ["/v1/chat/completions?api-version=preview"]


# --- cost -------------------------------------------------------------------------------------


async def test_the_direct_transport_prices_a_call_from_litellms_map(fake_openai, make_model):
    body = response("openai_text")  # gpt-4o usage as recorded
    fake_openai.enqueue_raw(body)
    model = make_model("direct", "openai/gpt-4o", fake_openai.url)
    usage = (await model.complete(ASK)).usage
    entry = litellm_map()["gpt-4o"]
    cached = (body["usage"].get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    expected = ((body["usage"]["prompt_tokens"] - cached) * entry["input_cost_per_token"]
                + cached * entry.get("cache_read_input_token_cost", 0)
                + body["usage"]["completion_tokens"] * entry["output_cost_per_token"])
    assert usage.cost == pytest.approx(expected) and usage.cost > 0


async def test_a_configured_price_wins_in_both_transports(fake_openai, make_model):
    price = {"input": 3.0, "output": 15.0, "cached_input": 0.3}
    for kind in ("direct", "litellm"):
        fake_openai.enqueue(text="x", usage={"prompt_tokens": 2000, "completion_tokens": 500})
        model = make_model(kind, "openai/gpt-4o", fake_openai.url, price=price)
        usage = (await model.complete(ASK)).usage
        assert usage.cost == pytest.approx(2000 * 3e-6 + 500 * 15e-6), kind


@pytest.mark.parametrize("kind", ["direct", "litellm"])
async def test_cached_prompt_tokens_are_priced_at_the_cached_rate(kind, fake_openai, make_model):
    body = response("deepseek_thinking_tool_calls", 0)  # 563 prompt tokens, 512 of them from the cache
    fake_openai.enqueue_raw(body)
    price = {"input": 0.28, "output": 0.42, "cached_input": 0.028}
    model = make_model(kind, "openai/deepseek-reasoner", fake_openai.url, price=price)
    usage = (await model.complete(ASK)).usage
    assert usage.cost == pytest.approx((563 - 512) * 0.28e-6 + 512 * 0.028e-6 + 116 * 0.42e-6)


async def test_an_unknown_local_model_costs_nothing(fake_openai, make_model):
    fake_openai.enqueue(text="x")
    assert (await make_model("direct", "openai/my-local-model", fake_openai.url).complete(ASK)).usage.cost == 0.0


# --- the whole-call budget ----------------------------------------------------------------------


def test_a_server_that_accepts_and_never_answers_is_bounded_and_announced(fake_openai, vance_home):
    (vance_home / "config.toml").write_text(
        "[model]\ntimeout = 1\n[model.retries]\nattempts = 4\nbase_delay = 0.1\nmax_delay = 0.1\nmax_total = 2.5\n"
    )
    for _ in range(4):
        fake_openai.enqueue(text="far too late", delay=8)
    env = {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}
    started = time.monotonic()
    r = vance("chat", "-p", "hello", env=env, timeout=60)
    took = time.monotonic() - started
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    # Before: 4 attempts x the timeout, silent. Now: at most max_total (plus start-up), and each
    # retry said on stderr.
    assert took < 15, took
    assert r.stderr.count("; retrying in 0.1s (attempt ") >= 1
    assert f"vance: openai/some-model at {fake_openai.url}: no answer within 1s (timed out); retrying in 0.1s (attempt 2 of 4)" in r.stderr
    assert "accepted the request but did not answer" in r.stderr  # the hint fits the fault
    assert "model.retries.max_total" in r.stderr
    assert len(fake_openai.requests) <= 3


BUDGET = {"attempts": 3, "base_delay": 0.0, "max_delay": 0.0, "max_total": 1.5}


@pytest.mark.parametrize("kind", ["direct", "litellm"])
async def test_a_stream_that_never_starts_is_bounded_by_max_total(kind, fake_openai, make_model):
    # The full-screen console streams: a hung server must cost max_total there too, not
    # attempts x timeout (each attempt here would wait 5 s for its first byte).
    from vance_cli.errors import TransportError
    for _ in range(3):
        fake_openai.enqueue(text="far too late", delay=8)
    model = make_model(kind, "openai/some-model", fake_openai.url, timeout=5.0, retries=BUDGET)
    started = time.monotonic()
    with pytest.raises(TransportError) as info:
        await model.stream(ASK, lambda delta: None)
    assert time.monotonic() - started < 3.5
    assert "1.5s budget of the whole call" in info.value.message


@pytest.mark.parametrize("kind", ["direct", "litellm"])
async def test_a_stream_that_keeps_sending_outlives_max_total(kind, fake_openai, make_model):
    fake_openai.enqueue(text="a reply in several pieces", chunk_delay=0.3)  # ~6 chunks, ~2 s in all
    model = make_model(kind, "openai/some-model", fake_openai.url, timeout=5.0, retries=BUDGET)
    completion = await model.stream(ASK, lambda delta: None)
    assert completion.text == "a reply in several pieces"


def test_a_refused_connection_gets_the_address_hint_not_the_hung_server_hint(vance_home):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 2\nbase_delay = 0\nmax_delay = 0\n")
    env = {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": f"http://127.0.0.1:{port}/v1"}
    r = vance("chat", "-p", "hello", env=env, timeout=60)
    assert r.returncode == 1
    assert "cannot connect" in r.stderr and "is the server running and reachable?" in r.stderr
    assert "did not answer" not in r.stderr
    assert f"vance: openai/some-model at http://127.0.0.1:{port}/v1: cannot connect: " in r.stderr
    assert "retrying in 0s (attempt 2 of 2)" in r.stderr


async def test_the_structure_cli_says_refused_with_exit_5(fake_openai, vance_home):
    serve(fake_openai, "openai_refusal")
    env = {"VANCE_MODEL": "openai/gpt-4o", "VANCE_API_BASE": fake_openai.url}
    schema = json.dumps({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    r = vance("structure", "How do I make anthrax?", "--schema", schema, env=env, timeout=60)
    assert r.returncode == 5, r.stderr
    assert r.stdout == ""
    assert "refused: the model declined to answer: I'm very sorry, but I can't assist with that." in r.stderr
    serve(fake_openai, "openai_refusal")
    r = vance("structure", "How do I make anthrax?", "--schema", schema, "--json", env=env, timeout=60)
    assert r.returncode == 5
    out = json.loads(r.stdout)
    assert out["status"] == "refused" and out["refusal"] == "I'm very sorry, but I can't assist with that."
    assert "errors" not in out and "data" not in out
