"""The ACP agent: one ACP session is one Vance chat process, driven by the chat session code.

- a session's id is its process id: ``session/load`` resumes it (the history is replayed as
  session updates), exactly as `vance chat --resume ID` would;
- a prompt is one turn of runtime/session.py's ChatSession (send, then drive under a Scheduler);
  the event bus (vance_cli/events.py) is translated to session updates: the growing ``respond``
  message streams as agent message chunks, free model text as thought chunks, tool calls as ACP
  tool calls with their status, a Benjy run's todos as the plan and its journal as messages;
- a Benjy run starts from a session as it does from `vance chat`: the person asks the chat hub
  (Arthur, the default recipe), which calls ``process_spawn``; the editor is asked once (goal,
  recipe, the full check); the run is a worker of the session's process, driven in the same prompt
  turn, and its report wakes the hub, which relays it;
- the approval gate's question goes to the client (``session/request_permission``), not a terminal;
- file writes go through the client's ``fs/write_text_file`` when the client offers it;
- ``session/cancel`` cancels the drive: the runtime saves the process SUSPENDED, resumable.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import AgentCapabilities, Implementation, PermissionOption, ToolCallUpdate

from vance_cli.errors import UsageError, VanceError
from vance_cli.events import (
    Event,
    JournalEvent,
    MessageDelta,
    MessageEvent,
    TodosUpdated,
    ToolFinished,
    ToolStarted,
)
from vance_cli.output.printers import journal_blocks
from vance_cli.runtime.runner import Runtime
from vance_cli.runtime.session import ChatSession
from vance_cli.store.transcript import entries
from vance_cli.tools.approval import ALLOW, ALWAYS_SUBJECT, ALWAYS_TOOL, DENY, PENDING, ApprovalRequest, Decision

# what kind of ACP tool call each built-in tool is (the client picks an icon by it)
TOOL_KINDS = {
    "file_read": "read",
    "file_list": "search",
    "file_write": "edit",
    "exec_run": "execute",
    "structure": "think",
}
# a Benjy todo's status -> an ACP plan entry's status
PLAN_STATUS = {"open": "pending", "in_progress": "in_progress", "done": "completed", "failed": "completed"}

ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject_once"


def plan_of(todos: list[dict[str, Any]]) -> list[Any]:
    """A Benjy run's todo projection as ACP plan entries (a failed item is finished: completed)."""
    return [
        plan_entry(str(t.get("text", "")), priority="medium", status=PLAN_STATUS.get(str(t.get("status")), "pending"))
        for t in todos
    ]


def _short(arguments: str, width: int = 60) -> str:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments[:width]
    if isinstance(value, dict):
        first = next((v for k, v in value.items() if k in ("path", "command", "goal", "prompt")), None)
        if isinstance(first, str):
            return first if len(first) <= width else first[: width - 1] + "…"
    return ""


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments


class VanceAgent:
    """The ACP Agent side, on one Runtime (its approval gate and event bus) for the connection."""

    def __init__(self, runtime: Runtime, *, recipe: str, model: str | None = None) -> None:
        self.runtime = runtime
        self.recipe = recipe
        self.model = model
        self.conn: Any = None
        self.sessions: dict[str, ChatSession] = {}  # session id (= process id) -> its chat
        self.engines: dict[str, str] = {}  # session id -> its process's engine
        self.turns: dict[str, asyncio.Task[None]] = {}  # session id -> the running turn
        self.cancelled: set[str] = set()
        self.current: str | None = None  # the session whose turn runs (its workers' events go there)
        self._queue: asyncio.Queue[tuple[str, Any]] | None = None
        self._pump: asyncio.Task[None] | None = None
        self._shown_calls: set[str] = set()
        self._streamed: dict[str, tuple[int, int]] = {}  # pid -> (model call, characters sent)
        self._said: dict[str, str] = {}  # pid -> the respond text streamed in this turn
        self._tail: dict[str, str] = {}  # session id -> the last agent message chunk sent
        runtime.stream = True
        runtime.bus.subscribe(self._on_event)
        if hasattr(runtime.approvals, "approver"):
            runtime.approvals.approver = self._ask_client

    # ------------------------------------------------------------------ ACP methods

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kw: Any):
        fs = getattr(client_capabilities, "fs", None)
        if fs is not None and fs.write_text_file:
            self.runtime.file_writer = self._write_through_client
        from vance_cli import __version__

        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
            agent_info=Implementation(name="vance", title="Vance", version=__version__),
        )

    async def authenticate(self, method_id: str, **kw: Any) -> None:
        return None

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kw: Any) -> NewSessionResponse:
        folder = Path(cwd)
        try:
            if not folder.is_absolute():  # ACP: cwd is an absolute path; a relative one would be vance acp's
                raise UsageError(f"the session's cwd {cwd!r} is not an absolute path", hint="send the project folder's absolute path")
            if not folder.is_dir():
                raise UsageError(f"the session's cwd {cwd} is not an existing folder", hint="open an existing project folder")
            from vance_cli.tools.paths import refuse_secret_workspace, secret_paths_of

            refuse_secret_workspace(folder.resolve(), secret_paths_of(self.runtime.scopes.user))
            process = self.runtime.new_process(self.recipe, model=self.model, workspace=folder.resolve())
        except VanceError as exc:
            raise _request_error(exc) from None
        self.sessions[process.id] = ChatSession(runtime=self.runtime, pid=process.id)
        self.engines[process.id] = process.engine
        return NewSessionResponse(session_id=process.id)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kw: Any):
        try:
            pid = self.runtime.find(resume=session_id, continue_last=False, all_folders=True)
            if pid is None:
                raise RequestError.invalid_params({"sessionId": session_id, "reason": "no such Vance process"})
            if pid != session_id:  # the client goes on with the id it sent: only the exact one works
                raise UsageError(f"session id {session_id!r} is not exact: it is a prefix of {pid}", hint=f"load {pid}")
            process = self.runtime.store.load(pid)
            self.runtime.check_chat(process)  # what vance chat --resume accepts
        except VanceError as exc:
            raise _request_error(exc) from None
        self.sessions[pid] = ChatSession(runtime=self.runtime, pid=pid, model=self.model)
        self.engines[pid] = process.engine
        for update in _replay(process):
            await self.conn.session_update(session_id=pid, update=update)
        return LoadSessionResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **kw: Any) -> PromptResponse:
        chat = self.sessions.get(session_id)
        if chat is None:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session; load it first"})
        if session_id in self.turns:
            raise RequestError.invalid_request({"reason": "a turn is running in this session; cancel it first"})
        text = "\n".join(b.text for b in prompt if getattr(b, "type", None) == "text" and b.text)
        if not text.strip():
            raise RequestError.invalid_params({"reason": "the prompt has no text"})
        self._start_pump()
        self.cancelled.discard(session_id)
        self.current = session_id
        task = asyncio.ensure_future(self._turn(chat, text))
        self.turns[session_id] = task
        try:
            await task
        except asyncio.CancelledError:
            if session_id not in self.cancelled:
                raise
            await self._flush()
            return PromptResponse(stop_reason="cancelled")
        except VanceError as exc:
            await self._flush()
            raise _request_error(exc) from None
        finally:
            self.turns.pop(session_id, None)
            self.current = None
        await self._flush()
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kw: Any) -> None:
        task = self.turns.get(session_id)
        if task is not None and not task.done():
            self.cancelled.add(session_id)
            task.cancel()

    async def _turn(self, chat: ChatSession, text: str) -> None:
        with self.runtime.session(chat.pid) as process:
            self._said.pop(chat.pid, None)
            self._streamed.pop(chat.pid, None)
            await chat.turn(process, text)

    # ------------------------------------------------------------------ approvals and files

    async def _ask_client(self, request: ApprovalRequest) -> Decision:
        """The gate's question as ``session/request_permission`` (the editor's dialog)."""
        sid = self._session_of(request.process_id)
        if sid is None:
            return Decision(PENDING, reason="no ACP session to ask in", by="nobody")
        await self._flush()
        call_id = self._call_id(request.process_id, request.call_id)
        p = request.preview
        title = f"{request.tool}: {p.subject}" if p.subject else f"{request.tool}: {p.title}"
        content = []
        if request.tool == "file_write" and isinstance(request.arguments.get("path"), str):
            content.append(tool_diff_content(str(request.arguments["path"]), str(request.arguments.get("content", ""))))
        elif p.diff:
            content.append(tool_content(text_block(p.diff)))
        details = "\n".join(f"{k}: {v}" for k, v in p.fields)
        if request.notice:
            details = f"{request.notice}\n{details}"
        if details:
            content.append(tool_content(text_block(details)))
        if call_id not in self._shown_calls:
            self._shown_calls.add(call_id)
            await self.conn.session_update(
                session_id=sid,
                update=start_tool_call(call_id, title, kind=TOOL_KINDS.get(request.tool, "other"), status="pending",
                                       content=content or None, raw_input=request.arguments),
            )
        always = f"Always allow {request.tool}" + (f" for {p.subject}" if p.subject and len(p.subject) <= 60 else "")
        options = [
            PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
            PermissionOption(option_id=ALLOW_ALWAYS, name=always, kind="allow_always"),
            PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
        ]
        answer = await self.conn.request_permission(
            session_id=sid,
            tool_call=ToolCallUpdate(tool_call_id=call_id, title=title, status="pending", raw_input=request.arguments),
            options=options,
        )
        outcome = answer.outcome
        if getattr(outcome, "outcome", None) != "selected":
            return Decision(PENDING, reason="not answered: it waits for your approval", by="nobody")
        if outcome.option_id == ALLOW_ONCE:
            return Decision(ALLOW, by="the editor (allow once)")
        if outcome.option_id == ALLOW_ALWAYS:
            return Decision(ALLOW, always=ALWAYS_SUBJECT if p.subject is not None else ALWAYS_TOOL, by="the editor (always)")
        await self.conn.session_update(session_id=sid, update=update_tool_call(call_id, status="failed"))
        return Decision(DENY, reason="rejected in the editor", by="the editor")

    async def _write_through_client(self, process_id: str, path: Path, text: str) -> None:
        sid = self._session_of(process_id)
        if sid is None:
            raise RuntimeError("no ACP session for this write")
        await self.conn.write_text_file(session_id=sid, path=str(path), content=text)

    # ------------------------------------------------------------------ events -> updates

    def _session_of(self, pid: str) -> str | None:
        return pid if pid in self.sessions else self.current

    def _call_id(self, pid: str, call_id: str) -> str:
        return call_id if pid in self.sessions else f"{pid}/{call_id}"

    def _start_pump(self) -> None:
        if self._pump is None or self._pump.done():
            self._queue = asyncio.Queue()
            self._pump = asyncio.ensure_future(self._run_pump())

    async def _run_pump(self) -> None:
        assert self._queue is not None
        while True:
            sid, update = await self._queue.get()
            try:
                await self.conn.session_update(session_id=sid, update=update)
            except Exception:  # a client gone mid-turn: the turn goes on, its state is saved anyway
                pass
            finally:
                self._queue.task_done()

    async def _flush(self) -> None:
        if self._queue is not None:
            await self._queue.join()

    def _on_event(self, event: Event) -> None:
        sid = self._session_of(event.process_id)
        if sid is None or self._queue is None:
            return
        for update in self._updates(event):
            if update.session_update == "agent_message_chunk":
                text = update.content.text
                if isinstance(event, JournalEvent) and not self._tail.get(sid, "\n").endswith("\n"):
                    text = "\n\n" + text  # a run's journal starts its own paragraph after a reply
                    update = update_agent_message_text(text)
                self._tail[sid] = text
            self._queue.put_nowait((sid, update))

    def _updates(self, event: Event) -> list[Any]:
        pid = event.process_id
        root = pid in self.sessions
        if isinstance(event, MessageDelta):
            if not root:
                return []
            call, sent = self._streamed.get(pid, (event.call, 0))
            if call != event.call:
                sent = 0
            new = event.text[sent:] if len(event.text) > sent else ""
            self._streamed[pid] = (event.call, max(sent, len(event.text)))
            if not new:
                return []
            if event.kind == "respond":
                self._said[pid] = self._said.get(pid, "") + new
                return [update_agent_message_text(new)]
            return [update_agent_thought_text(new)]
        if isinstance(event, MessageEvent):
            if not root:
                return []
            said = self._said.pop(pid, "")
            self._streamed.pop(pid, None)
            if said and event.text.startswith(said):
                rest = event.text[len(said):]
                return [update_agent_message_text(rest)] if rest else []
            return [update_agent_message_text(("\n\n" if said else "") + event.text)]
        if isinstance(event, ToolStarted):
            if event.name == "respond":
                return []
            call_id = self._call_id(pid, event.call_id)
            if call_id in self._shown_calls:
                return [update_tool_call(call_id, status="in_progress")]
            self._shown_calls.add(call_id)
            short = _short(event.arguments)
            title = f"{event.name}: {short}" if short else event.name
            return [start_tool_call(call_id, title, kind=TOOL_KINDS.get(event.name, "other"), status="in_progress",
                                    raw_input=_parsed(event.arguments))]
        if isinstance(event, ToolFinished):
            if event.name == "respond":
                return []
            return [
                update_tool_call(
                    self._call_id(pid, event.call_id),
                    status="completed" if event.ok else "failed",
                    content=[tool_content(text_block(event.summary))],
                    raw_output=event.summary,
                )
            ]
        if isinstance(event, TodosUpdated):
            return [update_plan(plan_of(event.todos))]
        if isinstance(event, JournalEvent):
            # a Benjy run's journal is what the person follows: messages (its worklist line left
            # out: the plan shows it); a chat's journal lines (corrections, a denied call) are the
            # engine's own notes: thoughts
            if root and self.engines.get(pid) != "benjy":
                return [update_agent_thought_text(event.text.rstrip("\n") + "\n\n")]
            blocks = journal_blocks(event.text.rstrip("\n"))
            return [update_agent_message_text("\n\n".join(blocks) + "\n\n")] if blocks else []
        return []


def _replay(process: Any) -> list[Any]:
    """A loaded session's history as the updates the client shows (ACP's session/load replay)."""
    out: list[Any] = []
    for e in entries(process):
        if e.kind == "user":
            out.append(update_user_message_text(e.text))
        elif e.kind in ("message", "journal"):
            out.append(update_agent_message_text(e.text))
        elif e.kind == "call":
            short = _short(e.text)
            out.append(start_tool_call(e.call_id, f"{e.name}: {short}" if short else e.name,
                                       kind=TOOL_KINDS.get(e.name, "other"), status="completed",
                                       raw_input=_parsed(e.text)))
        elif e.kind == "result":
            out.append(update_tool_call(e.call_id, status="completed" if e.ok else "failed",
                                        content=[tool_content(text_block(e.text[:2000]))]))
    return out


def _request_error(exc: VanceError) -> RequestError:
    hint = getattr(exc, "hint", None)
    data: dict[str, Any] = {"message": exc.message}
    if hint:
        data["hint"] = hint
    return RequestError(-32603, exc.message, data)


async def serve(runtime: Runtime, *, recipe: str, model: str | None = None) -> None:
    """Speak ACP on stdin/stdout until the client closes the connection."""
    from acp import run_agent

    agent = VanceAgent(runtime, recipe=recipe, model=model)
    try:
        await run_agent(agent)
    finally:
        await runtime.aclose()
