"""What a person is asked before a tool call with side effects runs, and what they can answer.

A tool says whether its calls need approval (``Tool.needs_approval``: by default, every tool with
``side_effects``; a tool may also ask without being at-most-once, as ``process_spawn`` does) and
how to show a call (``Tool.preview``: the diff of a ``file_write``, the command, folder and
sandbox of an ``exec_run``, the goal, recipe and check of a ``process_spawn``). A tool added later
(an MCP tool) declares the same two things; nothing here lists tool names.

The decision itself (rules, flags, asking the person) is the runtime's ``Gate`` (runtime/approvals.py);
engines call it at one place, before a call is recorded as started (engines/ford.py).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vance_cli.store.process import Process
    from vance_cli.tools.base import Tool, ToolContext, WorkerHost

ALLOW = "allow"
DENY = "deny"
PENDING = "pending"  # nobody could answer (headless without a flag, or the question was dismissed)
# The call would be refused by the tool itself (process_spawn of a recipe that is not there): there
# is nothing to approve, the model is told why at once and the person is not asked.
REFUSED = "refused"

# "allow always" for: this exact command (the call's subject) or every call of the tool.
ALWAYS_SUBJECT = "subject"
ALWAYS_TOOL = "tool"


@dataclass
class Preview:
    """How a call is shown to the person: a title, labelled fields, an optional diff."""

    title: str  # one line, e.g. "run a command"
    # What a rule's pattern matches and "allow always for this command" remembers (the command of
    # exec_run, the path of file_write, the check of process_spawn); None: only "for this tool".
    subject: str | None = None
    fields: list[tuple[str, str]] = field(default_factory=list)
    diff: str | None = None
    sandboxed: bool | None = None  # exec_run: whether the command would run in the sandbox
    refused: str | None = None  # why the tool would refuse the call as it is (nothing to approve)


PreviewFn = Callable[[dict[str, Any], "ToolContext"], Awaitable[Preview]]


@dataclass
class ApprovalRequest:
    process_id: str
    call_id: str
    tool: str
    preview: Preview
    arguments: dict[str, Any]
    # Said once per session where commands run unconfined (no sandbox); shown with the question.
    notice: str | None = None

    @property
    def subject(self) -> str | None:
        return self.preview.subject

    def to_dict(self) -> dict[str, Any]:
        p = self.preview
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "title": p.title,
            "subject": p.subject,
            "fields": {k: v for k, v in p.fields},
            "diff": p.diff,
            "sandboxed": p.sandboxed,
            "notice": self.notice,
        }


@dataclass
class Decision:
    verdict: str  # ALLOW | DENY | PENDING | REFUSED
    reason: str | None = None  # the person's words when they deny, or which rule decided
    always: str | None = None  # ALWAYS_SUBJECT | ALWAYS_TOOL: remember it for this project
    by: str = "you"  # "you", "rule exec_run:pytest * (user config)", "--yes", ...

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The person's side: shows the request, returns their decision (ALLOW / DENY; PENDING if dismissed).
Approver = Callable[[ApprovalRequest], Awaitable[Decision]]


class Gate(Protocol):
    """The one decision point for every tool call that needs approval (runtime/approvals.py)."""

    async def approve(
        self,
        process: Process,
        tool: Tool,
        call_id: str,
        arguments: dict[str, Any],
        ctx: ToolContext,
        *,
        host: WorkerHost | None = None,
        untrusted: bool = False,
    ) -> tuple[Decision, ApprovalRequest]: ...


class AllowAll:
    """A gate that allows everything: for engine tests that are about something else."""

    async def approve(self, process, tool, call_id, arguments, ctx, *, host=None, untrusted=False):
        preview = Preview(title=tool.name)
        return Decision(ALLOW, by="test"), ApprovalRequest(process.id, call_id, tool.name, preview, arguments)


async def preview_of(tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> Preview:
    """The tool's own preview, or its arguments as JSON (a tool that declares none)."""
    if tool.preview is not None:
        try:
            return await tool.preview(arguments, ctx)
        except Exception as exc:  # noqa: BLE001 - a preview bug must not hide the call: show it raw
            return Preview(
                title=f"call {tool.name}",
                fields=[("arguments", json.dumps(arguments, ensure_ascii=False, indent=2)), ("preview failed", str(exc))],
            )
    return Preview(title=f"call {tool.name}", fields=[("arguments", json.dumps(arguments, ensure_ascii=False, indent=2))])


DENIED_RESULT = (
    "DENIED: the person did not allow this `{tool}` call{reason}. It was NOT run and had no effect. "
    "Do not repeat the same call; take their reason into account, or ask them (respond) what to do instead."
)


def denied_text(tool: str, decision: Decision) -> str:
    reason = f" (their reason: {decision.reason})" if decision.reason and decision.by == "you" else (
        f" ({decision.reason})" if decision.reason else ""
    )
    return DENIED_RESULT.format(tool=tool, reason=reason)


# In a process's engine_params: the person approved this run at its start (a process_spawn they
# allowed, `vance benjy run` they typed), and with it its workers' tools: asked once, not per item.
APPROVED_RUN = "approvedRun"


def approved_run(process: Process, host: WorkerHost | None, tool: str | None = None) -> str | None:
    """The id of the run (``process`` or an ancestor) the person approved at its start, or None;
    with ``tool``: only when that run's grant lists it (the tools shown when it was approved)."""
    seen: set[str] = set()
    current: Process | None = process
    while current is not None and current.id not in seen:
        seen.add(current.id)
        grant = current.engine_params.get(APPROVED_RUN)
        if isinstance(grant, dict):
            listed = grant.get("tools")
            if tool is not None and isinstance(listed, list) and tool not in listed:
                return None  # the nearest grant decides: it did not approve this tool
            return current.id
        if not current.parent or host is None:
            return None
        current = host.find(current.parent)
    return None


def grant_run(engine_params: dict[str, Any], *, by: str, tools: list[str], check: str | None) -> None:
    """Record in a new run's engine params that the person approved it (and its workers' tools)."""
    engine_params[APPROVED_RUN] = {"by": by, "tools": sorted(tools), "check": check}
