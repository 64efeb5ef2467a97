"""Issue 17, keys: a provider key from the environment goes only to that provider's own host.

On the litellm path with VANCE_API_BASE (or a per-model api_base) pointing elsewhere and no
VANCE_API_KEY, litellm used to read OPENAI_API_KEY itself and send it to that endpoint. The local
test server records every Authorization header it gets.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli

OPENAI_KEY = "sk-openai-person-0123456789"


def _turn(server) -> None:
    server.enqueue(tool_calls=[("respond", {"message": "hi", "awaiting_user_input": True})])


def _sent(server) -> str:
    return json.dumps(server.request_headers) + json.dumps(server.requests)


def test_openai_key_is_not_sent_to_a_global_api_base(fake_openai):
    _turn(fake_openai)
    env = {
        "VANCE_MODEL": "openai/some-model",
        "VANCE_API_BASE": fake_openai.url,
        "VANCE_TRANSPORT": "litellm",
        "OPENAI_API_KEY": OPENAI_KEY,
    }
    r = run_cli("chat", "-p", "hello", env=env)
    assert r.returncode == 0, r.stderr
    assert len(fake_openai.requests) == 1
    assert OPENAI_KEY not in _sent(fake_openai)


def test_openai_key_is_not_sent_to_a_per_model_api_base(fake_openai, vance_home):
    (vance_home / "config.toml").write_text(
        f'[model]\ndefault = "openai/m"\n[models."openai/m"]\napi_base = "{fake_openai.url}"\ntransport = "litellm"\n'
    )
    _turn(fake_openai)
    r = run_cli("chat", "-p", "hello", env={"OPENAI_API_KEY": OPENAI_KEY})
    assert r.returncode == 0, r.stderr
    assert len(fake_openai.requests) == 1
    assert OPENAI_KEY not in _sent(fake_openai)


def test_a_key_the_person_configured_for_that_base_is_sent(fake_openai):
    _turn(fake_openai)
    env = {
        "VANCE_MODEL": "openai/some-model",
        "VANCE_API_BASE": fake_openai.url,
        "VANCE_API_KEY": "sk-for-this-base",
        "VANCE_TRANSPORT": "litellm",
        "OPENAI_API_KEY": OPENAI_KEY,
    }
    r = run_cli("chat", "-p", "hello", env=env)
    assert r.returncode == 0, r.stderr
    assert fake_openai.request_headers[0]["authorization"] == "Bearer sk-for-this-base"
    assert OPENAI_KEY not in _sent(fake_openai)


@pytest.mark.parametrize(
    "model,var",
    [
        ("deepinfra/m", "DEEPINFRA_API_KEY"),
        ("fireworks_ai/m", "FIREWORKS_AI_API_KEY"),
        ("perplexity/m", "PERPLEXITYAI_API_KEY"),
        ("custom_openai/m", "OPENAI_API_KEY"),
    ],
)
def test_a_provider_without_a_known_host_keeps_its_key(fake_openai, model, var):
    """A provider not in PROVIDER_HOSTS has no host its environment key is known to belong to:
    any api_base for it is foreign, so litellm gets a placeholder instead of reading ``var``."""
    _turn(fake_openai)
    env = {"VANCE_MODEL": model, "VANCE_API_BASE": fake_openai.url, "VANCE_TRANSPORT": "litellm", var: OPENAI_KEY}
    r = run_cli("chat", "-p", "hello", env=env)
    assert len(fake_openai.requests) == 1, r.stderr[-800:]
    assert OPENAI_KEY not in _sent(fake_openai)


def test_foreign_base_defaults_to_foreign():
    from vance_cli.llm.endpoints import foreign_base

    assert foreign_base("deepinfra/m", "http://evil.example/v1")
    assert foreign_base("openai/m", "http://127.0.0.1:9/v1")
    assert not foreign_base("openai/m", "https://api.openai.com/v1")
    assert not foreign_base("deepinfra/m", None)
