"""The MCP server of `vance mcp serve`: the official SDK's low-level Server, on stdio.

Tools, each a vance Tool called through ``Tool.invoke`` (its arguments checked against its JSON
Schema first; any failure is an ``isError`` result naming the fix, never a traceback):

- ``structure``: the built-in structure tool (tools/structure_tool.py) with a ``model`` argument:
  ``StructureService.run_structured``, the entry point `vance structure` uses; its text (and its
  structured content) is the result object `vance structure --json` prints.
- ``benjy_run``: a Benjy run started and driven by runtime/benjy_service.py as `vance benjy run`
  does; it returns the run's report object (``RunResult.to_dict``, the object `vance benjy run
  --json` ends a BLOCKED run with). With a ``progressToken`` its todos (per item) and its journal
  (per check) arrive as progress notifications; the first names the run and how to resume it.

Resources: the named schemas of the registry (project -> user -> bundled) as ``vance://schemas/NAME``.

Approvals: nobody can be asked here. What the caller passed counts as approved by the caller,
as `vance benjy run` counts as approved by the person who typed it: the run's ``check`` and its
workers' tools (file_write; exec_run with ``allowExec``). Every other call follows the rules in
config.toml (a deny rule wins, an allow rule allows) and otherwise is not run.

Cancellation (``notifications/cancelled``): the run is asked to stop at its next safe point
(between two tasks: SUSPENDED, resumable with `vance benjy resume ID`); if none comes within
``STOP_GRACE`` seconds, the call under way is cut as Ctrl+C would cut it (also saved SUSPENDED).
MCP never answers a cancelled request, so the resume command travels in the progress messages.
When the server itself goes away (the client closed stdin; SIGTERM or SIGHUP, as
runtime/interrupt.py maps them for the CLI) the runs get ``CLOSE_GRACE`` seconds instead: the SDK's
client sends SIGTERM 2 s after closing stdin, and SIGKILL after that. The check under way is
killed with its run (tools/exec_run.py); stderr names each stopped run and how to resume it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from vance_cli import __version__
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.errors import VanceError
from vance_cli.events import Event, JournalEvent, TodosUpdated
from vance_cli.llm.base import ChatModel
from vance_cli.output.printers import journal_blocks
from vance_cli.runtime.benjy_service import DEFAULT_RECIPE, BenjyService, RunResult
from vance_cli.runtime.runner import Runtime
from vance_cli.text import json_text
from vance_cli.tools.base import Tool, ToolContext, ToolResult

SCHEMA_URI = "vance://schemas/"
SCHEMA_MIME = "application/schema+json"
STOP_GRACE = 10.0  # seconds a cancelled run has to reach a safe point before its current call is cut
CLOSE_GRACE = 0.5  # the same when the server goes away (the client's SDK kills it 2 s after closing stdin)
APPROVED_BY = "the MCP client (vance mcp serve)"

ModelFactory = Callable[[str, Settings], ChatModel]
Progress = Callable[[int, str], Awaitable[None]]

BENJY_DESCRIPTION = (
    "Run a goal to DONE with Benjy, Vance's engine-agency loop: it plans items, runs a fresh worker "
    "per item in the workspace, runs the check command after each item (exit 0 = passed) and retries "
    "what fails. Returns the run's report (status DONE, BLOCKED with a question, or how to resume). "
    "The check you pass counts as approved by you; the workers write files in the workspace (and "
    "run commands there with allowExec). Long: send a progressToken to follow it; cancelling stops "
    "it resumably (vance benjy resume ID)."
)

BENJY_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "minLength": 1, "description": "The goal, in words."},
        "check": {
            "type": "string",
            "minLength": 1,
            "description": "The check command, run in the workspace after each item (exit 0 = passed), e.g. 'pytest -q'.",
        },
        "workspace": {
            "type": "string",
            "minLength": 1,
            "description": "The folder the workers and the check work in (absolute, or relative to where "
            "vance mcp serve runs). Default: a new temporary folder, removed at DONE unless keepWorkspace.",
        },
        "target": {"type": "string", "minLength": 1, "description": "A named workspace instead: workspaces/NAME of the scope."},
        "recipe": {
            "type": "string",
            "minLength": 1,
            "description": f"A Benjy recipe: {DEFAULT_RECIPE} (default), benjy-research, benjy-batch or your own.",
        },
        "criteria": {"type": "string", "minLength": 1, "description": "A file of acceptance criteria for the interpret stage."},
        "allowExec": {"type": "boolean", "description": "Give the workers exec_run (commands in the workspace)."},
        "model": {"type": "string", "minLength": 1, "description": "One model (or alias) for every call of this run."},
        "keepWorkspace": {"type": "boolean", "description": "Keep a temporary workspace after DONE."},
    },
    "required": ["goal"],
    "additionalProperties": False,
}


# The flags of `vance benjy run` that BenjyService's errors name, as benjy_run's arguments.
BENJY_ARGUMENTS = {
    "--workspace": "workspace", "--target": "target", "--criteria": "criteria", "--recipe": "recipe",
    "--check": "check", "--allow-exec": "allowExec", "--model": "model", "--keep-workspace": "keepWorkspace",
}


def as_arguments(text: str) -> str:
    """``text`` with the CLI's flags named as benjy_run's arguments (the caller never typed a flag)."""
    return re.sub(r"--[a-z]+(?:-[a-z]+)*", lambda m: BENJY_ARGUMENTS.get(m.group(0), m.group(0)), text)


def todo_line(todos: list[dict[str, Any]]) -> str:
    done = sum(1 for t in todos if t.get("status") == "done")
    line = f"{done}/{len(todos)} items done"
    working = next((t for t in todos if t.get("status") == "in_progress"), None)
    if working is not None:
        line += f" · working on #{working.get('id')} {working.get('text', '')}"
    return line


class RunProgress:
    """A run's events as progress messages, in order: the root's todos and each record of its
    journal (a worker's events stay inside the run). A bus listener must be quick: messages are
    queued and sent by a task."""

    def __init__(self, send: Progress | None, root: str) -> None:
        self.send = send
        self.root = root
        self.count = 0
        self.last: str | None = None
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.task = asyncio.ensure_future(self._pump())

    def __call__(self, event: Event) -> None:
        if event.process_id != self.root:
            return
        if isinstance(event, TodosUpdated):
            texts = [todo_line(event.todos)]
        elif isinstance(event, JournalEvent):
            texts = [block.replace("**", "").strip() for block in journal_blocks(event.text)]
        else:
            return
        for text in texts:
            if text and text != self.last:
                self.say(text)

    def say(self, text: str) -> None:
        self.last = text
        self.queue.put_nowait(text)

    async def _pump(self) -> None:
        while True:
            text = await self.queue.get()
            self.count += 1  # MCP: each notification's progress is larger than the one before
            try:
                if self.send is not None:
                    await self.send(self.count, text)
            except Exception:  # noqa: BLE001 - a client gone mid-run: the run goes on, its file is saved
                pass
            finally:
                self.queue.task_done()

    async def flush(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.queue.join(), 5)

    def close(self) -> None:
        self.task.cancel()


def run_outcome(result: RunResult) -> ToolResult:
    """The run's report object; its text the report, or how to go on; an error unless DONE or BLOCKED."""
    report = result.to_dict()
    status = result.status.value
    if status in ("DONE", "BLOCKED"):
        text = report["text"]
        if status == "BLOCKED":
            text += f"\n\nBLOCKED · answer with: {report['next']}"
        return ToolResult(content=text, data=report)
    text = f"{status} · process {result.process.id}: {result.process.status_reason or ''}\ncontinue with: {report['next']}"
    return ToolResult(content=f"ERROR: {text}", ok=False, data=report)


class VanceMcp:
    """The tools and resources `vance mcp serve` offers, on one configuration (scopes, settings)."""

    def __init__(self, scopes: Scopes, settings: Settings, model_factory: ModelFactory) -> None:
        from vance_cli.tools.structure_tool import make_tool

        self.scopes = scopes
        self.settings = settings
        self.model_factory = model_factory
        self.closing = asyncio.Event()  # the server goes away: runs get CLOSE_GRACE to stop
        self.stopped: list[str] = []  # the runs a cancel or the server's end stopped
        self.tools: dict[str, Tool] = {
            "structure": make_tool(with_model=True),
            "benjy_run": Tool(name="benjy_run", description=BENJY_DESCRIPTION, parameters=BENJY_PARAMETERS,
                              run=self.benjy_run, side_effects=True),
        }

    # ------------------------------------------------------------------ tools

    def tool_list(self) -> list[types.Tool]:
        return [
            types.Tool(
                name=t.name,
                description=t.description,
                input_schema=t.parameters,
                annotations=types.ToolAnnotations(read_only_hint=not t.side_effects),
            )
            for t in self.tools.values()
        ]

    async def call(self, name: str, arguments: dict[str, Any] | None, progress: Progress | None = None) -> ToolResult:
        tool = self.tools.get(name)
        if tool is None:
            return ToolResult.error(f"no tool {name!r}; vance mcp serve offers {', '.join(self.tools)}")
        ctx = ToolContext(
            workspace=self.scopes.cwd,
            settings=self.settings,
            extra={"progress": progress},
            model_factory=lambda model: self.model_factory(model, self.settings),
        )
        return await tool.invoke(json.dumps(arguments or {}), ctx)

    async def benjy_run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runtime = Runtime(self.scopes, self.settings, model_factory=self.model_factory)
        service = BenjyService(runtime)
        try:
            started = service.start(
                args["goal"], recipe=args.get("recipe") or DEFAULT_RECIPE, workspace=args.get("workspace"),
                target=args.get("target"), check=args.get("check"), criteria=args.get("criteria"),
                allow_exec=bool(args.get("allowExec")), model=args.get("model"),
                keep_workspace=bool(args.get("keepWorkspace")), approved_by=APPROVED_BY,
            )
        except VanceError as exc:
            return ToolResult.error(as_arguments(exc.said()))
        with started:
            pid = started.process.id
            progress = RunProgress(ctx.extra.get("progress"), pid)
            unsubscribe = runtime.bus.subscribe(progress)
            progress.say(f"benjy run {pid} in {started.process.workspace}; if it stops, continue it with: vance benjy resume {pid}")
            run = asyncio.ensure_future(service.run(pid))
            try:
                result = await asyncio.shield(run)
                await progress.flush()
            except asyncio.CancelledError:
                with anyio.CancelScope(shield=True):
                    status = await self._stop(service, run, pid)
                    progress.say(f"cancelled: run {pid} stopped ({status}); continue it with: vance benjy resume {pid}")
                    await progress.flush()
                raise
            except VanceError as exc:
                return ToolResult.error(f"{exc.said()}\nthe run {pid} is saved; continue it with: vance benjy resume {pid}")
            finally:
                unsubscribe()
                progress.close()
        return run_outcome(result)

    async def _stop(self, service: BenjyService, run: asyncio.Future, pid: str) -> str:
        """Stop a cancelled run at its next safe point; cut it after STOP_GRACE (CLOSE_GRACE once
        the server goes away). Its status then."""
        service.request_stop()
        self.stopped.append(pid)
        closing = asyncio.ensure_future(self.closing.wait())
        try:
            await asyncio.wait({run, closing}, timeout=STOP_GRACE, return_when=asyncio.FIRST_COMPLETED)
            if not run.done() and self.closing.is_set():
                await asyncio.wait({run}, timeout=CLOSE_GRACE)
        finally:
            closing.cancel()
        if not run.done():
            run.cancel()  # as Ctrl+C: the runtime saves the process SUSPENDED (and kills a check under way)
        with contextlib.suppress(BaseException):  # a failure is saved in the file; its status says it
            await run
        try:
            return service.runtime.store.load(pid).status.value
        except VanceError:
            return "saved"

    # ------------------------------------------------------------------ resources

    def _registry(self):
        from vance_cli.structure.service import StructureService

        return StructureService(self.settings).registry()

    def resource_list(self) -> list[types.Resource]:
        out = []
        for entry in self._registry().list_available():
            if entry.shadowed_by is not None:
                continue
            s = entry.schema
            about = f"{s.description} ({s.schema_origin}, version {s.version})" if s.description else f"{s.schema_origin}, version {s.version}"
            out.append(types.Resource(uri=SCHEMA_URI + s.name, name=s.name, description=about, mime_type=SCHEMA_MIME))
        return out

    def read(self, uri: str) -> types.ReadResourceResult:
        if not uri.startswith(SCHEMA_URI) or not uri[len(SCHEMA_URI):]:
            raise MCPError(types.INVALID_PARAMS, f"no resource {uri}: vance mcp serve offers the named schemas as {SCHEMA_URI}NAME",
                           data={"uri": uri})
        try:
            found = self._registry().get(uri[len(SCHEMA_URI):])
        except VanceError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.said(), data={"uri": uri}) from None
        text = json_text(found.schema, indent=2)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=SCHEMA_MIME, text=text)])


def as_call_result(result: ToolResult) -> types.CallToolResult:
    structured = result.data if isinstance(result.data, dict) else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result.content)],
        structured_content=structured,
        is_error=not result.ok,
    )


def build(vance: VanceMcp) -> Server:
    """The SDK's low-level Server with Vance's handlers."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=vance.tool_list())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        async def progress(count: int, message: str) -> None:
            await ctx.session.report_progress(count, None, message)

        return as_call_result(await vance.call(params.name, params.arguments, progress))

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        try:
            return types.ListResourcesResult(resources=vance.resource_list())
        except VanceError as exc:
            raise MCPError(types.INTERNAL_ERROR, exc.said()) from None

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return vance.read(str(params.uri))

    return Server(
        "vance",
        version=__version__,
        title="Vance",
        instructions=(
            "structure: text -> a JSON object valid against a schema (inline JSON Schema, a registered "
            "name from the resources, or a description). benjy_run: a goal run to DONE in a workspace, "
            "checked by a command after each item."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def quiet_sdk_logs() -> None:
    """The SDK's log records stay off stderr (a client shows it to the person) unless VANCE_DEBUG=1."""
    logger = logging.getLogger("mcp")
    if os.environ.get("VANCE_DEBUG") == "1":
        logging.basicConfig(level=logging.INFO)
        return
    logger.addHandler(logging.NullHandler())
    logger.propagate = False


class StdinLines:
    """stdin's lines for the SDK's stdio_server, read on a daemon thread (the SDK's own reader is a
    worker thread nothing can interrupt: a SIGTERM would wait for the client's next line). fd 0 is
    pointed at the null device meanwhile, as the SDK does, so no child reads the client's messages.
    At the end of stdin, ``closing`` is set before the server sees it: the runs it cancels then get
    CLOSE_GRACE."""

    def __init__(self, closing: asyncio.Event) -> None:
        import io
        import threading

        self.closing = closing
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        wire = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self.source = io.TextIOWrapper(os.fdopen(wire, "rb"), encoding="utf-8", errors="replace")
        threading.Thread(target=self._read, name="vance-mcp-stdin", daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self.source:
                self.loop.call_soon_threadsafe(self.queue.put_nowait, line)
        except (OSError, ValueError):  # the pipe broke: as its end
            pass
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens any more
                self.loop.call_soon_threadsafe(self._end)

    def _end(self) -> None:
        self.closing.set()
        self.queue.put_nowait(None)

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        line = await self.queue.get()
        if line is None:
            raise StopAsyncIteration
        return line


def resume_hint(stopped: list[str]) -> str:
    """How to go on with the runs the server's end stopped."""
    if not stopped:
        return "no run was under way"
    return "; ".join(f"continue run {pid} with: vance benjy resume {pid}" for pid in dict.fromkeys(stopped))


async def serve(scopes: Scopes, settings: Settings, model_factory: ModelFactory) -> None:
    """Speak MCP on stdin/stdout until the client closes the connection (or SIGTERM/SIGHUP:
    Interrupted, its hint naming the stopped runs)."""
    from mcp.server.stdio import stdio_server

    from vance_cli.errors import Interrupted
    from vance_cli.runtime.interrupt import stop_on_signals

    quiet_sdk_logs()
    vance = VanceMcp(scopes, settings, model_factory)
    server = build(vance)

    async def speak() -> None:
        async with stdio_server(stdin=StdinLines(vance.closing)) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())

    try:
        await stop_on_signals(speak(), before=vance.closing.set)
    except Interrupted as exc:
        exc.hint = resume_hint(vance.stopped)
        raise
    if vance.stopped:
        import sys

        print(f"vance mcp serve: the client went away; {resume_hint(vance.stopped)}", file=sys.stderr)

