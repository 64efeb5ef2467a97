"""Model strings to ChatModels: ``scripted:PATH``, the direct OpenAI-compatible transport, or litellm.

Transport selection (``model.transport`` / ``VANCE_TRANSPORT`` / ``[models."<m>"] transport``,
decided in ``profile.select_transport``):

- ``direct``: OpenAICompatModel over httpx (fast start; OpenAI wire format only).
- ``litellm``: LiteLLMModel (every provider litellm knows; ``import litellm`` costs seconds).
- ``auto`` (default): direct when an ``api_base`` is set and the model string is ``openai/<name>``
  or has no provider prefix (Ollama's /v1, vLLM, llama.cpp server, LM Studio, OpenAI itself);
  litellm otherwise (``anthropic/...``, ``gemini/...``, ``ollama/...``, or no ``api_base``).

A network model's settings become one ModelProfile (llm/profile.py) first, and the transport is
built from it. Implementations are imported inside the functions so importing this module stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vance_cli.errors import ConfigError
from vance_cli.llm.base import ChatModel
from vance_cli.llm.profile import ModelProfile, SettingsLike, capabilities_for, profile_for

SCRIPTED_PREFIX = "scripted:"


def script_file(model: str) -> Path | None:
    """The file a ``scripted:PATH`` model reads (relative to the current directory, as open()
    reads it), or None for any other model string: the one reading of the path, shared by the
    model and the check that a shipped process file does not bring its own brain."""
    if not model.startswith(SCRIPTED_PREFIX):
        return None
    return Path(model[len(SCRIPTED_PREFIX) :].strip()).expanduser()


def make_model(model: str, settings: SettingsLike) -> ChatModel:
    """The ChatModel for a resolved model string (aliases are resolved by Settings.resolve_model)."""
    local = local_model(model, settings)
    return local if local is not None else transport_for(profile_for(model, settings))


def local_model(model: str, settings: SettingsLike) -> ChatModel | None:
    """The model for a string that names no provider (``scripted:PATH``), or None for a network model."""
    if model.startswith(SCRIPTED_PREFIX):
        from vance_cli.llm.scripted import ScriptedModel, load_script

        if not model[len(SCRIPTED_PREFIX) :].strip():
            raise ConfigError("scripted model without a script path", hint="write it as scripted:PATH/TO/script.yaml")
        script = load_script(script_file(model))
        capabilities = script.capabilities or capabilities_for(model, None, settings.capability_overrides(model))
        return ScriptedModel(script, name=model, capabilities=capabilities)
    return None


def transport_for(profile: ModelProfile, **options: Any) -> ChatModel:
    """The transport the profile names, built from it; ``options`` go to its constructor
    (``announce``, ``sleep``; the direct one also takes an httpx ``transport``)."""
    if profile.transport == "direct":
        from vance_cli.llm.lean_imports import import_httpx

        import_httpx()
        from vance_cli.llm.openai_compat import OpenAICompatModel

        return OpenAICompatModel(profile, **options)
    from vance_cli.llm.litellm_model import LiteLLMModel

    return LiteLLMModel(profile, **options)
