"""The approval dialog: what a tool call would do, and the person's answer (tools/approval.py).

A modal over the chat while the engine waits (runtime/approvals.py calls the app's approver):
the call's title, its fields (the whole command, the folder, the sandbox; the goal, recipe and
check of a worker), the diff of a file_write, and a warning when the command runs unconfined.

Keys: ``y`` allow once · ``a`` allow always (this command / this path, in this project) · ``t``
allow always (every call of this tool, in this project) · ``n`` deny (a reason box opens; Enter
denies with it, the model is told) · Esc leaves it unanswered: the call is not run and the turn
waits (Enter on an empty prompt or /retry asks again).
"""

from __future__ import annotations

from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from vance_cli.tools.approval import ALLOW, ALWAYS_SUBJECT, ALWAYS_TOOL, DENY, PENDING, ApprovalRequest, Decision
from vance_cli.tui.widgets import clean

MAX_DIFF_LINES = 400  # shown in the dialog (scrolls); the whole diff is in --json's event



class ApprovalScreen(ModalScreen[Decision]):
    CSS_PATH = "approval_screen.tcss"
    # nothing focused: the letter keys answer (the reason box takes the focus only after n)
    AUTO_FOCUS = None
    BINDINGS = [
        Binding("y", "allow_once", "Allow once"),
        Binding("a", "allow_subject", "Allow always (this command)"),
        Binding("t", "allow_tool", "Allow always (this tool)"),
        Binding("n", "deny", "Deny"),
        Binding("escape", "dismiss_unanswered", "Not now", show=False),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request
        self._denying = False

    def compose(self) -> ComposeResult:
        p = self.request.preview
        with Vertical(id="dialog") as dialog:
            dialog.border_title = clean(f"allow {self.request.tool}? {p.title}")
            if self.request.notice:
                yield Static(Text("⚠ " + clean(self.request.notice)), id="notice")
            yield Static(self._fields_text(), id="fields")
            if p.diff:
                lines = p.diff.splitlines()
                shown = "\n".join(lines[:MAX_DIFF_LINES])
                if len(lines) > MAX_DIFF_LINES:
                    shown += f"\n... {len(lines) - MAX_DIFF_LINES:,} more lines"
                with VerticalScroll(id="diff"):
                    yield Static(Syntax(clean(shown), "diff", theme="ansi_dark", word_wrap=True))
            yield Static(self._keys_text(), id="keys")
            reason = Input(placeholder="why not? (the model is told; Enter denies, Esc goes back)", id="reason")
            reason.display = False
            reason.disabled = True
            yield reason

    def _fields_text(self) -> Table:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        for key, value in self.request.preview.fields:
            style = "bold red" if key == "sandbox" and value.startswith("NONE") else ""
            grid.add_row(key, Text(clean(value), style=style))
        return grid

    def _keys_text(self) -> Text:
        subject = "this command" if self.request.tool == "exec_run" else "this path" if self.request.tool == "file_write" else "this check"
        parts = [("y", "allow once")]
        if self.request.subject is not None:
            parts.append(("a", f"always ({subject}, this project)"))
        parts += [("t", f"always ({self.request.tool}, this project)"), ("n", "deny"), ("Esc", "not now")]
        text = Text()
        for i, (key, what) in enumerate(parts):
            if i:
                text.append(" · ")
            text.append(key, style="bold")
            text.append(f" {what}")
        return text

    # --- answers ------------------------------------------------------------------------------

    def action_allow_once(self) -> None:
        if not self._denying:
            self.dismiss(Decision(ALLOW))

    def action_allow_subject(self) -> None:
        if not self._denying and self.request.subject is not None:
            self.dismiss(Decision(ALLOW, always=ALWAYS_SUBJECT))

    def action_allow_tool(self) -> None:
        if not self._denying:
            self.dismiss(Decision(ALLOW, always=ALWAYS_TOOL))

    def action_deny(self) -> None:
        if self._denying:
            return
        self._denying = True
        reason = self.query_one("#reason", Input)
        reason.disabled = False
        reason.display = True
        reason.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(Decision(DENY, reason=event.value.strip() or None))

    def action_dismiss_unanswered(self) -> None:
        if self._denying:  # Esc in the reason box: back to the choices
            self._denying = False
            reason = self.query_one("#reason", Input)
            reason.value = ""
            reason.display = False
            reason.disabled = True
            self.set_focus(None)
            return
        self.dismiss(Decision(PENDING, reason="not answered (Esc): it waits for your approval", by="nobody"))

    def interrupt(self) -> None:
        """Ctrl+C on the dialog: unanswered (the call is not run, the turn waits)."""
        self._denying = False
        self.action_dismiss_unanswered()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # while the reason box is open, letters are typed into it
        return not (self._denying and action in ("allow_once", "allow_subject", "allow_tool", "deny"))
