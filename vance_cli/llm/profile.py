"""ModelProfile: what Vance works out about one model before its first call, worked out once.

A model string and its settings (``Settings.model_options`` and the checked
``[models."<m>".capabilities]`` table) become one profile: the transport that carries the calls,
the api_base as that provider's client wants it, the capabilities, the output limits, the price,
the time and retry budget. The transports are built from the profile (``factory.make_model``) and
work nothing out again. config/ stays below llm/: it checks the keys' types and merges the layers;
what a model string means (its family, limits, price) is decided here.

Where a new per-model fact goes (issue 18 brings a local llama.cpp family, a temperature per model
and call type, a tool mode, time budgets for a loopback api_base, a context window): a field of
ModelProfile, worked out in ``build_profile`` from the options and the model string, and a key in
config/settings_keys.py when a person may set it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from vance_cli.errors import ConfigError
from vance_cli.llm.base import Capabilities
from vance_cli.llm.capabilities import LOCAL_FAMILIES, default_capabilities
from vance_cli.llm.endpoints import normalize_api_base
from vance_cli.llm.model_map import Price, max_output_tokens, resolve_max_tokens, resolve_price
from vance_cli.llm.model_map import context_window as map_context_window
from vance_cli.llm.retry import retry_settings
from vance_cli.names import CALL_TYPES, DEFAULT_MODEL_TIMEOUT, DEFAULT_TEMPERATURES, TRANSPORTS

Transport = Literal["direct", "litellm"]


class SettingsLike(Protocol):
    """What a profile reads of config.Settings (tests hand in stand-ins)."""

    def model_options(self, model: str) -> dict[str, Any]: ...
    def capability_overrides(self, model: str) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ModelProfile:
    """One model as the transports see it (see the module docstring)."""

    name: str  # the litellm model string, aliases resolved
    transport: Transport  # who carries the calls: "direct" (httpx) or "litellm"
    api_base: str | None  # normalised for the provider (endpoints.normalize_api_base); None: its default
    api_key: str | None
    timeout: float  # seconds for one attempt
    retries: Mapping[str, float]  # attempts, base_delay, max_delay, max_total (the whole call)
    capabilities: Capabilities
    max_tokens: int  # the output limit sent when a request sets none
    max_output_tokens: int | None  # the most the model can give (litellm's map); None: not known
    price: Price | None  # per token: the configured one, else the map's; None: not known
    price_configured: bool = False  # the price came from config.toml (litellm prices the rest itself)
    # Tokens of context (prompt and reply): configured ([models."<m>"] context_window), else what a
    # local server says (/v1/models, /props), else litellm's map (max_input_tokens); None: unknown.
    context_window: int | None = None
    context_configured: bool = False
    # The server is to be asked what it is (a local llama.cpp family) before the first call:
    # an OpenAI-style model on a local api_base whose family is neither configured nor known.
    detect_server: bool = False
    capability_overrides: Mapping[str, Any] = field(default_factory=dict)  # config.toml's, kept for ``detected``
    # The temperature per call type (names.CALL_TYPES): [model.temperature], then
    # [models."<m>"] temperature, over names.DEFAULT_TEMPERATURES.
    temperatures: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_TEMPERATURES))

    def temperature_for(self, purpose: str | None) -> float | None:
        """The temperature a request of call type ``purpose`` is sent with; None when the model
        takes none (``Capabilities.temperature`` false)."""
        if not self.capabilities.temperature:
            return None
        return self.temperatures.get(purpose or "chat", self.temperatures.get("chat"))


def resolve_temperatures(value: float | Mapping[str, Any] | None) -> dict[str, float]:
    """A configured temperature (one number for every call type, or a table by call type) over
    the defaults."""
    out = dict(DEFAULT_TEMPERATURES)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return dict.fromkeys(CALL_TYPES, float(value))
    for key, number in (value or {}).items():
        if key in out and number is not None:
            out[key] = float(number)
    return out


def detected(profile: ModelProfile) -> ModelProfile:
    """``profile`` with what its server says about itself (llm/server_probe.py), once per process.

    A recognised llama.cpp server gives its family's capabilities (config.toml overrides still
    apply over them) and, unless configured, its context window. Called by the transports on their
    first use, never when the profile is built, so a command that calls no model asks nothing.
    """
    if not profile.detect_server or not profile.api_base:
        return profile
    from dataclasses import replace

    from vance_cli.llm.server_probe import probe_server

    info = probe_server(profile.api_base)
    if info.family is None:
        return replace(profile, detect_server=False)
    caps = default_capabilities(profile.name, profile.api_base, server=info.family)
    overrides = {k: v for k, v in profile.capability_overrides.items() if k != "family"}
    window = profile.context_window if profile.context_configured else info.context_window or profile.context_window
    return replace(
        profile,
        capabilities=caps.model_copy(update=overrides) if overrides else caps,
        context_window=window,
        detect_server=False,
    )


# Calls in flight at once for a batch of independent calls (`vance structure --batch`): a model on
# this machine or the local network serves one or two requests at a time (more only queue up and
# time out), a hosted API many. A batch may ask for more (--jobs), up to MAX_CONCURRENCY.
LOCAL_CONCURRENCY = 2
HOSTED_CONCURRENCY = 8
MAX_CONCURRENCY = 64
SERVED_LOCALLY = frozenset({"ollama", *LOCAL_FAMILIES})  # families that run on the user's own machine


def concurrency_for(capabilities: Capabilities, api_base: str | None) -> int:
    """How many calls of one batch to keep in flight by default: LOCAL_CONCURRENCY for a local
    server family or any api_base on this machine or the local network, else HOSTED_CONCURRENCY."""
    if capabilities.family in SERVED_LOCALLY:
        return LOCAL_CONCURRENCY
    if api_base:
        from vance_cli.llm.server_probe import worth_probing

        if worth_probing(api_base):
            return LOCAL_CONCURRENCY
    return HOSTED_CONCURRENCY


def select_transport(model: str, transport: str | None, api_base: str | None) -> Transport:
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


def capabilities_for(model: str, api_base: str | None, overrides: Mapping[str, Any] | None = None) -> Capabilities:
    """The provider table's capabilities for ``model`` (llm/capabilities.py), updated by ``overrides``
    (a checked ``[models."<model>".capabilities]`` table)."""
    family = (overrides or {}).get("family")
    caps = default_capabilities(model, api_base, server=family) if family else default_capabilities(model, api_base)
    return caps.model_copy(update=dict(overrides)) if overrides else caps


def build_profile(
    model: str,
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    transport: str | None = None,
    timeout: float | None = None,
    retries: Mapping[str, Any] | None = None,
    capabilities: Capabilities | None = None,
    capability_overrides: Mapping[str, Any] | None = None,
    max_tokens: int | None = None,
    price: Mapping[str, Any] | None = None,
    context_window: int | None = None,
    temperature: float | Mapping[str, Any] | None = None,
) -> ModelProfile:
    """The profile of ``model`` from option values (``profile_for`` reads them from the settings).

    ``capabilities`` replaces the provider table's answer (tests, scripted callers);
    ``capability_overrides`` updates it key by key (config.toml). ``price`` is a config table in USD
    per million tokens; without one the model map's price applies.
    """
    base = normalize_api_base(model, api_base)
    caps = capabilities or capabilities_for(model, base, capability_overrides)
    transport_kind = select_transport(model, transport, base)
    openai_style = model.startswith("openai/") or "/" not in model
    probe = capabilities is None and caps.family == "other" and openai_style and bool(base)
    if probe:
        from vance_cli.llm.server_probe import worth_probing

        probe = worth_probing(base)
    return ModelProfile(
        name=model,
        transport=transport_kind,
        api_base=base,
        api_key=api_key or None,
        timeout=float(timeout or DEFAULT_MODEL_TIMEOUT),
        retries=retry_settings(retries),
        capabilities=caps,
        # Always sent: without it litellm asks Anthropic for 128,000 tokens for a model it does not
        # know (Anthropic rejects that), and servers fall back to their own, sometimes tiny, defaults.
        max_tokens=resolve_max_tokens(model, max_tokens),
        max_output_tokens=max_output_tokens(model),
        price=resolve_price(model, dict(price) if price else None),
        price_configured=bool(price),
        context_window=int(context_window) if context_window else map_context_window(model),
        context_configured=bool(context_window),
        detect_server=probe,
        capability_overrides=dict(capability_overrides or {}),
        temperatures=resolve_temperatures(temperature),
    )


def profile_for(model: str, settings: SettingsLike) -> ModelProfile:
    """The profile of a resolved model string under ``settings`` (global [model] keys overlaid by
    ``[models."<model>"]``, the environment and CLI flags: ``Settings.model_options``)."""
    options = settings.model_options(model) or {}
    return build_profile(
        model,
        api_base=options.get("api_base"),
        api_key=options.get("api_key"),
        transport=options.get("transport"),
        timeout=options.get("timeout"),
        retries=options.get("retries"),
        capability_overrides=settings.capability_overrides(model),
        max_tokens=options.get("max_tokens"),
        price=options.get("price"),
        context_window=options.get("context_window"),
        temperature=options.get("temperature"),
    )
