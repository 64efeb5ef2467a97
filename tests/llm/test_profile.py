"""ModelProfile: a model string and its settings, worked out once (capabilities, api_base, limits, price)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.config.settings_keys import CAPABILITY_KEYS
from vance_cli.llm import profile as profile_mod
from vance_cli.llm.base import Capabilities
from vance_cli.llm.factory import transport_for
from vance_cli.llm.model_map import DEFAULT_MAX_TOKENS
from vance_cli.llm.profile import build_profile, profile_for


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(env=None) -> Settings:
    return Settings.load(Scopes.discover(), env={} if env is None else env)


# ----------------------------------------------------------------------------- capabilities
# (moved from tests/config/test_settings.py with Settings.capabilities_for)


def test_capability_keys_mirror_the_capabilities_model():
    assert set(CAPABILITY_KEYS) == set(Capabilities.model_fields)


def test_capability_overrides_are_applied(vance_home):
    write(
        vance_home / "config.toml",
        '[models."openai/local"]\napi_base = "http://127.0.0.1:1/v1"\n'
        '[models."openai/local".capabilities]\ntools = false\nstrict_json_schema = true\nfamily = "ollama"\n',
    )
    caps = profile_for("openai/local", load()).capabilities
    assert isinstance(caps, Capabilities)
    assert (caps.tools, caps.strict_json_schema, caps.family) == (False, True, "ollama")


def test_capabilities_start_from_the_provider_table(monkeypatch, vance_home):
    seen = {}

    def fake_default(model, api_base=None):
        seen["args"] = (model, api_base)
        return Capabilities(family="openai", strict_json_schema=True, parallel_tool_calls=True)

    monkeypatch.setattr(profile_mod, "default_capabilities", fake_default)
    write(
        vance_home / "config.toml",
        '[models."openai/gpt-4o"]\napi_base = "http://x/v1"\n[models."openai/gpt-4o".capabilities]\nparallel_tool_calls = false\n',
    )
    caps = profile_for("openai/gpt-4o", load()).capabilities
    assert seen["args"] == ("openai/gpt-4o", "http://x/v1")
    assert (caps.family, caps.strict_json_schema, caps.parallel_tool_calls) == ("openai", True, False)


# ----------------------------------------------------------------------------- once, for both transports


def test_the_profile_is_what_both_transports_run_with(vance_home):
    write(
        vance_home / "config.toml",
        """
        [models."anthropic/claude-haiku-4-5"]
        api_base = "http://127.0.0.1:9/v1/messages"
        timeout = 7
        max_tokens = 321
        [models."anthropic/claude-haiku-4-5".retries]
        attempts = 2
        """,
    )
    profile = profile_for("anthropic/claude-haiku-4-5", load())
    # api_base as Anthropic's client appends to it; the capabilities decided from that base
    assert profile.api_base == "http://127.0.0.1:9" and profile.transport == "litellm"
    assert profile.capabilities.family == "anthropic"
    assert (profile.timeout, profile.max_tokens, profile.retries["attempts"]) == (7.0, 321, 2)
    for kind in ("litellm", "direct"):
        from dataclasses import replace

        model = transport_for(replace(profile, transport=kind), announce=None)
        assert (model.name, model.capabilities, model.max_tokens, model.timeout) == (
            profile.name,
            profile.capabilities,
            321,
            7.0,
        )
        assert model.retries == dict(profile.retries)


def test_defaults_without_settings():
    profile = build_profile("openai/my-local-model", api_base="http://127.0.0.1:9/v1/chat/completions")
    assert profile.api_base == "http://127.0.0.1:9/v1"  # not doubled by the client's /chat/completions
    assert profile.transport == "direct"
    assert profile.timeout == 120.0  # the one default, no 60 s fallback
    assert dict(profile.retries) == {"attempts": 4, "base_delay": 0.5, "max_delay": 4.0, "max_total": 180.0}
    assert profile.max_tokens == DEFAULT_MAX_TOKENS and profile.max_output_tokens is None
    assert profile.price is None and not profile.price_configured


def test_a_configured_price_wins_over_the_map():
    mapped = build_profile("openai/gpt-4o")
    assert mapped.price is not None and not mapped.price_configured
    configured = build_profile("openai/gpt-4o", price={"input": 2.0, "output": 10.0})
    assert configured.price_configured and configured.price.input == 2.0e-6
