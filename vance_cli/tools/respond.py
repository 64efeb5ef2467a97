"""The mandatory `respond` tool: the end-of-turn marker of every chat engine (structured-engine-output §2)."""

from __future__ import annotations

from typing import Any

from vance_cli.tools.base import Tool, ToolContext, ToolResult

RESPOND = "respond"

DESCRIPTION = (
    "Final user-facing reply for this turn. Call this exactly once per turn after any other tool "
    "calls. The 'message' is what the user sees; 'awaiting_user_input' is whether the engine should "
    "block on the user's next message (true) or keep working autonomously after this turn (false, "
    "e.g. when handing off to a worker process)."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "description": "User-facing reply text. Markdown allowed."},
        "awaiting_user_input": {
            "type": "boolean",
            "description": (
                "true: engine goes BLOCKED, waits for user. Default. false: engine returns to READY and "
                "picks up new pending messages on the next auto-wakeup. Use when the engine has spawned "
                "async workers and needs no immediate user input."
            ),
            "default": True,
        },
    },
    "required": ["message"],
    "additionalProperties": False,
}


def partial_message(arguments: str) -> str | None:
    """The ``message`` of a respond call whose argument text is still arriving (None: not yet there).

    pydantic_core's partial mode keeps the unfinished trailing string, so the message grows with
    each piece; an incomplete escape at the end is dropped until it completes.
    """
    if not arguments.strip():
        return None
    from pydantic_core import from_json

    try:
        value = from_json(arguments, allow_partial="trailing-strings")
    except ValueError:
        return None
    message = value.get("message") if isinstance(value, dict) else None
    return message if isinstance(message, str) else None


async def _run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    # No side effect: the engine recognises the call as the turn's final marker.
    return ToolResult(content="delivered", data=args)


def make_tool() -> Tool:
    return Tool(name=RESPOND, description=DESCRIPTION, parameters=PARAMETERS, run=_run)
