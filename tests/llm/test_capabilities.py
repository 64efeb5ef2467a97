"""The default capability table: what each provider family is trusted to do."""

from __future__ import annotations

import pytest

from vance_cli.llm.capabilities import default_capabilities


@pytest.mark.parametrize("model", ["openai/gpt-4o", "gpt-4o-mini", "o3-mini", "openai/o1", "o4-mini", "chatgpt-4o-latest"])
def test_openai_models_are_strict(model):
    caps = default_capabilities(model)
    assert caps.family == "openai" and caps.strict_json_schema


@pytest.mark.parametrize("model", ["openai/gpt-4o", "gpt-4o-mini", "openai/gpt-5.4-mini"])
def test_openai_chat_models_take_parallel_tool_calls(model):
    assert default_capabilities(model).parallel_tool_calls


@pytest.mark.parametrize("model", ["o3-mini", "openai/o1", "o4-mini"])
def test_o_series_models_do_not_get_parallel_tool_calls_as_litellms_map_says(model):
    # OpenAI rejects the parameter for its o-series; litellm's model map marks them false.
    assert default_capabilities(model).parallel_tool_calls is False


def test_the_map_only_narrows_hosted_models_it_marks_false():
    assert default_capabilities("openai/gpt-5-chat").tools is False  # map: no function calling
    assert default_capabilities("gemini/gemini-2.5-flash").tools  # map: true
    assert default_capabilities("anthropic/claude-some-future-model").tools  # unknown: the family default
    # a local server's model is never looked up, whatever its name
    assert default_capabilities("openai/gpt-5-chat", "http://127.0.0.1:8000/v1").tools


def test_openai_model_at_api_openai_com_is_still_strict():
    assert default_capabilities("openai/gpt-4o", "https://api.openai.com/v1").strict_json_schema


@pytest.mark.parametrize("base", ["http://127.0.0.1:8000/v1", "http://gpu-box:1234/v1"])
def test_openai_prefixed_model_on_another_server_is_not_strict(base):
    caps = default_capabilities("openai/gpt-oss-20b", base)
    assert caps.family == "other" and not caps.strict_json_schema


@pytest.mark.parametrize("model", ["anthropic/claude-3-5-sonnet-latest", "claude-3-haiku-20240307"])
def test_anthropic_uses_tools_for_schema_without_strictness(model):
    caps = default_capabilities(model)
    assert caps.family == "anthropic" and caps.tools and caps.json_schema and not caps.strict_json_schema


@pytest.mark.parametrize("model", ["gemini/gemini-1.5-flash", "vertex_ai/gemini-pro"])
def test_gemini_family(model):
    assert default_capabilities(model).family == "gemini"


@pytest.mark.parametrize("model,base", [("ollama/llama3", None), ("ollama_chat/qwen2.5", None),
                                        ("openai/llama3", "http://localhost:11434/v1")])
def test_ollama_has_tools_and_schema_but_no_parallel_calls(model, base):
    caps = default_capabilities(model, base)
    assert caps.family == "ollama"
    assert caps.tools and caps.json_schema and not caps.strict_json_schema and not caps.parallel_tool_calls


@pytest.mark.parametrize("model", ["openai/some-local-model", "mistral/mistral-large", "groq/llama3", "my-model"])
def test_unknown_models_are_conservative_but_keep_tools_and_schema(model):
    caps = default_capabilities(model, "http://127.0.0.1:9/v1")
    assert caps.family == "other"
    assert caps.tools and caps.json_schema
    assert not caps.strict_json_schema and not caps.parallel_tool_calls
