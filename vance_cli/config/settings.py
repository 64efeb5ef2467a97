"""The settings cascade: bundled defaults, user and project config.toml, environment, CLI flags.

Later layers win key by key (tables are merged deeply). Each file layer is type-checked as it is
read so an error names the file and the key. Loading is cheap on purpose (the standard library and
a cache of parsed files, store/parse_cache.py): every CLI command builds a Settings, including the
ones that must start fast.
"""

from __future__ import annotations

import copy
import inspect
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.config.scopes import Scopes
from vance_cli.config.trust import split_restricted
from vance_cli.errors import ConfigError
from vance_cli.store.parse_cache import cached_parse
from vance_cli.text import did_you_mean

if TYPE_CHECKING:
    from vance_cli.llm.base import Capabilities

DEFAULTS_FILE = Path(__file__).with_name("defaults.toml")

BUILTIN_ALIASES = ("default:fast", "default:analyze", "default:code")
ALIAS_PREFIX = "default:"
TRANSPORTS = ("auto", "litellm", "direct")

# Environment variable -> dotted settings key (the "environment" layer).
ENV_KEYS: dict[str, str] = {
    "VANCE_MODEL": "model.default",
    "VANCE_API_BASE": "model.api_base",
    "VANCE_API_KEY": "model.api_key",
    "VANCE_TRANSPORT": "model.transport",
    "VANCE_SANDBOX": "exec.sandbox",
}

DEFAULT_TIMEOUT = 120.0
DEFAULT_RETRIES: dict[str, float | int] = {
    "attempts": 4,
    "base_delay": 0.5,
    "max_delay": 4.0,
    "max_total": 180.0,  # the whole call, attempts and waits included
}
PRICE_KEYS = ("input", "output", "cached_input")  # USD per million tokens

# Mirrors vance_cli.llm.base.Capabilities (a test keeps them equal); kept here so that checking a
# config file does not import pydantic.
CAPABILITY_KEYS: dict[str, type] = {
    "family": str,
    "tools": bool,
    "json_schema": bool,
    "strict_json_schema": bool,
    "json_object": bool,
    "parallel_tool_calls": bool,
}
CAPABILITY_FAMILIES = ("openai", "anthropic", "gemini", "ollama", "other")

SANDBOX_MODES = ("auto", "required", "off")

# Every key a config.toml may set, by table. A key outside this map is not an error (a newer or
# older Vance may know it) but a warning with the nearest known key, because a typo such as
# `api_bse` would otherwise be ignored in silence. A feature that adds settings adds them here.
# None: the table's own keys are free-form (checked elsewhere, e.g. model names, aliases).
MODEL_KEYS = ("default", "api_base", "api_key", "transport", "timeout", "retries")
KNOWN_KEYS: dict[str, tuple[str, ...] | None] = {
    "model": MODEL_KEYS,
    "aliases": None,
    "models": None,
    "structure": (
        "model",
        "schemaBuilderModel",
        "confidenceThreshold",
        "requireProviderStrictOutput",
        "schemaCacheTtlDays",
        "tenantId",
    ),
    "exec": ("sandbox", "network", "env"),
}
PER_MODEL_KEYS = tuple(k for k in MODEL_KEYS if k != "default") + ("capabilities",)

NO_MODEL_HINT = """set a default model with VANCE_MODEL (a litellm model string), for example:
    export VANCE_MODEL=openai/gpt-5.4-mini                 # plus OPENAI_API_KEY
    export VANCE_MODEL=anthropic/claude-haiku-4-5          # plus ANTHROPIC_API_KEY
    export VANCE_MODEL=gemini/gemini-2.5-flash             # plus GEMINI_API_KEY
    export VANCE_MODEL=ollama_chat/llama3.1                # local Ollama, or:
    export VANCE_MODEL=openai/llama3.1 VANCE_API_BASE=http://localhost:11434/v1
  or put it in {user_config} ($VANCE_HOME/config.toml):
    [model]
    default = "openai/gpt-5.4-mini\""""


# --------------------------------------------------------------------------- dotted keys


def split_key(key: str) -> list[str]:
    """``'models."openai/gpt-4.1".api_base'`` -> ``['models', 'openai/gpt-4.1', 'api_base']``.

    Double quotes protect dots, which model strings often contain.
    """
    parts: list[str] = []
    buf = ""
    quoted = False
    for ch in key:
        if ch == '"':
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(buf)
            buf = ""
        else:
            buf += ch
    parts.append(buf)
    if quoted or any(p == "" for p in parts):
        raise ConfigError(
            f"malformed settings key {key!r}",
            hint='use dotted keys such as model.default or models."a.b".timeout',
        )
    return parts


def _join_key(parts: list[str]) -> str:
    return ".".join(f'"{p}"' if "." in p or "/" in p else p for p in parts)


def deep_merge(base: dict[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``layer`` into ``base`` in place: tables merge key by key, anything else replaces."""
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            deep_merge(base[key], value)
        else:
            base[key] = (
                copy.deepcopy(value) if isinstance(value, (dict, list)) else value
            )
    return base


def _set_dotted(target: dict[str, Any], parts: list[str], value: Any) -> None:
    node = target
    for part in parts[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = node[part] = {}
        node = nxt
    if isinstance(value, Mapping) and isinstance(node.get(parts[-1]), dict):
        deep_merge(node[parts[-1]], value)
    else:
        node[parts[-1]] = value


# --------------------------------------------------------------------------- checking layers


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Checker:
    """Type checks for the keys Vance reads; unknown keys become warnings (see KNOWN_KEYS)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.warnings: list[str] = []

    def unknown(self, parts: list[str], known: tuple[str, ...]) -> None:
        self.warnings.append(
            f"{self.source}: unknown key '{_join_key(parts)}' is ignored"
            f"{did_you_mean(parts[-1], known)} (known here: {', '.join(known)})"
        )

    def fail(self, parts: list[str], problem: str) -> None:
        raise ConfigError(
            f"{self.source}: key '{_join_key(parts)}': {problem}",
            hint=f"fix the value in {self.source} (see the configuration reference in README.md)",
        )

    def table(self, value: Any, parts: list[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(parts, f"expected a table, got {_type_name(value)}")
        return value

    def string(self, value: Any, parts: list[str]) -> None:
        if not isinstance(value, str):
            self.fail(parts, f"expected a string, got {_type_name(value)}")

    def number(
        self,
        value: Any,
        parts: list[str],
        *,
        minimum: float = 0.0,
        integer: bool = False,
    ) -> None:
        if not _is_number(value) or (integer and not isinstance(value, int)):
            self.fail(
                parts,
                f"expected {'an integer' if integer else 'a number'}, got {_type_name(value)}",
            )
        if value < minimum:
            self.fail(parts, f"must be at least {minimum:g}, got {value}")

    def model_block(
        self, block: dict[str, Any], parts: list[str], *, per_model: bool
    ) -> None:
        for key, value in block.items():
            here = [*parts, key]
            if key in ("default", "api_base", "api_key"):
                self.string(value, here)
            elif key == "transport":
                if value not in TRANSPORTS:
                    self.fail(
                        here, f"must be one of {', '.join(TRANSPORTS)}, got {value!r}"
                    )
            elif key == "timeout":
                self.number(value, here)
            elif key == "max_tokens":
                self.number(value, here, integer=True, minimum=1)
            elif key == "price" and per_model:
                for pkey, pvalue in self.table(value, here).items():
                    if pkey not in PRICE_KEYS:
                        self.fail([*here, pkey], f"unknown key (known: {', '.join(PRICE_KEYS)}; USD per million tokens)")
                    self.number(pvalue, [*here, pkey])
            elif key == "retries":
                for rkey, rvalue in self.table(value, here).items():
                    if rkey not in DEFAULT_RETRIES:
                        self.fail(
                            [*here, rkey],
                            f"unknown key (known: {', '.join(DEFAULT_RETRIES)})",
                        )
                    self.number(
                        rvalue,
                        [*here, rkey],
                        integer=rkey == "attempts",
                        minimum=1 if rkey == "attempts" else 0,
                    )
            elif key == "capabilities" and per_model:
                self.capabilities(self.table(value, here), here)
            else:
                self.unknown(here, PER_MODEL_KEYS if per_model else MODEL_KEYS)

    def capabilities(self, caps: dict[str, Any], parts: list[str]) -> None:
        for key, value in caps.items():
            here = [*parts, key]
            expected = CAPABILITY_KEYS.get(key)
            if expected is None:
                self.fail(
                    here, f"unknown capability (known: {', '.join(CAPABILITY_KEYS)})"
                )
            if expected is bool and not isinstance(value, bool):
                self.fail(here, f"expected true or false, got {_type_name(value)}")
            if key == "family" and value not in CAPABILITY_FAMILIES:
                self.fail(
                    here,
                    f"must be one of {', '.join(CAPABILITY_FAMILIES)}, got {value!r}",
                )

    def layer(self, data: dict[str, Any]) -> None:
        for key in data:
            if key not in KNOWN_KEYS:
                self.unknown([key], tuple(KNOWN_KEYS))
            elif KNOWN_KEYS[key] is not None and isinstance(data[key], dict):
                if key == "model":
                    continue  # model_block knows its keys and their types
                for sub in data[key]:
                    if sub not in KNOWN_KEYS[key]:
                        self.unknown([key, sub], KNOWN_KEYS[key])
        if "model" in data:
            self.model_block(
                self.table(data["model"], ["model"]), ["model"], per_model=False
            )
        if "aliases" in data:
            for name, value in self.table(data["aliases"], ["aliases"]).items():
                if not name.startswith(ALIAS_PREFIX):
                    self.fail(
                        ["aliases", name],
                        f"alias names start with {ALIAS_PREFIX!r} (e.g. default:fast)",
                    )
                self.string(value, ["aliases", name])
        if "models" in data:
            for model, block in self.table(data["models"], ["models"]).items():
                self.model_block(
                    self.table(block, ["models", model]),
                    ["models", model],
                    per_model=True,
                )
        if "structure" in data:
            structure = self.table(data["structure"], ["structure"])
            for key in ("model", "schemaBuilderModel"):
                if key in structure:
                    self.string(structure[key], ["structure", key])
            if "confidenceThreshold" in structure:
                value = structure["confidenceThreshold"]
                self.number(value, ["structure", "confidenceThreshold"])
                if value > 1:
                    self.fail(
                        ["structure", "confidenceThreshold"],
                        f"must be between 0 and 1, got {value}",
                    )
            if "requireProviderStrictOutput" in structure and not isinstance(
                structure["requireProviderStrictOutput"], bool
            ):
                self.fail(
                    ["structure", "requireProviderStrictOutput"],
                    "expected true or false",
                )
            if "schemaCacheTtlDays" in structure:
                self.number(
                    structure["schemaCacheTtlDays"], ["structure", "schemaCacheTtlDays"]
                )
        if "exec" in data:
            block = self.table(data["exec"], ["exec"])
            if "sandbox" in block and block["sandbox"] not in SANDBOX_MODES:
                self.fail(
                    ["exec", "sandbox"],
                    f"must be one of {', '.join(SANDBOX_MODES)}, got {block['sandbox']!r}",
                )
            if "network" in block and not isinstance(block["network"], bool):
                self.fail(["exec", "network"], "expected true or false")
            if "env" in block:
                names = block["env"]
                if not isinstance(names, list) or not all(
                    isinstance(n, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)
                    for n in names
                ):
                    self.fail(
                        ["exec", "env"],
                        'expected a list of environment variable names, e.g. ["GOPATH", "JAVA_HOME"]',
                    )


def _toml_loads(text: str) -> dict[str, Any]:
    import tomllib  # only when the text is not in the parse cache (store/parse_cache.py)

    return tomllib.loads(text)


def _read_toml(path: Path, home: Path | None = None) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"cannot read config file {path}: {exc.strerror}",
            hint="check the file's permissions",
        ) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not UTF-8 text", hint="save it as UTF-8"
        ) from exc
    try:
        return cached_parse("toml", text, _toml_loads, home=home)
    except ValueError as exc:  # TOMLDecodeError is one; so is an integer of over 4,300 digits
        detail = str(exc)
        match = re.search(r"line (\d+)", detail)
        if match:
            lines = text.splitlines()
            lineno = int(match.group(1))
            if 1 <= lineno <= len(lines):
                detail += f"\n    line {lineno}: {lines[lineno - 1].strip()}"
        raise ConfigError(
            f"config file {path} is not valid TOML: {detail}",
            hint=f"fix the TOML syntax in {path} (https://toml.io)",
        ) from exc


# --------------------------------------------------------------------------- Settings


class Settings:
    """The merged configuration of one Vance invocation."""

    def __init__(
        self,
        scopes: Scopes,
        data: dict[str, Any],
        *,
        files: list[Path] | None = None,
        forced_model: dict[str, Any] | None = None,
        warnings: list[str] | None = None,
        ignored: list[str] | None = None,
    ) -> None:
        self.scopes = scopes
        self._data = data
        self.files = files or []  # the config.toml files that were read, lowest first
        # [model] keys set by the environment or CLI flags: they also beat per-model tables, because
        # `VANCE_API_BASE=... vance chat` must reach that endpoint whatever the config says.
        self._forced_model = forced_model or {}
        # Unknown keys in the config files, one line each (the CLI prints them on stderr).
        self.warnings = warnings or []
        # Project keys dropped because the folder is not trusted (config/trust.py).
        self.ignored = ignored or []

    @classmethod
    def load(
        cls,
        scopes: Scopes,
        env: Mapping[str, str] | None = None,
        overrides: dict | None = None,
    ) -> Settings:
        env = os.environ if env is None else env
        data = cached_parse("toml", DEFAULTS_FILE.read_text(encoding="utf-8"), _toml_loads, home=scopes.user)
        files: list[Path] = []
        warnings: list[str] = []
        ignored: list[str] = []
        for origin, path in scopes.config_files():
            if path.is_file():
                layer = _read_toml(path, scopes.user)
                checker = _Checker(str(path))
                checker.layer(layer)
                warnings += checker.warnings
                if origin == "project":
                    kept, restricted = split_restricted(layer)
                    # The trust state is only looked up when it matters (it may hash .vance/).
                    if restricted and not scopes.project_trusted:
                        layer = kept
                        ignored = restricted
                deep_merge(data, layer)
                files.append(path)

        forced: dict[str, Any] = {}
        env_layer: dict[str, Any] = {}
        for var, key in ENV_KEYS.items():
            value = env.get(var, "").strip()
            if value:  # an empty variable counts as unset
                single: dict[str, Any] = {}
                _set_dotted(single, split_key(key), value)
                _Checker(f"environment variable {var}").layer(single)
                deep_merge(env_layer, single)
        if env_layer:
            deep_merge(data, env_layer)
            forced.update(
                {k: v for k, v in env_layer.get("model", {}).items() if k != "default"}
            )

        if overrides:
            over_layer: dict[str, Any] = {}
            for key, value in overrides.items():
                if value is not None:  # a CLI flag that was not given
                    _set_dotted(over_layer, split_key(key), value)
            _Checker("command line").layer(over_layer)
            deep_merge(data, over_layer)
            forced.update(
                {k: v for k, v in over_layer.get("model", {}).items() if k != "default"}
            )
        return cls(
            scopes,
            data,
            files=files,
            forced_model=forced,
            warnings=warnings,
            ignored=ignored,
        )

    # ------------------------------------------------------------------ reading

    def get(self, key: str, default: Any = None) -> Any:
        """A dotted key such as ``structure.confidenceThreshold``; tables come back as copies."""
        node: Any = self._data
        for part in split_key(key):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return copy.deepcopy(node) if isinstance(node, (dict, list)) else node

    def as_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    # ------------------------------------------------------------------ models

    def _no_model(self, wanted: str | None = None) -> ConfigError:
        message = "no model configured" + (f" (for {wanted})" if wanted else "")
        return ConfigError(
            message,
            hint=NO_MODEL_HINT.format(user_config=self.scopes.user / "config.toml"),
        )

    def resolve_model(self, name: str | None) -> str:
        """A litellm model string for ``name``: None -> model.default; ``default:*`` -> [aliases]."""
        name = (name or "").strip() or None
        if name is None:
            default = (self.get("model.default") or "").strip()
            if not default:
                raise self._no_model()
            return (
                self._resolve_alias(default, seen=())
                if default.startswith(ALIAS_PREFIX)
                else default
            )
        if name.startswith(ALIAS_PREFIX):
            return self._resolve_alias(name, seen=())
        return name

    def _resolve_alias(self, alias: str, seen: tuple[str, ...]) -> str:
        if alias in seen:
            chain = " -> ".join((*seen, alias))
            raise ConfigError(
                f"model alias loop: {chain}",
                hint="point one of these [aliases] at a real model string",
            )
        aliases = self.get("aliases") or {}
        target = (aliases.get(alias) or "").strip()
        if not target:
            if alias not in BUILTIN_ALIASES:
                known = sorted(set(BUILTIN_ALIASES) | set(aliases))
                raise ConfigError(
                    f"unknown model alias {alias!r} (known: {', '.join(known)})",
                    hint=f'use one of the known aliases or define it in config.toml: [aliases] "{alias}" = "provider/model"',
                )
            default = (self.get("model.default") or "").strip()
            if not default or default == alias:
                raise self._no_model(alias)
            target = default
        if target.startswith(ALIAS_PREFIX):
            return self._resolve_alias(target, (*seen, alias))
        return target

    def _model_table(self, model: str) -> dict[str, Any]:
        models = self._data.get("models") or {}
        return copy.deepcopy(models.get(model) or {})

    def model_options(self, model: str) -> dict[str, Any]:
        """Call options for ``model``: global [model] keys overlaid by [models."<model>"].

        Returns ``{"api_base", "api_key", "transport", "timeout", "retries": {attempts, base_delay,
        max_delay, max_total}}`` plus any other keys the tables carry (``max_tokens``, ``price``).
        """
        if model.startswith(ALIAS_PREFIX):
            model = self.resolve_model(model)
        opts: dict[str, Any] = {
            "api_base": None,
            "api_key": None,
            "transport": "auto",
            "timeout": DEFAULT_TIMEOUT,
            "retries": dict(DEFAULT_RETRIES),
        }
        glob = self.get("model") or {}
        glob.pop("default", None)
        deep_merge(opts, glob)
        per_model = self._model_table(model)
        per_model.pop("capabilities", None)
        deep_merge(opts, per_model)
        deep_merge(opts, self._forced_model)
        opts["timeout"] = float(opts["timeout"])
        return opts

    def capabilities_for(self, model: str) -> Capabilities:
        """The provider table's capabilities for ``model``, updated by [models."<model>".capabilities]."""
        from vance_cli.llm.base import Capabilities

        if model.startswith(ALIAS_PREFIX):
            model = self.resolve_model(model)
        api_base = self.model_options(model)["api_base"]
        caps = _default_capabilities(model, api_base)
        if caps is None:
            caps = Capabilities()
        overrides = self._model_table(model).get("capabilities") or {}
        if overrides:
            _Checker(f'settings [models."{model}".capabilities]').capabilities(
                overrides, ["models", model, "capabilities"]
            )
            caps = caps.model_copy(update=overrides)
        return caps


def _default_capabilities(model: str, api_base: str | None) -> Capabilities | None:
    try:
        from vance_cli.llm.capabilities import default_capabilities
    except (
        ImportError
    ):  # the llm layer's table is optional: fall back to the conservative defaults
        return None
    try:
        params = inspect.signature(default_capabilities).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        params = {}
    if "api_base" in params or len(params) >= 2:
        return default_capabilities(model, api_base)
    return default_capabilities(model)
