"""Delegation tools for a chat hub: start a worker process, read its status, send it a message.

``process_spawn`` starts a Benjy run (a Benjy recipe) or a Ford worker (a Ford recipe) as a child
of the calling process; the local scheduler runs it after the caller's turn and delivers its
report (or its question) to the caller's inbox, which wakes the caller. The tools reach that
scheduler only through ``ToolContext.host`` (tools.base.WorkerHost); `vance chat` drives its hub
with one.
"""

from __future__ import annotations

from typing import Any

from vance_cli.store.transcript import child_outcome
from vance_cli.text import shorten
from vance_cli.tools.approval import grant_run
from vance_cli.tools.base import Tool, ToolContext, ToolResult

SPAWN_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {
            "type": "string",
            "minLength": 1,
            "description": "What the worker should achieve, self-contained (it does not see this chat).",
        },
        "recipe": {
            "type": "string",
            "description": "benjy-coding (default: a Benjy run that splits the goal into items, checks and retries them), "
            "benjy-research, benjy-batch, or a Ford recipe such as coding for a single worker.",
        },
        "check": {
            "type": "string",
            "description": "Benjy only: a command run in the workspace after each item (exit 0 = passed), e.g. 'pytest -q'.",
        },
    },
    "required": ["goal"],
    "additionalProperties": False,
}
STATUS_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "string", "minLength": 1, "description": "The worker's process id."}},
    "required": ["id"],
    "additionalProperties": False,
}
STEER_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": "The worker's process id."},
        "message": {
            "type": "string",
            "minLength": 1,
            "description": "The message, e.g. the answer to the worker's question.",
        },
    },
    "required": ["id", "message"],
    "additionalProperties": False,
}

_NO_HOST = "delegation needs the local scheduler; this process is not driven by one (run it with `vance chat`)"
SPAWNED = "spawned"  # in the meta of the caller's assistant message: {call id: child id}
STEERED = "steered"  # likewise: {call id: the id of the inbox item sent}


async def _spawn(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    from vance_cli.errors import VanceError
    from vance_cli.store.process import new_process_id

    host = ctx.host
    if host is None or ctx.process_id is None:
        return ToolResult.error(_NO_HOST)
    parent = host.find(ctx.process_id)
    if parent is None:
        return ToolResult.error(f"the calling process {ctx.process_id} is not on disk")
    name = (args.get("recipe") or "benjy-coding").strip()
    try:
        recipe, params = host.prepare_worker(name, check=args.get("check"), parent=parent, grant=ctx.extra.get("grant"))
        # The child's id goes into the calling message before the child exists (saved with the
        # parent's list of children): when a crash cuts the call off before its result is saved,
        # the engine runs the same call again and it finds (or finishes creating) the same child.
        calling = _calling_message(parent, ctx.call_id)
        spawned = dict(calling.meta.get(SPAWNED) or {}) if calling is not None else {}
        child_id = spawned.get(ctx.call_id) or new_process_id()
        if calling is not None:
            calling.meta[SPAWNED] = {**spawned, ctx.call_id: child_id}
        goal = args["goal"].strip()
        # The person allowed this call (goal, recipe, the full check, the workers' tools): the run
        # is approved once, at its start; its workers' calls do not ask again per item.
        grant_run(
            params,
            by=str(ctx.extra.get("approved_by") or "the process_spawn approval"),
            tools=_worker_tools(recipe, params),
            check=args.get("check"),
        )
        host.spawn(
            parent,
            child_id,
            recipe,
            message=goal,
            title=" ".join(goal.split())[:60],
            workspace=str(ctx.workspace),
            engine_params=params,
        )
    except VanceError as exc:
        return ToolResult.error(exc.said())
    return ToolResult(
        content=(
            f"Started worker {child_id} ({recipe['name']}, {recipe['engine']}) in {ctx.workspace}. It runs after your turn; "
            "its report (or a question) comes back to you as a message. End this turn with respond, "
            "awaiting_user_input=false, telling the person what you started."
        ),
        data={"id": child_id},
    )


def _worker_tools(recipe: dict[str, Any], params: dict[str, Any]) -> list[str]:
    """The side-effecting tools a worker of ``recipe`` may use (what approving the spawn allows)."""
    if recipe.get("engine") == "benjy":
        # the run's options (engines/benjy/state.py OPTIONS_KEY) say whether its workers get exec_run
        allow_exec = any(isinstance(v, dict) and v.get("allowExec") for v in params.values())
        return ["file_write", *(["exec_run"] if allow_exec else [])]
    return [t for t in (recipe.get("tools") or []) if t in ("file_write", "exec_run", "process_spawn")]


async def _spawn_preview(args: dict[str, Any], ctx: ToolContext):
    """What the person sees before a worker starts: the goal, the recipe, the full check, its tools."""
    from vance_cli.tools.approval import Preview

    name = (args.get("recipe") or "benjy-coding").strip()
    fields = [("goal", str(args.get("goal", "")).strip()), ("recipe", name)]
    check = args.get("check")
    if check:
        fields.append(("check", str(check)))
    host = ctx.host
    parent = host.find(ctx.process_id) if host is not None and ctx.process_id else None
    try:
        recipe, params = host.prepare_worker(name, check=check, parent=parent, grant=ctx.extra.get("grant")) if host is not None else ({}, {})
    except Exception as exc:  # noqa: BLE001 - the call itself will answer with this error
        hint = getattr(exc, "hint", None)
        refused = str(getattr(exc, "message", exc)) + (f" ({hint})" if hint else "")
        fields.append(("refused", refused))
    else:
        refused = None
        tools = _worker_tools(recipe, params) if recipe else []
        fields.append(("worker tools", ", ".join(tools) + " (approved for the whole run)" if tools else "none with effects"))
    fields.append(("folder", str(ctx.workspace)))
    return Preview(title="start a worker", subject=str(check) if check else None, fields=fields, refused=refused)


def _calling_message(process: Any, call_id: str | None) -> Any:
    """The assistant message of ``process`` that holds the tool call ``call_id`` (the newest one)."""
    if not call_id:
        return None
    for m in reversed(process.history):
        if m.role == "assistant" and any(c.id == call_id for c in m.tool_calls):
            return m
    return None


def _find(ctx: ToolContext, pid: str):
    host = ctx.host
    if host is None:
        return None, ToolResult.error(_NO_HOST)
    try:
        process = host.find(pid.strip())
    except Exception as exc:  # an invalid id
        return None, ToolResult.error(str(getattr(exc, "message", exc)))
    if process is None:
        return None, ToolResult.error(f"no process {pid!r}; process_spawn returns the worker's id")
    return process, None


async def _status(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    process, error = _find(ctx, args["id"])
    if error is not None:
        return error
    lines = [
        f"worker {process.id} ({process.recipe_name}, {process.engine}): {process.status.value}"
        + (f" — {process.status_reason}" if process.status_reason else "")
    ]
    if process.todos:
        done = sum(1 for t in process.todos if t.status == "done")
        lines.append(
            f"todos: {done}/{len(process.todos)} done; "
            + "; ".join(f"[{t.status}] {t.text}" for t in process.todos[:10])
        )
    question = ctx.host.pending_question(process) if ctx.host is not None else None
    if question:
        lines.append(f"it asks: {question}")
    outcome = child_outcome(process)
    if outcome.get("message"):
        message = outcome["message"]
        lines.append("its last message: " + shorten(message, 2000))
    return ToolResult(content="\n".join(lines), data={"id": process.id, "status": process.status.value})


async def _steer(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    from vance_cli.store.process import InboxItem

    process, error = _find(ctx, args["id"])
    if error is not None:
        return error
    if process.parent != ctx.process_id:
        return ToolResult.error(f"process {process.id} is not a worker of this process")
    host = ctx.host
    assert host is not None  # _find found the process through it
    # As in process_spawn: the message's id goes into the calling message (saved) before the
    # worker gets it, so a call re-run after a crash does not send it twice (the worker may have
    # taken it in meanwhile: it runs before this turn resumes).
    caller = host.find(ctx.process_id) if ctx.process_id else None
    calling = _calling_message(caller, ctx.call_id) if caller is not None else None
    sent = dict(calling.meta.get(STEERED) or {}) if calling is not None else {}
    item_id = sent.get(ctx.call_id)
    if item_id is not None and (
        any(i.id == item_id for i in process.inbox) or any(m.meta.get("inbox_id") == item_id for m in process.history)
    ):
        return ToolResult(
            content=f"Sent to worker {process.id}; it continues after your turn and reports back as a message."
        )
    if process.status.value == "DONE":
        return ToolResult.error(f"worker {process.id} is DONE; start a new one with process_spawn")
    item = InboxItem(
        kind="user", sender=ctx.process_id, content=args["message"], **({"id": item_id} if item_id else {})
    )
    if calling is not None and item_id is None:
        calling.meta[STEERED] = {**sent, ctx.call_id: item.id}
        host.save(caller)
    host.send(process, item)
    return ToolResult(
        content=f"Sent to worker {process.id}; it continues after your turn and reports back as a message."
    )


def make_process_spawn() -> Tool:
    return Tool(
        name="process_spawn",
        description=(
            "Start a worker process on a goal: a Benjy run (default recipe benjy-coding: it plans items, "
            "runs a worker per item, checks and retries) or a Ford worker (recipe coding). It works in "
            "this folder after your turn; its report arrives as a message. Returns the worker's id."
        ),
        parameters=SPAWN_PARAMETERS,
        run=_spawn,
        # not at-most-once (a re-run finds the same child), but it starts work in the person's name
        approval=True,
        preview=_spawn_preview,
    )


def make_process_status() -> Tool:
    return Tool(
        name="process_status",
        description="Read a worker's status: its state, todos, a pending question and its last message.",
        parameters=STATUS_PARAMETERS,
        run=_status,
    )


def make_process_steer() -> Tool:
    return Tool(
        name="process_steer",
        description="Send a message to one of your workers (e.g. the answer to its question); it continues after your turn.",
        parameters=STEER_PARAMETERS,
        run=_steer,
    )
