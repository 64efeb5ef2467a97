"""Model strings to ChatModels: ``scripted:PATH``, the direct OpenAI-compatible transport, or litellm.

Transport selection (``model.transport`` / ``VANCE_TRANSPORT`` / ``[models."<m>"] transport``):

- ``direct``: OpenAICompatModel over httpx (fast start; OpenAI wire format only).
- ``litellm``: LiteLLMModel (every provider litellm knows; ``import litellm`` costs seconds).
- ``auto`` (default): direct when an ``api_base`` is set and the model string is ``openai/<name>``
  or has no provider prefix (Ollama's /v1, vLLM, llama.cpp server, LM Studio, OpenAI itself);
  litellm otherwise (``anthropic/...``, ``gemini/...``, ``ollama/...``, or no ``api_base``).

Implementations are imported inside ``make_model`` so importing this module stays cheap.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from vance_cli.errors import ConfigError
from vance_cli.llm.base import Capabilities, ChatModel
from vance_cli.names import DEFAULT_MODEL_TIMEOUT, TRANSPORTS

SCRIPTED_PREFIX = "scripted:"
DEMO_PREFIX = "demo:"  # the scripted brain of `vance demo` (vance_cli/demo.py)


class _SettingsLike(Protocol):
    def model_options(self, model: str) -> dict[str, Any]: ...
    def capabilities_for(self, model: str) -> Capabilities: ...


def select_transport(model: str, transport: str | None, api_base: str | None) -> Literal["direct", "litellm"]:
    """Which implementation serves ``model`` under the configured ``transport``."""
    choice = (transport or "auto").strip().lower()
    if choice not in TRANSPORTS:
        raise ConfigError(
            f"unknown model transport {transport!r} for {model}",
            hint="set model.transport (or VANCE_TRANSPORT) to one of: auto, direct, litellm",
        )
    if choice != "auto":
        return choice  # type: ignore[return-value]
    openai_style = model.startswith("openai/") or "/" not in model
    return "direct" if api_base and openai_style else "litellm"


def make_model(model: str, settings: _SettingsLike) -> ChatModel:
    """The ChatModel for a resolved model string (aliases are resolved by Settings.resolve_model)."""
    if model.startswith(SCRIPTED_PREFIX):
        from vance_cli.llm.scripted import ScriptedModel, load_script

        path = model[len(SCRIPTED_PREFIX):].strip()
        if not path:
            raise ConfigError("scripted model without a script path", hint="write it as scripted:PATH/TO/script.yaml")
        script = load_script(path)
        capabilities = script.capabilities or settings.capabilities_for(model)
        return ScriptedModel(script, name=model, capabilities=capabilities)

    if model.startswith(DEMO_PREFIX):
        from vance_cli.demo_brain import demo_model

        return demo_model(model)

    opts = settings.model_options(model) or {}
    api_base = opts.get("api_base") or None
    kind = select_transport(model, opts.get("transport"), api_base)
    args: dict[str, Any] = {
        "model": model,
        "api_base": api_base,
        "api_key": opts.get("api_key") or None,
        "timeout": float(opts.get("timeout") or DEFAULT_MODEL_TIMEOUT),
        "retries": opts.get("retries") or {},
        "capabilities": settings.capabilities_for(model),
        "max_tokens": opts.get("max_tokens") or None,
        "price": opts.get("price") or None,
    }
    if kind == "direct":
        from vance_cli.llm.lean_imports import import_httpx

        import_httpx()
        from vance_cli.llm.openai_compat import OpenAICompatModel

        return OpenAICompatModel(**args)
    from vance_cli.llm.litellm_model import LiteLLMModel

    return LiteLLMModel(**args)
