"""Every key a config.toml may set, its type and its check: the table the settings cascade reads by.

The cascade itself (files, environment, flags; merging; model aliases and options) is
config/settings.py. Each layer is checked as it is read (``Checker.layer``), so an error names the
file and the key; a key outside ``KNOWN_KEYS`` is a warning with the nearest known key. Checking
needs only the standard library: no pydantic, nothing of llm/ (the model layer is above config/;
``CAPABILITY_KEYS`` mirrors its Capabilities, and a test keeps them equal).
"""

from __future__ import annotations

import math
import re
from typing import Any

from vance_cli.errors import ConfigError
from vance_cli.names import ALIAS_PREFIX, CALL_TYPES, DEFAULT_RETRIES, SANDBOX_MODES, TRANSPORTS
from vance_cli.text import did_you_mean

# Environment variable -> dotted settings key (the "environment" layer).
ENV_KEYS: dict[str, str] = {
    "VANCE_MODEL": "model.default",
    "VANCE_API_BASE": "model.api_base",
    "VANCE_API_KEY": "model.api_key",
    "VANCE_TRANSPORT": "model.transport",
    "VANCE_SANDBOX": "exec.sandbox",
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
    "tool_mode": str,
    "compact_prompt": bool,
    "temperature": bool,
}
CAPABILITY_FAMILIES = ("openai", "anthropic", "gemini", "ollama", "llama-server", "llama-cpp-python", "other")
TOOL_MODES = ("native", "schema", "auto")

# Every key a config.toml may set, by table. A key outside this map is not an error (a newer or
# older Vance may know it) but a warning with the nearest known key, because a typo such as
# `api_bse` would otherwise be ignored in silence. A feature that adds settings adds them here.
# None: the table's own keys are free-form (checked elsewhere, e.g. model names, aliases).
MODEL_KEYS = ("default", "api_base", "api_key", "transport", "timeout", "retries", "temperature")
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
    "permissions": ("allow", "ask", "deny", "sandboxed_exec"),
    "mcp": ("servers",),  # [mcp.servers.NAME]: config/mcp_servers.py
}
MCP_SERVER_KEYS = ("command", "args", "env", "cwd", "url", "headers", "timeout", "start_timeout", "trust_read_only")
MCP_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
PER_MODEL_KEYS = tuple(k for k in MODEL_KEYS if k != "default") + ("capabilities",)


def check_servers(table: Any, source: str) -> None:
    """ConfigError naming the key for a malformed ``[mcp.servers]`` table (Checker.layer calls it)."""

    def fail(key: str, problem: str) -> None:
        raise ConfigError(
            f"{source}: key '{key}': {problem}",
            hint=f"fix the value in {source} (see docs/mcp-acp.md)",
        )

    if not isinstance(table, dict):
        fail("mcp.servers", "expected a table of servers, e.g. [mcp.servers.files]")
    for name, block in table.items():
        where = f"mcp.servers.{name}"
        if not MCP_SERVER_NAME.fullmatch(name):
            fail(where, "a server name is 1-32 letters, digits, '_' or '-'")
        if not isinstance(block, dict):
            fail(where, "expected a table with command (stdio) or url (streamable HTTP)")
        unknown = [k for k in block if k not in MCP_SERVER_KEYS]
        if unknown:
            fail(f"{where}.{unknown[0]}", f"unknown key (known: {', '.join(MCP_SERVER_KEYS)})")
        if bool(block.get("command")) == bool(block.get("url")):
            fail(where, "set exactly one of command (a stdio server) or url (a streamable HTTP server)")
        for key in ("command", "url", "cwd"):
            if key in block and not (isinstance(block[key], str) and block[key]):
                fail(f"{where}.{key}", "expected a non-empty string")
        if "args" in block and not (isinstance(block["args"], list) and all(isinstance(a, str) for a in block["args"])):
            fail(f"{where}.args", 'expected a list of strings, e.g. ["-m", "server"]')
        for key in ("env", "headers"):
            value = block.get(key, {})
            if not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
                fail(f"{where}.{key}", "expected a table of strings")
        for key in ("timeout", "start_timeout"):
            if key in block:
                t = block[key]
                if not _is_number(t) or not _is_finite(t):
                    fail(f"{where}.{key}", f"expected a finite number, got {t!r} (seconds above 0)")
                if t <= 0:
                    fail(f"{where}.{key}", "expected a number of seconds above 0")
        if "trust_read_only" in block and not isinstance(block["trust_read_only"], bool):
            fail(f"{where}.trust_read_only", "expected true or false")


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


def _is_finite(value: int | float) -> bool:
    return isinstance(value, int) or math.isfinite(value)


class Checker:
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
            hint=f"fix the value in {self.source} (see docs/settings.md)",
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
        if not _is_finite(value):  # TOML's nan and inf: no timeout, price or temperature is one
            self.fail(parts, f"expected a finite number, got {value}")
        if value < minimum:
            self.fail(parts, f"must be at least {minimum:g}, got {value}")

    def model_block(self, block: dict[str, Any], parts: list[str], *, per_model: bool) -> None:
        for key, value in block.items():
            here = [*parts, key]
            if key in ("default", "api_base", "api_key"):
                self.string(value, here)
            elif key == "transport":
                if value not in TRANSPORTS:
                    self.fail(here, f"must be one of {', '.join(TRANSPORTS)}, got {value!r}")
            elif key == "timeout":
                self.number(value, here)
            elif key in ("max_tokens", "context_window"):
                self.number(value, here, integer=True, minimum=1)
            elif key == "price" and per_model:
                for pkey, pvalue in self.table(value, here).items():
                    if pkey not in PRICE_KEYS:
                        self.fail(
                            [*here, pkey], f"unknown key (known: {', '.join(PRICE_KEYS)}; USD per million tokens)"
                        )
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
            elif key == "temperature":
                self.temperature(value, here)
            elif key == "capabilities" and per_model:
                self.capabilities(self.table(value, here), here)
            else:
                self.unknown(here, PER_MODEL_KEYS if per_model else MODEL_KEYS)

    def temperature(self, value: Any, parts: list[str]) -> None:
        """A number (every call type) or a table of call type -> number, each from 0 to 2."""
        items = [(parts, value)] if _is_number(value) else [
            ([*parts, k], v) for k, v in self.table(value, parts).items()
        ]
        for here, number in items:
            if len(here) > len(parts) and here[-1] not in CALL_TYPES:
                self.fail(here, f"unknown call type (known: {', '.join(CALL_TYPES)})")
            self.number(number, here)
            if number > 2:
                self.fail(here, f"must be between 0 and 2, got {number}")

    def capabilities(self, caps: dict[str, Any], parts: list[str]) -> None:
        for key, value in caps.items():
            here = [*parts, key]
            expected = CAPABILITY_KEYS.get(key)
            if expected is None:
                self.fail(here, f"unknown capability (known: {', '.join(CAPABILITY_KEYS)})")
            if expected is bool and not isinstance(value, bool):
                self.fail(here, f"expected true or false, got {_type_name(value)}")
            if key == "family" and value not in CAPABILITY_FAMILIES:
                self.fail(
                    here,
                    f"must be one of {', '.join(CAPABILITY_FAMILIES)}, got {value!r}",
                )
            if key == "tool_mode" and value not in TOOL_MODES:
                self.fail(here, f"must be one of {', '.join(TOOL_MODES)}, got {value!r}")

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
            self.model_block(self.table(data["model"], ["model"]), ["model"], per_model=False)
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
                self.number(structure["schemaCacheTtlDays"], ["structure", "schemaCacheTtlDays"])
        if isinstance(data.get("mcp"), dict) and "servers" in data["mcp"]:
            check_servers(data["mcp"]["servers"], self.source)
        if "permissions" in data:
            from vance_cli.config.permissions import check_table

            check_table(self.table(data["permissions"], ["permissions"]), self.source)
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
                    isinstance(n, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names
                ):
                    self.fail(
                        ["exec", "env"],
                        'expected a list of environment variable names, e.g. ["GOPATH", "JAVA_HOME"]',
                    )
