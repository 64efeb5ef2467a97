"""What litellm's model map knows about a model (output limit, prices), read without importing litellm.

litellm ships its price and context-window list as a JSON file inside the package
(``model_prices_and_context_window_backup.json``, ~3.5 MB). ``import litellm`` costs seconds, and the
direct transport exists to avoid it, so this module finds the file with ``importlib.util.find_spec``
(which locates a package without running it) and reads only the entry it needs: the file is written
by ``json.dump`` with one top-level key per model, so the entry is found as text and decoded alone
(a few milliseconds instead of ~20 ms for the whole file). Nothing here is needed by commands that
call no model, and nothing imports litellm.

Keys in the map are litellm model strings, sometimes with the provider prefix
(``gemini/gemini-2.5-flash``), sometimes without (``gpt-4o-mini``, ``claude-haiku-4-5``);
``model_info`` tries both and checks the entry's ``litellm_provider`` when it drops the prefix.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"

# Output limit for models the map does not know (local models, new names): enough for a long
# answer or a structured result, small enough for an 8k-context local server. Configurable per
# model (``[models."<m>"] max_tokens``).
DEFAULT_MAX_TOKENS = 4096

# litellm routing prefixes that name the same provider as the map's ``litellm_provider`` value.
_PROVIDER_ALIASES = {"ollama_chat": "ollama", "openai": "openai", "text-completion-openai": "text-completion-openai"}


@functools.lru_cache(maxsize=1)
def map_path() -> Path | None:
    """The JSON model map inside the installed litellm package, or None when litellm is absent."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / MAP_FILE
    return path if path.is_file() else None


@functools.lru_cache(maxsize=1)
def _map_bytes() -> bytes:
    path = map_path()
    if path is None:
        return b""
    try:
        return path.read_bytes()  # bytes: decoding all 3.5 MB would cost ten times the lookup
    except OSError:
        return b""


_WINDOW = 64 * 1024  # more than any one entry


@functools.lru_cache(maxsize=256)
def entry(key: str) -> dict[str, Any] | None:
    """The map's entry for exactly ``key`` (a top-level key), or None."""
    data = _map_bytes()
    if not data:
        return None
    # Top-level keys start a line: '    "<key>": {' (a few are not indented). One plain find over
    # the bytes is ~20x faster than a regex or a decoded str, which matters for the miss (every
    # local model).
    needle = (json.dumps(key) + ": {").encode()
    at = data.find(needle)
    while at >= 0 and data[data.rfind(b"\n", 0, at) + 1 : at].strip(b" "):
        at = data.find(needle, at + 1)  # not at the start of a line: a nested key, not an entry
    if at < 0:
        return None
    start = at + len(needle) - 1
    decoder = json.JSONDecoder()
    for end in (start + _WINDOW, len(data)):
        try:
            value, _ = decoder.raw_decode(data[start:end].decode("utf-8", errors="ignore"))
        except json.JSONDecodeError:
            continue
        return value if isinstance(value, dict) else None
    return None


@functools.lru_cache(maxsize=1)
def names() -> list[str]:
    """Every model string the map has an entry for (for a did-you-mean: this reads all its keys)."""
    import re  # only when a model string was not found

    return [m.decode() for m in re.findall(rb'^ {0,4}"([^"\n]+)": \{', _map_bytes(), flags=re.MULTILINE)]


def model_info(model: str) -> dict[str, Any] | None:
    """The map's entry for a litellm model string (with or without its provider prefix)."""
    name = model.strip()
    found = entry(name)
    if found is not None:
        return found
    provider, sep, rest = name.partition("/")
    if not sep or not rest:
        return None
    wanted = _PROVIDER_ALIASES.get(provider, provider)
    if wanted != provider and (found := entry(f"{wanted}/{rest}")) is not None:
        return found
    found = entry(rest)
    if found is None:
        return None
    listed = str(found.get("litellm_provider") or "")
    return found if listed == wanted or listed.startswith(wanted + "_") or listed.startswith(wanted + "-") else None


def max_output_tokens(model: str) -> int | None:
    """The model's output limit according to the map, or None when the map does not know it."""
    info = model_info(model) or {}
    for key in ("max_output_tokens", "max_tokens"):
        value = info.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def context_window(model: str) -> int | None:
    """The model's input limit (``max_input_tokens``) according to the map, or None."""
    value = (model_info(model) or {}).get("max_input_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


@dataclass(frozen=True)
class Price:
    """USD per token; ``cached_input`` applies to prompt tokens the provider served from its cache."""

    input: float
    output: float
    cached_input: float | None = None

    @classmethod
    def per_million(cls, table: dict[str, Any]) -> Price:
        """From a config table in USD per million tokens: ``{input, output, cached_input?}``."""
        cached = table.get("cached_input")
        return cls(
            input=float(table.get("input", 0.0)) / 1e6,
            output=float(table.get("output", 0.0)) / 1e6,
            cached_input=float(cached) / 1e6 if cached is not None else None,
        )

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(max(0, cached_tokens), prompt_tokens) if self.cached_input is not None else 0
        return (
            (prompt_tokens - cached) * self.input
            + cached * (self.cached_input or 0.0)
            + completion_tokens * self.output
        )


def price(model: str) -> Price | None:
    """The map's per-token prices for ``model``, or None when it has none."""
    info = model_info(model) or {}
    try:
        inp, out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
        if inp is None or out is None:
            return None
        cached = info.get("cache_read_input_token_cost")
        return Price(float(inp), float(out), float(cached) if cached is not None else None)
    except (TypeError, ValueError):
        return None


def resolve_max_tokens(model: str, configured: int | None = None) -> int:
    """The output limit to send for ``model``: the configured one, else the map's, else the default."""
    if configured:
        return int(configured)
    return max_output_tokens(model) or DEFAULT_MAX_TOKENS


def resolve_price(model: str, configured: dict[str, Any] | None = None) -> Price | None:
    """Prices for ``model``: a config table (USD per million tokens) wins over the map."""
    if configured:
        return Price.per_million(configured)
    return price(model)
