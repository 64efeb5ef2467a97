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


# OpenAI's Structured Outputs (response_format json_schema) came with gpt-4o-2024-08-06 and
# gpt-4o-mini; older chat models take JSON mode (json_object) from gpt-3.5-turbo-1106 and
# gpt-4-turbo on, and the first GPT-4 snapshots not even that. litellm's model map says nothing
# (None) for them, which must not read as "supported".
@pytest.mark.parametrize(
    "model,first",
    [
        ("openai/gpt-3.5-turbo", "json_object"),
        ("gpt-3.5-turbo-0125", "json_object"),
        ("gpt-3.5-turbo-1106", "json_object"),
        ("gpt-4-turbo", "json_object"),
        ("openai/gpt-4-turbo-2024-04-09", "json_object"),
        ("gpt-4-0125-preview", "json_object"),
        ("gpt-4o-2024-05-13", "json_object"),
        ("gpt-4", "prompt"),
        ("openai/gpt-4-0613", "prompt"),
        ("gpt-4-32k", "prompt"),
        ("gpt-3.5-turbo-0613", "prompt"),
        ("gpt-3.5-turbo-16k", "prompt"),
    ],
)
def test_openai_models_before_structured_outputs_are_not_sent_a_json_schema(model, first):
    from vance_cli.llm.output.plan import format_chain

    caps = default_capabilities(model)
    assert caps.family == "openai" and not caps.json_schema and not caps.strict_json_schema
    assert format_chain(caps)[0] == first


@pytest.mark.parametrize("model", ["gpt-4o", "openai/gpt-4o-2024-08-06", "gpt-4o-mini-2024-07-18", "gpt-4.1-mini", "gpt-4.5-preview", "gpt-5"])
def test_openai_models_since_structured_outputs_stay_strict(model):
    caps = default_capabilities(model)
    assert caps.json_schema and caps.strict_json_schema


# The o1 previews and GPT-4 Turbo with vision's previews take no response_format (and no tools):
# OpenAI answers "'response_format' of type 'json_schema' is not supported with this model" for
# o1-mini/o1-preview, and refused response_format and functions for gpt-4-vision-preview. litellm's
# model map has no entry for any of them.
@pytest.mark.parametrize("model", ["o1-mini", "o1-preview", "openai/o1-mini-2024-09-12", "o1-preview-2024-09-12",
                                   "gpt-4-vision-preview", "gpt-4-1106-vision-preview"])
def test_previews_without_response_format_get_the_schema_in_the_prompt(model):
    from vance_cli.llm.output.plan import format_chain

    caps = default_capabilities(model)
    assert caps.family == "openai"
    assert not caps.json_schema and not caps.strict_json_schema and not caps.json_object and not caps.tools
    assert format_chain(caps) == ["prompt"]


@pytest.mark.parametrize("model", ["openai/o1", "o1-2024-12-17", "o3-mini"])
def test_o_series_since_o1_keep_strict_json_schema(model):
    caps = default_capabilities(model)
    assert caps.json_schema and caps.strict_json_schema and caps.tools


# Only the GPT-4 snapshots OpenAI published lose json_schema: an unknown "gpt-4-..." name is not
# taken for an old one.
@pytest.mark.parametrize("model", ["gpt-4-new-thing", "openai/gpt-4-2026-01-01", "gpt-4-turbo-mini"])
def test_an_unknown_gpt4_name_keeps_json_schema(model):
    caps = default_capabilities(model)
    assert caps.json_schema and caps.strict_json_schema
