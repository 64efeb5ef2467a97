"""MCP servers configured in config.toml (``[mcp.servers.NAME]``), per scope, and whether each may start.

A server is a stdio command (``command`` + ``args`` + ``env``) or a streamable-HTTP endpoint
(``url`` + ``headers``); ``timeout`` bounds its start and every call (seconds). A tool's
``readOnlyHint`` is the server's claim: only with ``trust_read_only = true`` does a tool that
claims it run without asking (a deny or ask rule still applies). The user scope's
servers always start; a project's only in a trusted folder (config/trust.py): an untrusted folder's
server config is shown (``vance mcp list``), never started, because the repository chose the command.
A project server with the name of a user one replaces it (in a trusted folder).

Standard library only: ``vance mcp list`` and ``vance doctor`` read this without importing ``mcp``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.config.settings_keys import check_servers
from vance_cli.config.trust import check as trust_check
from vance_cli.config.trust import project_trusted

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes

DEFAULT_MCP_TIMEOUT = 30.0  # seconds: each call
# seconds: a server's start (at least its call timeout). Kept apart from the call timeout because a
# start pays for an interpreter or `npx` and slows down on a loaded machine, while a call that
# hangs should end soon.
DEFAULT_MCP_START_TIMEOUT = 30.0


@dataclass(frozen=True)
class McpServer:
    name: str
    origin: str  # "user" | "project"
    source: Path  # the config.toml it is written in
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_MCP_TIMEOUT
    start_timeout: float = DEFAULT_MCP_START_TIMEOUT
    # the person trusts the server's readOnlyHint: such a tool runs without asking (rules still apply)
    trust_read_only: bool = False
    # None: it may start; else why it does not (and how to change that)
    blocked: str | None = field(default=None, compare=False)

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    @property
    def where(self) -> str:
        """The command line or the URL (a password and query in it left out), for a person to read."""
        if self.command:
            import shlex

            return shlex.join([self.command, *self.args])
        from vance_cli.text import shown_url

        return shown_url(self.url) or ""

    def key(self) -> tuple:
        """What makes two configurations the same server (one connection per process for each)."""
        return (self.name, self.command, self.args, self.env, self.cwd, self.url, self.headers, self.trust_read_only)


def _servers_in(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    from vance_cli.config.settings import read_toml

    layer = read_toml(path)
    servers = (layer.get("mcp") or {}).get("servers") if isinstance(layer.get("mcp"), dict) else None
    if servers is None:
        return {}
    check_servers(servers, str(path))
    return servers


def configured_servers(scopes: Scopes) -> list[McpServer]:
    """Every server of every scope (user first), each with why it does not start, if it does not."""
    out: dict[str, McpServer] = {}
    shown: list[McpServer] = []
    trusted = project_trusted(scopes)
    for origin, path in scopes.config_files():
        for name, block in _servers_in(path).items():
            blocked = None
            if origin == "project" and not trusted:
                blocked = f"{path.parent} is not trusted (start it with: {trust_check(scopes).command})"
            server = McpServer(
                name=name,
                origin=origin,
                source=path,
                command=block.get("command"),
                args=tuple(block.get("args", ())),
                env=tuple(sorted(block.get("env", {}).items())),
                cwd=block.get("cwd"),
                url=block.get("url"),
                headers=tuple(sorted(block.get("headers", {}).items())),
                timeout=float(block.get("timeout", DEFAULT_MCP_TIMEOUT)),
                start_timeout=float(
                    block.get("start_timeout", max(DEFAULT_MCP_START_TIMEOUT, block.get("timeout", 0)))
                ),
                trust_read_only=bool(block.get("trust_read_only", False)),
                blocked=blocked,
            )
            if blocked is None:
                out[name] = server
            else:
                shown.append(server)
    return [*out.values(), *shown]


def startable(scopes: Scopes) -> dict[str, McpServer]:
    """The servers that may start here, by name."""
    return {s.name: s for s in configured_servers(scopes) if s.blocked is None}
