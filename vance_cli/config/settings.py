"""The settings cascade: bundled defaults, user and project config.toml, environment, CLI flags.

Later layers win key by key (tables are merged deeply). Each file layer is type-checked as it is
read so an error names the file and the key (the keys, their types and the checks are
config/settings_keys.py). Loading is cheap on purpose (the standard library and
a cache of parsed files, store/parse_cache.py): every CLI command builds a Settings, including the
ones that must start fast.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vance_cli.config.scopes import Scopes
from vance_cli.config.settings_keys import ENV_KEYS, Checker, split_key
from vance_cli.config.trust import project_trusted, split_restricted
from vance_cli.errors import ConfigError
from vance_cli.names import (
    ALIAS_FALLBACKS,
    ALIAS_PREFIX,
    CALL_TYPES,
    DEFAULT_MODEL_TIMEOUT,
    DEFAULT_RETRIES,
    DEFAULT_TEMPERATURES,
    MODEL_ALIASES,
)
from vance_cli.store.parse_cache import cached_parse
from vance_cli.text import did_you_mean

DEFAULTS_FILE = Path(__file__).with_name("defaults.toml")

NO_MODEL_HINT = """set a default model with VANCE_MODEL (a litellm model string), for example:
    export VANCE_MODEL=openai/gpt-5.4-mini                 # plus OPENAI_API_KEY
    export VANCE_MODEL=anthropic/claude-haiku-4-5          # plus ANTHROPIC_API_KEY
    export VANCE_MODEL=gemini/gemini-2.5-flash             # plus GEMINI_API_KEY
    export VANCE_MODEL=ollama_chat/llama3.1                # local Ollama, or:
    export VANCE_MODEL=openai/llama3.1 VANCE_API_BASE=http://localhost:11434/v1
  or put it in {user_config} ($VANCE_HOME/config.toml):
    [model]
    default = "openai/gpt-5.4-mini\""""


# --------------------------------------------------------------------------- merging layers


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


def _toml_loads(text: str) -> dict[str, Any]:
    import tomllib  # only when the text is not in the parse cache (store/parse_cache.py)

    return tomllib.loads(text)


def read_toml(path: Path, home: Path | None = None) -> dict[str, Any]:
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
    except RecursionError as exc:
        raise ConfigError(
            f"config file {path} is not valid TOML: its arrays or tables are nested too deeply",
            hint=f"fix {path}",
        ) from exc
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


def _per_call_type(opts: dict[str, Any]) -> None:
    """``temperature = 0.1`` (one number) as the table it stands for: that number for every call type."""
    value = opts.get("temperature")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        opts["temperature"] = dict.fromkeys(CALL_TYPES, float(value))


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
        permission_tables: list[tuple[str, dict[str, Any]]] | None = None,
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
        # Each config file's [permissions] table, (origin, table), lowest first: approval rules add
        # up across scopes instead of replacing each other (config/permissions.py).
        self.permission_tables = permission_tables or []

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
        permission_tables: list[tuple[str, dict[str, Any]]] = []
        for origin, path in scopes.config_files():
            if path.is_file():
                # not kept in the parse cache: a config.toml may hold an API key, and keeping it
                # saves ~2 ms (store/parse_cache.py)
                layer = read_toml(path)
                checker = Checker(str(path))
                checker.layer(layer)
                warnings += checker.warnings
                if origin == "project":
                    kept, restricted = split_restricted(layer)
                    # The trust state is only looked up when it matters (it may hash .vance/).
                    if restricted and not project_trusted(scopes):
                        layer = kept
                        ignored = restricted
                if isinstance(layer.get("permissions"), dict):
                    permission_tables.append((origin, layer["permissions"]))
                deep_merge(data, layer)
                files.append(path)

        forced: dict[str, Any] = {}
        env_layer: dict[str, Any] = {}
        for var, key in ENV_KEYS.items():
            value = env.get(var, "").strip()
            if value:  # an empty variable counts as unset
                single: dict[str, Any] = {}
                _set_dotted(single, split_key(key), value)
                Checker(f"environment variable {var}").layer(single)
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
            Checker("command line").layer(over_layer)
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
            permission_tables=permission_tables,
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

    def model_aliases(self) -> list[tuple[str, str]]:
        """(alias, the model string it resolves to or why it does not) for the built-in aliases
        and every one in [aliases]: what `/model` without a name shows."""
        configured = [a for a in (self.get("aliases") or {}) if isinstance(a, str)]
        out = []
        for alias in dict.fromkeys([*MODEL_ALIASES, *sorted(configured)]):
            try:
                out.append((alias, self.resolve_model(alias)))
            except ConfigError as exc:
                out.append((alias, f"({exc.message})"))
        return out

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
            if alias not in MODEL_ALIASES:
                known = sorted(set(MODEL_ALIASES) | set(aliases))
                raise ConfigError(
                    f"unknown model alias {alias!r} (known: {', '.join(known)}){did_you_mean(alias, known)}",
                    hint=f'use one of the known aliases or define it in config.toml: [aliases] "{alias}" = "provider/model"',
                )
            if alias in ALIAS_FALLBACKS and ALIAS_FALLBACKS[alias] not in seen and (self.get("model.default") or "").strip() != alias:
                return self._resolve_alias(ALIAS_FALLBACKS[alias], (*seen, alias))
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
        max_delay, max_total}, "temperature": {<call type>: number}}`` plus any other keys the
        tables carry (``max_tokens``, ``price``).
        """
        if model.startswith(ALIAS_PREFIX):
            model = self.resolve_model(model)
        opts: dict[str, Any] = {
            "api_base": None,
            "api_key": None,
            "transport": "auto",
            "timeout": DEFAULT_MODEL_TIMEOUT,
            "retries": dict(DEFAULT_RETRIES),
            "temperature": dict(DEFAULT_TEMPERATURES),
        }
        glob = self.get("model") or {}
        glob.pop("default", None)
        deep_merge(opts, glob)
        _per_call_type(opts)
        per_model = self._model_table(model)
        per_model.pop("capabilities", None)
        deep_merge(opts, per_model)
        deep_merge(opts, self._forced_model)
        _per_call_type(opts)
        opts["timeout"] = float(opts["timeout"])
        return opts

    def capability_overrides(self, model: str) -> dict[str, Any]:
        """``[models."<model>".capabilities]``, checked: what config.toml says a model can do.

        What a model string can do by default is the model layer's business (llm/profile.py
        applies these over its provider table); settings only check the table's keys and types.
        """
        if model.startswith(ALIAS_PREFIX):
            model = self.resolve_model(model)
        overrides = self._model_table(model).get("capabilities") or {}
        if overrides:
            Checker(f'settings [models."{model}".capabilities]').capabilities(
                overrides, ["models", model, "capabilities"]
            )
        return overrides
