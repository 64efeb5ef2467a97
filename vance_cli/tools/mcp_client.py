"""Tools from MCP servers ([mcp.servers.NAME], config/mcp_servers.py) as vance Tool objects.

Each server is started lazily, once per process (one connection per configuration), on a hub
thread with its own event loop, so a connection outlives the event loop of one turn; ``shutdown``
stops them all (the CLI calls it when a command ends; atexit too). Every call is bounded by the
server's ``timeout``: a server that hangs or dies gives the model a tool error and the turn goes on.
The ``mcp`` SDK is imported only when a server starts: a command that names no MCP tool imports none.

An MCP tool is a side effect (approval-gated, at most once on resume) unless the server marks it
``readOnlyHint`` and the person trusts that claim (``trust_read_only = true`` for the server); even
then the person's deny and ask rules apply (``Tool.ruled``). Its arguments are checked against the
server's JSON Schema before the call (Tool.invoke). The model sees it as ``mcp__SERVER__TOOL``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vance_cli.config.mcp_servers import McpServer
from vance_cli.tools.base import Tool, ToolContext, ToolResult


# The most of an MCP tool's result the model sees (and the process file keeps): between exec_run's
# 30,000 and file_read's 200,000, as a result cannot be paged through like file_read's.
MAX_RESULT_CHARS = 100_000


def recipe_name(server: str, tool: str) -> str:
    """The name a recipe adds the tool by: ``mcp:SERVER/TOOL``."""
    from vance_cli.names import MCP_PREFIX

    return f"{MCP_PREFIX}{server}/{tool}"


def model_name(server: str, tool: str) -> str:
    """The name the model calls: letters, digits, '_' and '-' only, at most 64 characters."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")[:64]


class McpUnavailable(Exception):
    """The server could not be started, or died, or did not answer in time."""


class McpToolError(Exception):
    """The server answered a call with a JSON-RPC error: that call failed, the server is still up."""


def _first_line(exc: BaseException) -> str:
    """What a parse error says, on one line, without the rejected input (pydantic repeats it)."""
    from vance_cli.text import shorten

    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    said = next((line for line in lines[1:] if not line.startswith("For further")), lines[0] if lines else "")
    return shorten(said.split(" [type=")[0], 200, one_line=True) or type(exc).__name__


def cause(exc: BaseException) -> BaseException:
    """The failure itself: the first leaf of an exception group (anyio's TaskGroup wraps it)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class _Connection:
    def __init__(self, server: McpServer, log: Path | None) -> None:
        self.server = server
        self.log = log
        self.client: Any = None
        self.tools: list[Any] = []
        self.made: tuple[list[Tool], list[str]] | None = None  # tools_of: (the tools, the left-out ones' warnings)
        self.dead: str | None = None
        self.unread: str | None = None  # the last message from the server the SDK could not parse
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._log_from = 0  # where this start's stderr begins in the log

    async def start(self) -> None:
        self._stop = asyncio.Event()
        if self.log is not None:
            try:
                self._log_from = self.log.stat().st_size
            except OSError:
                self._log_from = 0
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.server.start_timeout)
        except TimeoutError:
            self.dead = (
                f"MCP server {self.server.name} did not start within {self.server.start_timeout:g} s"
                " (its start_timeout)" + self._said()
            )
            ready.cancel()  # nobody waits for it any more: no "Future exception was never retrieved"
            self._task.cancel()
            raise McpUnavailable(self.dead) from None

    def _said(self) -> str:
        """The last line the server wrote to stderr since this start, as a clause (or nothing)."""
        if self.log is None:
            return ""
        try:
            with self.log.open("rb") as f:
                f.seek(self._log_from)
                text = f.read()[-4000:].decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not lines:
            return ""
        from vance_cli.text import shorten

        return f"; its stderr ends: {shorten(lines[-1], 200, one_line=True)} (all of it: {self.log})"

    async def _serve(self, ready: asyncio.Future) -> None:
        closing = contextlib.ExitStack()
        try:
            from mcp import Client, StdioServerParameters

            if self.server.command:
                from mcp.client.stdio import stdio_client

                params = StdioServerParameters(
                    command=self.server.command,
                    args=list(self.server.args),
                    env=dict(self.server.env) or None,
                    cwd=self.server.cwd,
                )
                errlog = open(self.log, "a", encoding="utf-8") if self.log else open(os.devnull, "w")  # noqa: SIM115
                closing.callback(errlog.close)  # when the connection ends, however it ends
                target: Any = stdio_client(params, errlog=errlog)
            else:
                import httpx2
                from mcp.client.streamable_http import streamable_http_client

                target = streamable_http_client(
                    self.server.url, http_client=httpx2.AsyncClient(headers=dict(self.server.headers))
                )

            async def unreadable(message: Any) -> None:
                """A message the SDK could not parse (a schema nested past its recursion limit):
                the request it answered would wait for its timeout; a start fails at once."""
                if isinstance(message, Exception):
                    self.unread = _first_line(message)
                    if not ready.done():
                        ready.set_exception(McpUnavailable(
                            f"MCP server {self.server.name} could not start: Vance could not read its answer ({self.unread})"
                        ))

            # the handshake and the tool list wait as long as a start may take; each call is bounded by
            # `timeout` in call()
            async with Client(
                target, read_timeout_seconds=self.server.start_timeout, message_handler=unreadable
            ) as client:
                self.client = client
                tools = list((await client.list_tools()).tools)
                if not ready.done():
                    self.tools = tools
                    ready.set_result(True)
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - any failure makes the server unavailable
            exc = cause(exc)
            reason = f"MCP server {self.server.name} could not start: {type(exc).__name__}" + (f": {exc}" if str(exc) else "")
            reason += self._said()
            if self.server.url:  # an HTTP error may quote the URL: never its password or query
                from vance_cli.text import shown_url

                reason = reason.replace(self.server.url, shown_url(self.server.url) or "")
            if isinstance(exc, asyncio.CancelledError) and not ready.done():
                ready.cancel()
            elif not ready.done():
                ready.set_exception(McpUnavailable(reason))
            else:
                self.dead = self.dead or f"MCP server {self.server.name} stopped: {type(exc).__name__}"
        finally:
            closing.close()

    @property
    def usable(self) -> bool:
        """Started, and its connection not lost since."""
        return self.dead is None and self._task is not None and not self._task.done()

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        if self.dead:
            raise McpUnavailable(self.dead)
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        try:
            return await asyncio.wait_for(self.client.call_tool(tool, arguments), self.server.timeout)
        except TimeoutError:
            unread = f"; its last message could not be read ({self.unread})" if self.unread else ""
            raise McpUnavailable(
                f"MCP server {self.server.name} did not answer {tool} within {self.server.timeout:g} s (its timeout){unread}"
            ) from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:  # the server's JSON-RPC error reply: this call failed, it is up
                raise McpToolError(f"MCP server {self.server.name} refused {tool}: {exc.message} (error {exc.code})") from None
            self.dead = f"MCP server {self.server.name} failed during {tool}: {exc}"
            raise McpUnavailable(self.dead) from None
        except Exception as exc:  # the connection broke: the server died
            self.dead = f"MCP server {self.server.name} failed during {tool}: {type(exc).__name__}: {exc}"
            raise McpUnavailable(self.dead) from None

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 5)
            except BaseException:  # noqa: BLE001 - stopping must not fail the command
                pass


class Hub:
    """The process's MCP connections, on their own thread and event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="vance-mcp", daemon=True)
        self.thread.start()
        self.connections: dict[tuple, _Connection] = {}

    async def _ensure(self, server: McpServer, log: Path | None) -> _Connection:
        conn = self.connections.get(server.key())
        if conn is not None and conn.started.done() and (
            conn.started.cancelled() or conn.started.exception() is not None or not conn.usable
        ):
            # it died, or did not start: start it again, once for this call (a call that was
            # under way when it died is never sent again: its effect is unknown)
            asyncio.ensure_future(conn.stop())
            conn = None
        if conn is None:
            conn = self.connections[server.key()] = _Connection(server, log)
            conn.started = asyncio.ensure_future(conn.start())
        await asyncio.shield(conn.started)
        return conn

    async def connect(self, server: McpServer, log: Path | None = None) -> _Connection:
        """The started connection (McpUnavailable when it does not start in its timeout)."""
        fut = asyncio.run_coroutine_threadsafe(self._ensure(server, log), self.loop)
        return await asyncio.wait_for(asyncio.wrap_future(fut), server.start_timeout + 5)

    async def call(self, conn: _Connection, tool: str, arguments: dict[str, Any]) -> Any:
        fut = asyncio.run_coroutine_threadsafe(conn.call(tool, arguments), self.loop)
        return await asyncio.wait_for(asyncio.wrap_future(fut), conn.server.timeout + 5)

    def shutdown(self) -> None:
        async def stop_all() -> None:
            await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(stop_all(), self.loop).result(10)
        except Exception:  # noqa: BLE001
            pass
        self.connections.clear()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


_hub: Hub | None = None
_hub_lock = threading.Lock()


def hub() -> Hub:
    global _hub
    with _hub_lock:
        if _hub is None:
            _hub = Hub()
            atexit.register(shutdown)
        return _hub


def shutdown() -> None:
    """Stop every MCP server this process started (the CLI calls it when a command ends)."""
    global _hub
    with _hub_lock:
        current, _hub = _hub, None
    if current is not None:
        current.shutdown()


def result_of(result: Any) -> ToolResult:
    """An MCP CallToolResult as the model sees a built-in tool's result."""
    parts: list[str] = []
    for item in result.content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind == "resource":
            parts.append(getattr(item.resource, "text", None) or f"[resource {item.resource.uri}]")
        else:
            parts.append(f"[{kind} content: {getattr(item, 'mime_type', '') or 'not shown'}]")
    structured = getattr(result, "structured_content", None)
    text = "\n".join(parts) if parts else (json.dumps(structured) if structured is not None else "")
    if len(text) > MAX_RESULT_CHARS:  # as exec_run's output: the start and the end are kept
        from vance_cli.text import HeadTail

        capped = HeadTail(MAX_RESULT_CHARS)
        capped.add(text)
        text = capped.text()
        structured = None  # the whole object would bring back what was cut
    if result.is_error:
        return ToolResult.error(text or "the MCP tool reported an error")
    return ToolResult(content=text, data=structured)


@dataclass
class McpTool(Tool):
    """A Tool of an MCP server; ``claims_read_only``: the server marks it readOnlyHint (trusted or not)."""

    claims_read_only: bool = False


def make_tool(server: McpServer, mcp_tool: Any, log: Path | None = None) -> McpTool:
    """A vance Tool that calls ``mcp_tool`` of ``server``; InvalidSchema when its input schema is
    not one a validator can use (schema/check.py, as structure checks a schema it is given)."""
    from vance_cli.schema.check import check_schema

    schema = dict(mcp_tool.input_schema or {"type": "object"})
    schema.setdefault("type", "object")
    check_schema(schema, f"the input schema of {recipe_name(server.name, mcp_tool.name)}")
    claimed = claims_read_only(mcp_tool)
    read_only = claimed and server.trust_read_only

    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            conn = await hub().connect(server, log)
            return result_of(await hub().call(conn, mcp_tool.name, args))
        except McpToolError as exc:
            return ToolResult.error(str(exc))
        except (TimeoutError, McpUnavailable) as exc:
            return ToolResult.error(str(exc) or f"MCP server {server.name} did not answer in time")

    return McpTool(
        name=model_name(server.name, mcp_tool.name),
        description=(mcp_tool.description or mcp_tool.name) + f" (MCP server {server.name})",
        parameters=schema,
        run=run,
        side_effects=not read_only,
        ruled=read_only,  # the server's claim: the person's deny and ask rules still apply
        claims_read_only=claimed,
    )


def claims_read_only(mcp_tool: Any) -> bool:
    """Whether the server marks the tool ``readOnlyHint`` (its claim; trusted only with trust_read_only)."""
    annotations = getattr(mcp_tool, "annotations", None)
    return bool(annotations and annotations.read_only_hint)


async def tools_of(server: McpServer, log: Path | None = None, *, warnings: list[str] | None = None) -> list[Tool]:
    """Every usable tool ``server`` offers (starting it); McpUnavailable when it does not start.

    A tool whose input schema is not usable is left out; why goes to ``warnings`` (the journal,
    `vance mcp list`). Each tool of a connection is made (and its schema checked) once."""
    if server.blocked:
        raise McpUnavailable(f"MCP server {server.name} is not started: {server.blocked}")
    conn = await hub().connect(server, log)
    if conn.made is None:
        from vance_cli.errors import InvalidSchema

        made: list[Tool] = []
        left_out: list[str] = []
        taken: dict[str, str] = {}  # model name -> the server's name for the tool that has it
        # by the server's name, so which of two colliding tools stays does not depend on its order
        for t in sorted(conn.tools, key=lambda t: t.name):
            name = model_name(server.name, t.name)
            if name in taken:  # 'a.b' and 'a_b', or two names cut at 64 characters
                left_out.append(
                    f"{recipe_name(server.name, t.name)} left out: its model name {name} is that of "
                    f"{recipe_name(server.name, taken[name])}"
                )
                continue
            try:
                made.append(make_tool(server, t, log))
            except InvalidSchema as exc:
                left_out.append(f"{recipe_name(server.name, t.name)} left out: {exc.message}")
                continue
            taken[name] = t.name
        conn.made = (made, left_out)
    tools, left_out = conn.made
    if warnings is not None:
        warnings.extend(left_out)
    return list(tools)


def log_path(scopes: Any, server_name: str) -> Path | None:
    """Where a server's stderr goes: ``<state>/mcp/NAME.log`` (None when it cannot be made)."""
    from vance_cli.errors import VanceError
    from vance_cli.store.atomic import state_folder

    try:  # in the state folder, never through a link (store/atomic.py state_folder)
        return state_folder(scopes.state_dir, "mcp") / f"{server_name}.log"
    except (OSError, VanceError):
        return None


@dataclass
class Survey:
    """What starting a server showed (`vance mcp list`, `vance doctor`)."""

    tools: list[McpTool]
    warnings: list[str]  # tools left out, and why
    error: str | None = None  # why it did not start (None: it started)


def survey(server: McpServer, scopes: Any) -> Survey:
    """Start ``server`` (not a blocked one) and list its tools, or say why it does not start."""
    warnings: list[str] = []
    try:
        tools = asyncio.run(tools_of(server, log_path(scopes, server.name), warnings=warnings))
    except ModuleNotFoundError:
        return Survey([], [], "the mcp package is missing; install it with: pip install 'vance-cli[mcp]'")
    except (McpUnavailable, TimeoutError) as exc:
        return Survey([], [], str(exc) or f"MCP server {server.name} did not start in time")
    return Survey([t for t in tools if isinstance(t, McpTool)], warnings)


def provider(scopes: Any):
    """The registry's source of MCP tools for ``scopes`` (ToolRegistry.mcp): ``mcp:NAME/TOOL`` or
    ``mcp:NAME/*`` -> (tools, warning). Server stderr goes to ``<state>/mcp/NAME.log``."""
    from vance_cli.config.mcp_servers import configured_servers
    from vance_cli.names import MCP_TOOL_PATTERN

    async def resolve(name: str) -> tuple[list[Tool], str | None]:
        match = re.fullmatch(MCP_TOOL_PATTERN, name)
        if match is None:
            return [], f"{name}: not an MCP tool name (mcp:SERVER/TOOL or mcp:SERVER/*)"
        server_name, tool = match.groups()
        configured = configured_servers(scopes)
        # the one that starts; else the first shown (an untrusted project's: why it does not start)
        server = next((s for s in configured if s.name == server_name and s.blocked is None), None) or next(
            (s for s in configured if s.name == server_name), None
        )
        if server is None:
            return [], f"{name}: no MCP server {server_name} is configured ([mcp.servers.{server_name}] in config.toml)"
        log = log_path(scopes, server_name)
        warnings: list[str] = []
        try:
            tools = await tools_of(server, log, warnings=warnings)
        except (McpUnavailable, TimeoutError) as exc:
            return [], f"{name}: {exc}"
        if tool != "*":
            warnings = [w for w in warnings if w.startswith(f"{recipe_name(server_name, tool)} ")]
            tools = [t for t in tools if t.name == model_name(server_name, tool)]
            if not tools and not warnings:
                warnings.append(f"{name}: server {server_name} has no tool {tool}")
        return tools, "; ".join(warnings) or None

    return resolve
