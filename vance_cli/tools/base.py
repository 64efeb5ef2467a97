"""The Tool type and the context a tool runs in (the registry of built-ins: tools/registry.py).

A tool never crashes the engine: bad arguments and exceptions become an error ToolResult that
goes back to the model as the tool message.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from vance_cli.llm.base import ToolSpec

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.llm.base import ChatModel
    from vance_cli.store.process import InboxItem, Process


@runtime_checkable
class WorkerHost(Protocol):
    """What the delegation tools (tools/process_tools.py) ask of the scheduler driving the caller.

    runtime/scheduler.py implements it; a process driven without a scheduler has no host.
    """

    @property
    def scopes(self) -> Scopes: ...

    def find(self, pid: str) -> Process | None:
        """A process of the tree, or from disk (None when it does not exist)."""
        ...

    def prepare_worker(
        self,
        recipe: str,
        *,
        check: str | None = None,
        parent: Process | None = None,
        grant: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the recipe snapshot, the engine params) a worker of ``recipe`` starts with; VanceError
        when ``recipe`` cannot run as a worker (its engine, its config, an option it does not take, or
        more than ``parent`` is granted: exec_run, the network, a check command; ``grant`` is what the
        parent really runs with, ``ctx.extra["grant"]``)."""
        ...

    def spawn(
        self,
        parent: Process,
        child_id: str,
        recipe: dict[str, Any],
        *,
        message: str,
        title: str | None = None,
        workspace: str | None = None,
        model: str | None = None,
        worker: bool = False,
        engine_params: dict[str, Any] | None = None,
    ) -> Process:
        """Create the child process file (idempotent for ``child_id``)."""
        ...

    def save(self, process: Process) -> None:
        """Save a process of the tree (a tool's bookkeeping in its caller before an outside effect)."""
        ...

    def send(self, process: Process, item: InboxItem) -> None:
        """Put ``item`` in the inbox of ``process`` (a worker) under its lock, saved."""
        ...

    def pending_question(self, process: Process) -> str | None:
        """The question ``process`` waits on an answer to, as its engine records it."""
        ...


@dataclass
class ToolContext:
    """What a tool may touch: the process's workspace folder, the settings and the host."""

    workspace: Path
    settings: Settings | None = None
    process_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The scheduler driving the process (delegation tools need it); None without one.
    host: WorkerHost | None = None
    # The id of the tool call being run (set by the engine per call): a tool whose effect lands
    # outside the process (a child process, another's inbox) uses it to stay idempotent when a
    # crash before the call's result was saved makes the engine run the same call again.
    call_id: str | None = None
    # The ChatModel for a model string, made the way the runtime driving the process makes its own
    # (a ``demo:`` model is the demo's brain): a tool that calls a model of its own (structure) uses
    # it. None: the model layer's make_model.
    model_factory: Callable[[str], ChatModel] | None = None


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


class SchemaUnusable(Exception):
    """A tool's parameter schema that no validator can use (Tool.validate; Tool.invoke answers it)."""

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
    # Whether a person approves a call before it runs (tools/approval.py; the runtime's gate
    # decides). None: exactly the tools with side effects. True for a tool whose effect is not
    # at-most-once but still acts in the person's name (process_spawn starts work that runs
    # commands). A tool added later (an MCP tool) sets it like a built-in does.
    approval: bool | None = None
    # Whether the person's rules still decide a call that needs no approval (a deny rule stops it,
    # an ask rule asks; no rule: it runs): an MCP tool whose server's read-only claim is trusted.
    ruled: bool = False
    # How a call is shown when it is asked about (a diff, the command...): an async function of
    # (arguments, ctx) returning a tools.approval.Preview; None: its arguments as JSON.
    preview: Callable[[dict[str, Any], ToolContext], Awaitable[Any]] | None = None

    @property
    def needs_approval(self) -> bool:
        return self.side_effects if self.approval is None else self.approval

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def validate(self, arguments: dict[str, Any]) -> list[str]:
        """Problems with the arguments, one line each (empty when valid); SchemaUnusable when the
        tool's own schema cannot check them (an MCP server's schema that is not one)."""
        from vance_cli.schema.quick import plainly_valid

        if plainly_valid(self.parameters, arguments):  # the usual case, without importing jsonschema
            return []
        try:
            validator = self.__dict__.get("_validator")
            if validator is None:
                # structure's validator: the draft the schema declares, and a registry that never
                # fetches a remote $ref (jsonschema's default would GET any URL a server names)
                from vance_cli.schema.reasons import make_validator

                validator = self.__dict__["_validator"] = make_validator(self.parameters)
            errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        except Exception as exc:  # noqa: BLE001 - a bad type, an unresolvable $ref, a schema nested too deep
            from vance_cli.text import shorten

            raise SchemaUnusable(
                f"the parameter schema of {self.name} cannot check its arguments "
                f"({type(exc).__name__}: {shorten(str(exc), 200, one_line=True)}); the tool cannot be called"
            ) from None
        problems = []
        for err in errors:
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
        try:
            problems = self.validate(args)
        except SchemaUnusable as exc:  # the tool's fault, not the call's: not counted as malformed
            return ToolResult.error(str(exc))
        if problems:
            return ToolResult.malformed(f"invalid arguments for {self.name}: " + "; ".join(problems))
        try:
            return await self.run(args, ctx)
        except Exception as exc:  # a tool bug must not kill the turn; the model sees it
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")
