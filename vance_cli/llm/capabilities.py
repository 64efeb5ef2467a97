"""Default capabilities per provider family, decided from the model string (and api_base) alone.

litellm's ``supports_*`` helpers answer "unsupported" for every model they have no price-list entry
for, which is every local and OpenAI-compatible model; we do not consult them. Instead a small table
says what each provider family is known to accept; per-model overrides in config.toml
(``[models."<model>".capabilities]``) correct it where it is wrong.
"""

from __future__ import annotations

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


def default_capabilities(model: str, api_base: str | None = None) -> Capabilities:
    """The table entry for ``model``; ``api_base`` tells OpenAI proper from OpenAI-compatible servers."""
    name = model.strip().lower()
    host, port = _host_port(api_base)

    if name.startswith(("scripted:", "function:")):
        # Test doubles: they accept anything; scripts can narrow this themselves.
        return Capabilities(family="other")

    if name.startswith(("anthropic/", "claude")):
        # Structured output goes through a forced tool call (litellm does it); nothing enforces it strictly.
        return Capabilities(
            family="anthropic", tools=True, json_schema=True, strict_json_schema=False,
            json_object=False, parallel_tool_calls=True,
        )
    if name.startswith(("gemini/", "vertex_ai/", "gemini-")):
        return Capabilities(
            family="gemini", tools=True, json_schema=True, strict_json_schema=False,
            json_object=True, parallel_tool_calls=True,
        )
    if name.startswith(("ollama/", "ollama_chat/")) or (name.startswith("openai/") and port == _OLLAMA_PORT):
        return Capabilities(
            family="ollama", tools=True, json_schema=True, strict_json_schema=False,
            json_object=True, parallel_tool_calls=False,
        )

    bare = name.removeprefix("openai/")
    if bare.startswith(_OPENAI_NAMES) and (host is None or host == OPENAI_HOST):
        return Capabilities(
            family="openai", tools=True, json_schema=True, strict_json_schema=True,
            json_object=True, parallel_tool_calls=True,
        )

    # Anything else, including "openai/<local model>" behind vLLM, llama.cpp or LM Studio: tools and
    # json_schema are widely accepted; strictness, json_object (LM Studio rejects it) and the
    # parallel_tool_calls parameter are not.
    return Capabilities(
        family="other", tools=True, json_schema=True, strict_json_schema=False,
        json_object=False, parallel_tool_calls=False,
    )
