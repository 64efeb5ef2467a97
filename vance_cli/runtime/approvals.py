"""The approval gate: the one place that decides whether a tool call with side effects may run.

Engines ask it before a call that needs approval (``Tool.needs_approval``) is recorded as started
(engines/ford.py), and before a call of a ``Tool.ruled`` tool (an MCP tool whose read-only claim
is trusted), which only a deny or ask rule stops or asks about. It decides, in this order:

1. a ``deny`` rule that matches (config.toml of the user, of a trusted project, remembered
   "deny" choices) denies: the model is told, nothing runs;
2. a run the person approved at its start (a ``process_spawn`` they allowed, ``vance benjy run``
   they typed) allows its workers' calls: asked once per run, not per item;
3. an ``ask`` rule asks; else an ``allow`` rule, ``--allow`` or ``--yes`` allows;
   ``permissions.sandboxed_exec = "allow"`` lets a command that runs in the sandbox through;
4. everything else asks the person (the console's dialog); where nobody can answer (``chat -p``)
   the call is not run, the turn stays open (BLOCKED, resumable) and the hint names the flag.

Where commands run unconfined (no sandbox) the first command of a session says so, on screen and
with the question, and no ``sandboxed_exec`` shortcut applies: every command asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vance_cli.config.permissions import (
    Rule,
    cli_rules,
    config_rules,
    decide,
    exact,
    parse_rule,
    remember,
    remembered_rules,
    sandboxed_exec,
)
from vance_cli.events import ApprovalNeeded, EventBus, JournalEvent
from vance_cli.tools.approval import (
    ALLOW,
    ALWAYS_SUBJECT,
    ALWAYS_TOOL,
    DENY,
    PENDING,
    REFUSED,
    ApprovalRequest,
    Approver,
    Decision,
    approved_run,
    preview_of,
)

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.store.process import Process
    from vance_cli.tools.base import Tool, ToolContext, WorkerHost

UNCONFINED_NOTICE = (
    "commands run WITHOUT a sandbox here ({why}): a command can read and change anything your user can. "
    "Each command asks first (unless your rules or --yes allow it)."
)


def deny_rule(scopes: Scopes, settings: Settings, tool: str, subject: str | None) -> Rule | None:
    """The deny rule (config.toml, remembered "deny") that stops ``tool`` on ``subject``, if one does:
    for a call approved at its start, which no gate asks about (the check a caller gives a Benjy run)."""
    verdict, rule = decide([*config_rules(settings), *remembered_rules(scopes)], tool, subject)
    return rule if verdict == "deny" else None


class ApprovalGate:
    """Rules, flags and the person's answers for one vance invocation (a chat, a Benjy run)."""

    def __init__(
        self,
        scopes: Scopes,
        settings: Settings,
        *,
        allow: list[str] | tuple[str, ...] = (),
        yes: bool = False,
        approver: Approver | None = None,
        bus: EventBus | None = None,
        headless_hint: str = "chat -p",
    ) -> None:
        self.scopes = scopes
        self.settings = settings
        self.yes = yes
        self.approver = approver
        self.bus = bus
        self.headless_hint = headless_hint
        self.cli = cli_rules(list(allow))
        self.config = config_rules(settings)
        self.remembered = remembered_rules(scopes)
        self.session: list[Rule] = []  # "allow always" of this session (also remembered on disk)
        self.unconfined_said = False

    @property
    def rules(self) -> list[Rule]:
        return [*self.config, *self.remembered, *self.session, *self.cli]

    def reload(self) -> None:
        """Read the remembered rules again (after /permissions changed them)."""
        self.remembered = remembered_rules(self.scopes)

    # ------------------------------------------------------------------ the decision

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
    ) -> tuple[Decision, ApprovalRequest]:
        preview = await preview_of(tool, arguments, ctx)
        request = ApprovalRequest(process.id, call_id, tool.name, preview, arguments)
        if preview.refused is not None:  # the tool would refuse it: nothing to ask about
            return Decision(REFUSED, reason=preview.refused, by=f"{tool.name} itself"), request
        subject = preview.subject
        verdict, rule = decide(self.rules, tool.name, subject)
        if verdict == "deny":
            return Decision(DENY, reason=f"a rule denies it: {rule.text} ({rule.source})", by=f"rule {rule.text}"), request
        if not tool.needs_approval and verdict != "ask":  # a Tool.ruled call: only a rule stops or asks
            return Decision(ALLOW, by=f"{tool.name} needs no approval"), request
        grant = None if untrusted else approved_run(process, host, tool.name)
        if grant is not None and verdict != "deny":
            return Decision(ALLOW, by=f"approved at the start of run {grant}"), request
        if preview.sandboxed is False:
            request.notice = self._unconfined_notice(process, preview)
        if verdict == "allow":
            return Decision(ALLOW, by=f"rule {rule.text} ({rule.source})"), request
        if verdict is None and self.yes:
            return Decision(ALLOW, by="--yes"), request
        if (
            verdict is None
            and tool.name == "exec_run"
            and preview.sandboxed is True
            and sandboxed_exec(self.settings) == "allow"
        ):
            return Decision(ALLOW, by="permissions.sandboxed_exec = allow (the command runs in the sandbox)"), request
        return await self._ask(request), request

    async def _ask(self, request: ApprovalRequest) -> Decision:
        hint = self.allow_hint(request)
        self._emit(request, answered=self.approver is not None, hint=hint)
        if self.approver is None:
            return Decision(PENDING, reason=f"needs your approval; nothing can ask here ({hint})", by="nobody")
        decision = await self.approver(request)
        if decision.verdict == ALLOW and decision.always:
            self.keep_always(request, decision.always)
        return decision

    def keep_always(self, request: ApprovalRequest, always: str) -> str:
        """Remember "allow always" for this project (this command, or this tool); the rule's text."""
        text = request.tool
        if always == ALWAYS_SUBJECT and request.subject is not None:
            text = f"{request.tool}:{exact(request.subject)}"
        elif always != ALWAYS_TOOL and always != ALWAYS_SUBJECT:
            raise ValueError(f"unknown 'always' choice {always!r}")
        remember(self.scopes, "allow", text)
        self.session.append(parse_rule(text, "allow", "this session"))
        self.reload()
        return text

    def allow_hint(self, request: ApprovalRequest) -> str:
        if request.subject is not None and len(request.subject) <= 60 and "\n" not in request.subject:
            import shlex  # only for this hint: a turn that asks nobody never loads it

            flag = f"--allow {shlex.quote(request.tool + ':' + exact(request.subject))}"
        else:
            flag = f"--allow {request.tool}"
        return f"rerun with {flag}, or --yes to allow every call; or answer it in `vance chat --resume {request.process_id}`"

    def _unconfined_notice(self, process: Process, preview) -> str | None:
        if self.unconfined_said:
            return None
        self.unconfined_said = True
        why = next((v for k, v in preview.fields if k == "sandbox"), "no sandbox")
        notice = UNCONFINED_NOTICE.format(why=why.removeprefix("NONE: "))
        if self.bus is not None:
            self.bus.emit(JournalEvent(process.id, notice, "warning"))
        return notice

    def _emit(self, request: ApprovalRequest, *, answered: bool, hint: str) -> None:
        if self.bus is None:
            return
        p = request.preview
        self.bus.emit(
            ApprovalNeeded(
                request.process_id,
                call_id=request.call_id,
                tool=request.tool,
                title=p.title,
                subject=p.subject,
                fields=dict(p.fields),
                diff=p.diff,
                sandboxed=p.sandboxed,
                notice=request.notice,
                answered=answered,
                hint=None if answered else hint,
            )
        )


# --------------------------------------------------------------------------- /permissions

PERMISSIONS_USAGE = (
    "/permissions lists the rules; /permissions allow|ask|deny RULE keeps one for this project; "
    "/permissions forget RULE drops one (RULE is TOOL or TOOL:PATTERN, e.g. exec_run:pytest *)"
)


def permissions_command(gate: ApprovalGate, arg: str) -> str:
    """``/permissions [allow|ask|deny|forget RULE]`` (the console and --plain): the text to show.

    Changes are kept per project in $VANCE_HOME/permissions.json; config.toml rules are shown,
    and changed by editing the file. ValueError's message for a malformed rule."""
    from vance_cli.config.permissions import DECISIONS, forget, project_key

    verb, _, rule = arg.strip().partition(" ")
    rule = rule.strip()
    if verb:
        if verb not in (*DECISIONS, "forget") or not rule:
            return PERMISSIONS_USAGE
        if verb == "forget":
            done = forget(gate.scopes, rule)
            gate.session = [r for r in gate.session if r.text != rule]
            gate.reload()
            return f"forgot {rule}" if done else f"no remembered rule {rule} in this project (config.toml rules are edited there)"
        try:
            parse_rule(rule, verb, "")
        except ValueError as exc:
            return f"not changed: {exc}"
        remember(gate.scopes, verb, rule)
        gate.session = [r for r in gate.session if r.text != rule]
        gate.reload()
        return f"{verb} {rule}: kept for {project_key(gate.scopes)}"
    lines = ["**Approval rules** (deny wins over ask over allow; no rule: ask)", ""]
    rules = gate.rules
    if not rules:
        lines.append("- none: every file_write, exec_run and process_spawn asks")
    for r in rules:
        lines.append(f"- {r.decision} `{r.text}` ({r.source})")
    if gate.yes:
        lines.append("- allow every call (--yes)")
    lines += ["", f"sandboxed commands: {sandboxed_exec(gate.settings)} (permissions.sandboxed_exec)", "", PERMISSIONS_USAGE]
    return "\n".join(lines)
