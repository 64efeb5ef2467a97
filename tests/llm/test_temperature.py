"""Every request carries an explicit temperature, per model and per call type (issue 18).

Read from the wire: the suite's local OpenAI-compatible server records each request body, over both
transports (direct httpx and litellm).
"""

from __future__ import annotations

import pytest

from tests.llm.test_contract import FAST, litellm_loaded  # noqa: F401  (fixture)
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.errors import ConfigError
from vance_cli.llm.base import Capabilities, ChatRequest
from vance_cli.llm.capabilities import default_capabilities
from vance_cli.llm.factory import transport_for
from vance_cli.llm.output.json_call import call_for_json
from vance_cli.llm.profile import build_profile, profile_for
from vance_cli.messages import Message
from vance_cli.names import DEFAULT_TEMPERATURES


def _request(purpose=None, **kwargs):
    return ChatRequest(messages=[Message(role="user", content="hi")], purpose=purpose, **kwargs)


@pytest.fixture(params=["direct", "litellm"])
def transport(request):
    if request.param == "litellm":
        request.getfixturevalue("litellm_loaded")
    return request.param


async def test_each_call_type_sends_its_temperature_on_both_transports(fake_openai, transport):
    profile = build_profile("openai/qwen", api_base=fake_openai.url, transport=transport, retries=FAST,
                            capabilities=Capabilities(), temperature={"chat": 0.7, "controller": 0.05})
    model = transport_for(profile, announce=None)
    for purpose in (None, "chat", "worker", "controller", "structure", "summary"):
        fake_openai.enqueue(text="ok")
        await model.complete(_request(purpose))
    fake_openai.enqueue(text="ok")
    await model.stream(_request("worker"), lambda delta: None)
    fake_openai.enqueue(text="ok")
    await model.complete(_request("controller", temperature=1.1))  # a number on the request wins
    sent = [body["temperature"] for body in fake_openai.requests]
    d = DEFAULT_TEMPERATURES
    assert sent == [0.7, 0.7, d["worker"], 0.05, d["structure"], d["summary"], d["worker"], 1.1]
    await model.aclose()


def test_the_defaults_are_low_and_zero_for_controller_and_structure():
    assert DEFAULT_TEMPERATURES["controller"] == DEFAULT_TEMPERATURES["structure"] == 0.0
    assert all(0 <= value <= 0.3 for value in DEFAULT_TEMPERATURES.values())


def _settings(tmp_path, text):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
    return Settings.load(Scopes(user=home, project=None, cwd=tmp_path), env={})


def test_configured_globally_per_call_type_and_per_model(tmp_path):
    settings = _settings(tmp_path, """
[model.temperature]
chat = 0.6
[models."openai/small"]
temperature = 0.1
[models."openai/mixed".temperature]
structure = 0.3
""")
    other = profile_for("openai/other", settings)
    assert other.temperatures["chat"] == 0.6 and other.temperatures["controller"] == 0.0
    assert set(profile_for("openai/small", settings).temperatures.values()) == {0.1}
    mixed = profile_for("openai/mixed", settings)
    assert (mixed.temperatures["structure"], mixed.temperatures["chat"]) == (0.3, 0.6)


@pytest.mark.parametrize("text,problem", [
    ("[model.temperature]\nchatt = 0.2\n", "unknown call type"),
    ("[model]\ntemperature = 3\n", "between 0 and 2"),
    ('[models."m"]\ntemperature = "hot"\n', "expected a table"),
])
def test_a_bad_temperature_is_a_clear_config_error(tmp_path, text, problem):
    with pytest.raises(ConfigError, match=problem):
        _settings(tmp_path, text)


async def test_benjy_controller_and_structure_calls_are_typed(fake_openai):
    """call_for_json types its calls: structure by default, controller for Benjy's stages."""
    profile = build_profile("openai/qwen", api_base=fake_openai.url, retries=FAST, capabilities=Capabilities(),
                            temperature={"structure": 0.11, "controller": 0.22})
    model = transport_for(profile, announce=None)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    for purpose in ("structure", "controller"):
        fake_openai.enqueue(text='{"a": 1}')
        result = await call_for_json(model, messages=[Message(role="user", content="a=1")], schema=schema,
                                     purpose=purpose)
        assert result.status == "ok"
    assert [b["temperature"] for b in fake_openai.requests] == [0.11, 0.22]
    await model.aclose()


async def test_openai_reasoning_models_get_no_temperature(fake_openai):
    caps = default_capabilities("openai/gpt-5-mini")
    assert caps.temperature is False and default_capabilities("openai/gpt-4.1").temperature is True
    profile = build_profile("openai/gpt-5-mini", api_base=fake_openai.url, retries=FAST, capabilities=caps)
    model = transport_for(profile, announce=None)
    fake_openai.enqueue(text="ok")
    await model.complete(_request("chat"))
    assert "temperature" not in fake_openai.requests[0]
    await model.aclose()
