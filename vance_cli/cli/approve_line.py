"""The line mode's approval question (`vance chat --plain` on a terminal): the same choices as the
console's dialog (tui/screens/approval_screen.py), asked on stderr and answered with a letter."""

from __future__ import annotations

import asyncio

from vance_cli.terminal import err
from vance_cli.text import for_terminal
from vance_cli.tools.approval import ALLOW, ALWAYS_SUBJECT, ALWAYS_TOOL, DENY, PENDING, ApprovalRequest, Decision

MAX_DIFF_LINES = 200


def _show(request: ApprovalRequest) -> None:
    p = request.preview
    lines = []
    if request.notice:
        lines.append(f"! {request.notice}")
    lines.append(f"allow {request.tool}? {p.title}")
    width = max((len(k) for k, _ in p.fields), default=0)
    lines += [f"  {k:<{width}}  {v}" for k, v in p.fields]
    if p.diff:
        diff = p.diff.splitlines()
        lines += diff[:MAX_DIFF_LINES]
        if len(diff) > MAX_DIFF_LINES:
            lines.append(f"... {len(diff) - MAX_DIFF_LINES:,} more diff lines")
    err(for_terminal("\n".join(lines)))


async def ask_on_the_terminal(request: ApprovalRequest) -> Decision:
    _show(request)
    always = "a always (this command) · " if request.subject is not None else ""
    prompt = f"[y once · {always}t always ({request.tool}) · n deny · Enter not now] > "
    while True:
        try:
            answer = (await asyncio.to_thread(input, prompt)).strip().lower()
        except EOFError:
            answer = ""
        if answer in ("y", "yes"):
            return Decision(ALLOW)
        if answer == "a" and request.subject is not None:
            return Decision(ALLOW, always=ALWAYS_SUBJECT)
        if answer == "t":
            return Decision(ALLOW, always=ALWAYS_TOOL)
        if answer in ("n", "no"):
            try:
                reason = (await asyncio.to_thread(input, "why not? (the model is told; Enter: no reason) > ")).strip()
            except EOFError:
                reason = ""
            return Decision(DENY, reason=reason or None)
        if answer == "":
            err("not run: it waits for your approval; /retry asks again (a message you send does too)")
            return Decision(PENDING, reason="not answered: it waits for your approval", by="nobody")
        err("answer y, " + ("a, " if request.subject is not None else "") + "t, n, or Enter")
