"""The local llama.cpp family: configured or detected from the server, once, only when a model is called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vance_cli.llm import server_probe
from vance_cli.llm.base import ChatRequest
from vance_cli.llm.capabilities import default_capabilities
from vance_cli.llm.factory import transport_for
from vance_cli.llm.profile import build_profile
from vance_cli.llm.server_probe import read_server
from vance_cli.messages import Message

DATA = Path(__file__).parent / "data"
LLAMA_SERVER_MODELS = json.loads((DATA / "llama_server_models.json").read_text())
LLAMA_SERVER_PROPS = json.loads((DATA / "llama_server_props.json").read_text())
LLAMA_CPP_PYTHON_MODELS = {
    "object": "list",
    "data": [{"id": "qwen", "object": "model", "owned_by": "me", "permissions": []}],
}


@pytest.fixture(autouse=True)
def _fresh_cache():
    server_probe.forget()
    yield
    server_probe.forget()


def test_the_recorded_llama_server_replies_are_read_as_llama_server_with_its_context():
    assert read_server(LLAMA_SERVER_MODELS) == server_probe.ServerInfo("llama-server", 8192, "/v1/models meta.n_ctx")
    older = {"data": [{"id": "m", "owned_by": "llamacpp"}]}  # no meta.n_ctx: /props says it
    assert read_server(older, LLAMA_SERVER_PROPS).context_window == 8192
    assert read_server(LLAMA_CPP_PYTHON_MODELS).family == "llama-cpp-python"
    assert read_server({"data": [{"id": "fake-model", "object": "model"}]}).family is None


def test_the_two_servers_differ_in_what_they_take():
    server = default_capabilities("openai/qwen", "http://127.0.0.1:8090/v1", server="llama-server")
    python = default_capabilities("openai/qwen", "http://127.0.0.1:8090/v1", server="llama-cpp-python")
    assert (server.family, server.json_schema, server.json_object, server.tool_mode) == ("llama-server", True, True, "auto")
    # llama-cpp-python's server answers json_schema with HTTP 500: never sent to it
    assert (python.family, python.json_schema, python.json_object, python.tool_mode) == (
        "llama-cpp-python", False, True, "auto")
    # everyone else stays native, and "other" is still "other"
    assert default_capabilities("openai/qwen", "http://127.0.0.1:8090/v1").family == "other"
    assert default_capabilities("openai/gpt-4o").tool_mode == "native"


@pytest.mark.parametrize("body,family,window", [
    (LLAMA_SERVER_MODELS, "llama-server", 8192),
    (LLAMA_CPP_PYTHON_MODELS, "llama-cpp-python", None),
])
async def test_detected_from_the_server_on_first_use_once(fake_openai, body, family, window):
    fake_openai.models_body = body
    profile = build_profile("openai/qwen", api_base=fake_openai.url, retries={"attempts": 1})
    assert profile.detect_server and profile.capabilities.family == "other"
    model = transport_for(profile, announce=None)
    assert fake_openai.get_paths == []  # building the model asks nothing
    assert model.capabilities.family == family and model.context_window == window
    fake_openai.enqueue(text="hi")
    await model.complete(ChatRequest(messages=[Message(role="user", content="x")]))
    again = transport_for(build_profile("openai/qwen", api_base=fake_openai.url), announce=None)
    assert again.capabilities.family == family
    assert fake_openai.get_paths == ["/v1/models"]  # once per process, whatever the number of models
    await model.aclose()


async def test_a_configured_family_is_never_probed_and_overrides_still_apply(fake_openai):
    profile = build_profile("openai/qwen", api_base=fake_openai.url,
                            capability_overrides={"family": "llama-cpp-python", "tool_mode": "schema"},
                            context_window=4096)
    model = transport_for(profile, announce=None)
    assert (model.capabilities.family, model.capabilities.json_schema, model.capabilities.tool_mode) == (
        "llama-cpp-python", False, "schema")
    assert model.context_window == 4096
    assert fake_openai.get_paths == []


def test_a_hosted_api_is_never_probed():
    assert not build_profile("openai/qwen", api_base="https://api.together.xyz/v1").detect_server
    assert build_profile("openai/qwen", api_base="http://192.168.1.9:8080/v1").detect_server
    assert not build_profile("anthropic/claude-haiku-4-5", api_base="http://127.0.0.1:9").detect_server


def test_a_dead_server_reads_as_not_recognised_quickly():
    import time

    started = time.monotonic()
    assert server_probe.probe_server("http://127.0.0.1:9/v1").family is None
    assert time.monotonic() - started < 3


def test_config_checks_tool_mode_and_context_window(vance_home):
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.errors import ConfigError
    from vance_cli.llm.profile import profile_for

    (vance_home / "config.toml").write_text(
        '[models."openai/q"]\napi_base = "http://127.0.0.1:9/v1"\ncontext_window = 2048\n'
        '[models."openai/q".capabilities]\nfamily = "llama-server"\n')
    profile = profile_for("openai/q", Settings.load(Scopes.discover(), env={}))
    assert (profile.capabilities.family, profile.capabilities.tool_mode, profile.context_window) == (
        "llama-server", "auto", 2048)
    assert not profile.detect_server
    (vance_home / "config.toml").write_text('[models."openai/q".capabilities]\ntool_mode = "grammar"\n')
    with pytest.raises(ConfigError, match="tool_mode"):
        Settings.load(Scopes.discover(), env={}).capability_overrides("openai/q")
