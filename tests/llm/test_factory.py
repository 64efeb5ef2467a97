"""make_model: scripted:PATH, transport selection, and cheap imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vance_cli.errors import ConfigError
from vance_cli.llm.base import Capabilities
from vance_cli.llm.factory import make_model
from vance_cli.llm.openai_compat import OpenAICompatModel
from vance_cli.llm.profile import select_transport
from vance_cli.llm.scripted import ScriptedModel

REPO = Path(__file__).resolve().parents[2]


class FakeSettings:
    """Duck-typed stand-in for config.Settings (model_options, capability_overrides)."""

    def __init__(self, **options):
        self.options = {"api_base": None, "api_key": None, "transport": "auto", "timeout": 30,
                        "retries": {"attempts": 2, "base_delay": 0.0}, **options}
        self.asked: list[str] = []

    def model_options(self, model):
        self.asked.append(model)
        return dict(self.options)

    def capability_overrides(self, model):
        return {}


@pytest.mark.parametrize("model,transport,api_base,expected", [
    ("openai/qwen2.5", "auto", "http://127.0.0.1:8000/v1", "direct"),
    ("llama3", "auto", "http://127.0.0.1:8000/v1", "direct"),
    ("openai/gpt-4o", "auto", None, "litellm"),
    ("anthropic/claude-3-5-sonnet-latest", "auto", "http://127.0.0.1:8000", "litellm"),
    ("ollama/llama3", "auto", "http://localhost:11434", "litellm"),
    ("meta-llama/Llama-3-8B", "auto", "http://127.0.0.1:8000/v1", "litellm"),
    ("openai/gpt-4o", "direct", None, "direct"),
    ("openai/qwen", "litellm", "http://127.0.0.1:8000/v1", "litellm"),
    ("openai/qwen", None, "http://127.0.0.1:8000/v1", "direct"),
    ("openai/qwen", "DIRECT", None, "direct"),
])
def test_transport_selection(model, transport, api_base, expected):
    assert select_transport(model, transport, api_base) == expected


def test_unknown_transport_is_a_config_error_naming_the_setting():
    with pytest.raises(ConfigError) as info:
        select_transport("openai/x", "carrier-pigeon", None)
    assert "carrier-pigeon" in info.value.message and "VANCE_TRANSPORT" in info.value.hint


def test_auto_with_api_base_builds_the_direct_model_with_options():
    settings = FakeSettings(api_base="http://127.0.0.1:9/v1", api_key="k", timeout=12)
    model = make_model("openai/qwen2.5", settings)
    assert isinstance(model, OpenAICompatModel)
    assert (model.name, model.wire_model, model.api_base, model.api_key, model.timeout) == (
        "openai/qwen2.5", "qwen2.5", "http://127.0.0.1:9/v1", "k", 12.0)
    assert model.retries["attempts"] == 2 and model.retries["base_delay"] == 0.0
    assert model.capabilities.family == "other"
    assert settings.asked == ["openai/qwen2.5"]


def test_litellm_transport_builds_the_litellm_model_without_importing_litellm():
    model = make_model("anthropic/claude-3-5-sonnet-latest", FakeSettings())
    assert type(model).__name__ == "LiteLLMModel"
    assert model.capabilities.family == "anthropic"


def test_scripted_model_string_loads_the_script(tmp_path):
    script = tmp_path / "demo.yaml"
    script.write_text("- hello\n- tool_calls: [{name: respond, arguments: {message: hi}}]\n")
    model = make_model(f"scripted:{script}", FakeSettings())
    assert isinstance(model, ScriptedModel)
    assert model.name == f"scripted:{script}" and model.remaining == 2


def test_scripted_capabilities_from_the_file_win(tmp_path):
    script = tmp_path / "demo.json"
    script.write_text('{"replies": ["x"], "capabilities": {"strict_json_schema": true}}')
    assert make_model(f"scripted:{script}", FakeSettings()).capabilities.strict_json_schema


def test_scripted_without_path_or_with_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="without a script path"):
        make_model("scripted:", FakeSettings())
    with pytest.raises(ConfigError, match="not found"):
        make_model(f"scripted:{tmp_path / 'nope.yaml'}", FakeSettings())


def test_make_model_results_satisfy_the_chatmodel_protocol():
    from vance_cli.llm.base import ChatModel

    assert isinstance(make_model("openai/x", FakeSettings(api_base="http://127.0.0.1:1/v1")), ChatModel)
    assert isinstance(ScriptedModel(["a"], capabilities=Capabilities()), ChatModel)


def test_importing_factory_direct_and_scripted_does_not_import_litellm():
    code = (
        "import sys, vance_cli.llm.factory, vance_cli.llm.openai_compat, vance_cli.llm.scripted, "
        "vance_cli.llm.retry, vance_cli.llm.guard, vance_cli.llm.capabilities; "
        "assert 'litellm' not in sys.modules, 'litellm imported'; "
        "assert 'openai' not in sys.modules, 'openai SDK imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr



def test_litellm_is_imported_offline_and_quiet(monkeypatch):
    """_litellm() defaults LITELLM_LOCAL_MODEL_COST_MAP (else litellm fetches a price list from
    the internet at import time) and switches off litellm's own prints."""
    import os
    import sys
    import types

    from vance_cli.llm import litellm_model

    fake = types.ModuleType("litellm")
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    monkeypatch.setitem(sys.modules, "litellm", fake)  # the real import costs seconds
    assert litellm_model._litellm() is fake
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert fake.suppress_debug_info is True and fake.set_verbose is False and fake.drop_params is True


def test_a_users_cost_map_choice_is_kept(monkeypatch):
    import os
    import sys
    import types

    from vance_cli.llm import litellm_model

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "False")
    monkeypatch.setitem(sys.modules, "litellm", types.ModuleType("litellm"))
    litellm_model._litellm()
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "False"
