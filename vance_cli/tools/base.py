"""The Tool type, the context a tool runs in, and the registry of built-ins.

A tool never crashes the engine: bad arguments and exceptions become an error ToolResult that
goes back to the model as the tool message.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.llm.base import ToolSpec

if TYPE_CHECKING:
    from vance_cli.config.settings import Settings


@dataclass
class ToolContext:
    """What a tool may touch: the process's workspace folder and the settings."""

    workspace: Path
    settings: Settings | None = None
    process_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The id of the tool call being run (set by the engine per call): a tool whose effect lands
    # outside the process (a child process, another's inbox) uses it to stay idempotent when a
    # crash before the call's result was saved makes the engine run the same call again.
    call_id: str | None = None


@dataclass
class ToolResult:
    content: str
    ok: bool = True
    data: Any = None

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(content=f"ERROR: {message}", ok=False)

    @classmethod
    def malformed(cls, message: str) -> ToolResult:
        """The call itself was wrong (arguments unparseable or off-schema): engines count it."""
        return cls(content=f"ERROR: {message}", ok=False, data=MALFORMED)


MALFORMED = "malformed"

RunFn = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    run: RunFn
    # True when a call changes something outside the process (files, commands): the engine
    # records such a call as started before it runs and never runs it again after an interruption,
    # because whether it took effect is unknown. Read-only tools may simply run again.
    side_effects: bool = False

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def validate(self, arguments: dict[str, Any]) -> list[str]:
        """Problems with the arguments, one line each (empty when valid)."""
        from vance_cli.schema.quick import plainly_valid

        if plainly_valid(self.parameters, arguments):  # the usual case, without importing jsonschema
            return []
        validator = self.__dict__.get("_validator")
        if validator is None:
            from jsonschema import Draft202012Validator

            validator = self.__dict__["_validator"] = Draft202012Validator(self.parameters)
        problems = []
        for err in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in err.path) or "(arguments)"
            problems.append(f"{where}: {err.message}")
        return problems

    async def invoke(self, raw_arguments: str, ctx: ToolContext) -> ToolResult:
        """Parse, validate and run; every failure is an error result, never an exception."""
        try:
            args = json.loads(raw_arguments or "{}")
        except json.JSONDecodeError as exc:
            return ToolResult.malformed(f"arguments for {self.name} are not valid JSON ({exc.msg}); send a JSON object")
        if not isinstance(args, dict):
            return ToolResult.malformed(f"arguments for {self.name} must be a JSON object")
        problems = self.validate(args)
        if problems:
            return ToolResult.malformed(f"invalid arguments for {self.name}: " + "; ".join(problems))
        try:
            return await self.run(args, ctx)
        except Exception as exc:  # a tool bug must not kill the turn; the model sees it
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Callable[[], Tool]] = {}
        self._instances: dict[str, Tool] = {}

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


def builtin_registry() -> ToolRegistry:
    """Every built-in tool by name; modules are imported here, not at CLI start-up."""
    from vance_cli.tools import respond, workspace

    reg = ToolRegistry()
    reg.register("respond", respond.make_tool)
    for name, factory in workspace.FACTORIES.items():
        reg.register(name, factory)
    try:
        from vance_cli.tools import structure_tool
    except ImportError:  # pragma: no cover - structure arrives with its own issue
        pass
    else:
        reg.register("structure", structure_tool.make_tool)
    from vance_cli.tools import process_tools

    for name, factory in process_tools.FACTORIES.items():
        reg.register(name, factory)
    return reg


# Names a recipe may list even before the module exists would be a lie; validation uses this.
def builtin_tool_names() -> list[str]:
    return builtin_registry().names()
