"""Default capabilities per provider family, decided from the model string (and api_base) alone.

litellm's ``supports_*`` helpers answer "unsupported" for every model they have no price-list entry
for, which is every local and OpenAI-compatible model; we do not consult them. Instead a small table
says what each provider family is known to accept; for the hosted families (OpenAI, Anthropic,
Gemini) an explicit ``false`` in litellm's model map narrows it for that model (read from the JSON
file, see ``model_map``); per-model overrides in config.toml (``[models."<model>".capabilities]``)
correct it where it is still wrong.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from vance_cli.llm.base import Capabilities

OPENAI_HOST = "api.openai.com"
# OpenAI's own model names; with the "openai/" prefix or bare, as litellm accepts both.
_OPENAI_NAMES = ("gpt-", "chatgpt-", "o1", "o3", "o4")
# Ollama's default port: an "openai/<model>" pointed at it is Ollama's OpenAI-compatible /v1.
_OLLAMA_PORT = 11434


def _host_port(api_base: str | None) -> tuple[str | None, int | None]:
    if not api_base:
        return None, None
    try:
        parts = urlsplit(api_base if "//" in api_base else "//" + api_base)
        return (parts.hostname or "").lower() or None, parts.port
    except ValueError:
        return None, None


# The local llama.cpp family: what each server enforces and rejects (issue 18, first contact).
# llama-server (--jinja) turns response_format json_schema (and json_object) into a grammar, so
# the reply is constrained; it parses tool calls only when the model writes its template's
# markers, and did not enforce tool_choice "required": tool_mode "auto".
# llama-cpp-python's server rejects json_schema with HTTP 500 ("response_format.type: Input should
# be 'text' or 'json_object'") and takes json_object; its chatml-function-calling drops the tools
# when tool_choice is missing: tool_mode "auto".
# compact_prompt stays off for both: measured on Qwen2.5-Coder 0.5B (bench/README.md) the compact
# prompt solved 0 of 12 chat cases against 1 of 12 with the full one.
LOCAL_FAMILIES: dict[str, Capabilities] = {
    "llama-server": Capabilities(
        family="llama-server", tools=True, json_schema=True, strict_json_schema=False,
        json_object=True, parallel_tool_calls=False, tool_mode="auto",
    ),
    "llama-cpp-python": Capabilities(
        family="llama-cpp-python", tools=True, json_schema=False, strict_json_schema=False,
        json_object=True, parallel_tool_calls=False, tool_mode="auto",
    ),
}


def default_capabilities(model: str, api_base: str | None = None, server: str | None = None) -> Capabilities:
    """The table entry for ``model``; ``api_base`` tells OpenAI proper from OpenAI-compatible servers;
    ``server`` is a local family detected from the server (``server_probe``) or configured."""
    if server in LOCAL_FAMILIES:
        return LOCAL_FAMILIES[server]
    name = model.strip().lower()
    host, port = _host_port(api_base)

    if name.startswith(("scripted:", "function:")):
        # Test doubles: they accept anything; scripts can narrow this themselves.
        return Capabilities(family="other")

    if name.startswith(("anthropic/", "claude")):
        # Structured output goes through a forced tool call (litellm does it); nothing enforces it strictly.
        return _as_the_map_says(model, Capabilities(
            family="anthropic", tools=True, json_schema=True, strict_json_schema=False,
            json_object=False, parallel_tool_calls=True,
        ))
    if name.startswith(("gemini/", "vertex_ai/", "gemini-")):
        return _as_the_map_says(model, Capabilities(
            family="gemini", tools=True, json_schema=True, strict_json_schema=False,
            json_object=True, parallel_tool_calls=True,
        ))
    if name.startswith(("ollama/", "ollama_chat/")) or (name.startswith("openai/") and port == _OLLAMA_PORT):
        return Capabilities(
            family="ollama", tools=True, json_schema=True, strict_json_schema=False,
            json_object=True, parallel_tool_calls=False,
        )

    bare = name.removeprefix("openai/")
    if bare.startswith(_OPENAI_NAMES) and (host is None or host == OPENAI_HOST):
        caps = _as_the_map_says(model, Capabilities(
            family="openai", tools=True, json_schema=True, strict_json_schema=True,
            json_object=True, parallel_tool_calls=True,
        ))
        caps = _before_structured_outputs(bare, caps)
        # OpenAI's reasoning models (o-series, gpt-5) reject any temperature but their default.
        return caps.model_copy(update={"temperature": False}) if _reasoning(model) else caps

    # Anything else, including "openai/<local model>" behind vLLM, llama.cpp or LM Studio: tools and
    # json_schema are widely accepted; strictness, json_object (LM Studio rejects it) and the
    # parallel_tool_calls parameter are not.
    return Capabilities(
        family="other", tools=True, json_schema=True, strict_json_schema=False,
        json_object=False, parallel_tool_calls=False,
    )


# litellm's model map flag -> the capability it can switch off. Only an explicit false counts:
# the map says nothing (None) about most models, and "unknown" must not read as "unsupported".
_MAP_FLAGS = (
    ("supports_function_calling", "tools"),
    ("supports_response_schema", "json_schema"),
    ("supports_parallel_function_calling", "parallel_tool_calls"),
)


# OpenAI chat models older than Structured Outputs (response_format json_schema), which came with
# gpt-4o-2024-08-06 and gpt-4o-mini. JSON mode (json_object) works from gpt-3.5-turbo-1106 and
# gpt-4-turbo (the -preview snapshots) on; the first GPT-4 and GPT-3.5 snapshots take neither.
# litellm's model map leaves supports_response_schema unset for them (None, not false). Only the
# snapshots OpenAI published: an unknown "gpt-4-<name>" is a newer model, not an old one.
_NO_JSON_SCHEMA = re.compile(
    r"gpt-3\.5-turbo(-.*)?|gpt-4(-0314|-0613|-32k(-0314|-0613)?|-turbo(-preview|-2024-04-09)?|-1106-preview"
    r"|-0125-preview)?|gpt-4o-2024-05-13"
)
_NO_JSON_OBJECT = re.compile(r"gpt-4(-0314|-0613|-32k.*)?|gpt-3\.5-turbo-(0301|0613|16k.*)")
# No response_format and no tools at all: the o1 previews (o1-preview, o1-mini: "'response_format'
# of type 'json_schema' is not supported with this model", "tools is not supported in this model";
# Structured Outputs came with o1-2024-12-17) and GPT-4 Turbo with vision's previews ("response_format
# ... extra fields not permitted", "Unrecognized request argument supplied: functions"). litellm's
# model map has no entry for them.
_NO_RESPONSE_FORMAT = re.compile(r"o1-(mini|preview)(-2024-09-12)?|gpt-4(-1106)?-vision-preview")


def _before_structured_outputs(bare: str, caps: Capabilities) -> Capabilities:
    """``caps`` without json_schema (and strictness) for an OpenAI model that predates Structured
    Outputs, and without json_object for one that predates JSON mode (or, for the o1 and vision
    previews, without any response_format or tools)."""
    if _NO_RESPONSE_FORMAT.fullmatch(bare):
        return caps.model_copy(update={
            "json_schema": False, "strict_json_schema": False, "json_object": False, "tools": False,
        })
    if not _NO_JSON_SCHEMA.fullmatch(bare):
        return caps
    return caps.model_copy(update={
        "json_schema": False, "strict_json_schema": False,
        "json_object": caps.json_object and not _NO_JSON_OBJECT.fullmatch(bare),
    })


def _reasoning(model: str) -> bool:
    from vance_cli.llm.model_map import model_info

    return (model_info(model) or {}).get("supports_reasoning") is True or model.removeprefix("openai/").startswith(
        ("o1", "o3", "o4", "gpt-5")
    )


def _as_the_map_says(model: str, caps: Capabilities) -> Capabilities:
    """The family's defaults, narrowed where litellm's model map says this hosted model cannot
    (OpenAI's o-series reject ``parallel_tool_calls``, gpt-5-chat has no tool calling, ...)."""
    from vance_cli.llm.model_map import model_info

    info = model_info(model) or {}
    off = {cap: False for flag, cap in _MAP_FLAGS if info.get(flag) is False}
    if off.get("json_schema") is False:
        off["strict_json_schema"] = False
    return caps.model_copy(update=off) if off else caps
