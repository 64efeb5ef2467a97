"""The registry of tools: built once per run from the names table, each tool built on first use.

Tool modules are imported when a tool is first asked for (``get``), never to list the names, so
checking a recipe or listing the tools loads no tool code. Which built-in tools exist is written
once, in ``vance_cli.names.TOOLS``.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable

from vance_cli.names import MCP_PREFIX, TOOLS
from vance_cli.tools.base import Tool

# An async function of a recipe's tool name (``mcp:NAME/*``) -> (its tools, a warning or None).
Provider = Callable[[str], Awaitable[tuple[list[Tool], str | None]]]


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Callable[[], Tool]] = {}
        self._instances: dict[str, Tool] = {}
        # where the MCP tools come from (runtime/runner.py sets it); None: none are offered
        self.mcp: Provider | None = None

    async def pool(self, names: list[str]) -> tuple[dict[str, Tool], list[str]]:
        """The tools a recipe's ``names`` stand for, by the name the model calls, and warnings
        (an MCP server that is not configured, not trusted or does not start)."""
        tools: dict[str, Tool] = {}
        warnings: list[str] = []
        came_from: dict[str, str] = {}  # an MCP tool's name -> the recipe's name that brought it
        for name in names:
            if name.startswith(MCP_PREFIX) and name not in self._tools:
                if self.mcp is None:
                    warnings.append(f"{name}: MCP tools are not available here")
                    continue
                found, warning = await self.mcp(name)
                if warning:
                    warnings.append(warning)
                for t in found:
                    if t.name in tools and tools[t.name] is not t:  # two servers, one model name: the first stays
                        warnings.append(f"{name}: {t.name} left out: {came_from[t.name]} has a tool of that name")
                        continue
                    tools[t.name] = t
                    came_from.setdefault(t.name, name)
            else:
                tools[name] = self.get(name)
        return tools, warnings

    def register(self, name: str, factory: Callable[[], Tool]) -> None:
        self._tools[name] = factory
        self._instances.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def has(self, name: str) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool:
        """The tool, built once per registry (tools are stateless; their validators are cached)."""
        if name not in self._instances:
            self._instances[name] = self._tools[name]()
        return self._instances[name]


def _factory(target: str) -> Callable[[], Tool]:
    """A factory that imports ``module:attr`` when the tool is first built."""

    def build() -> Tool:
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)()

    return build


def builtin_registry() -> ToolRegistry:
    """Every built-in tool by name (vance_cli.names.TOOLS); no tool module is imported here."""
    reg = ToolRegistry()
    for name, target in TOOLS.items():
        reg.register(name, _factory(target))
    return reg
