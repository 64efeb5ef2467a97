"""The chat: transcript, todo box, journal panel, prompt and status bar over one chat process.

The screen turns the runtime's events into widgets and the person's keys into intents; every
model call runs in a worker (``run_turn``), never in a handler. Ctrl+C cancels that worker: the
runtime saves the process SUSPENDED at that await (each step is on disk before the next effect),
and the next Enter on an empty prompt (or /retry) continues the turn.
"""

from __future__ import annotations

import asyncio
import time

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input, TextArea
from textual.worker import Worker

from vance_cli.errors import VanceError
from vance_cli.events import (
    Event,
    JournalEvent,
    MessageDelta,
    MessageEvent,
    StatusChanged,
    TodosUpdated,
    ToolFinished,
    ToolStarted,
    UsageEvent,
)
from vance_cli.store.transcript import Entry, entries
from vance_cli.tools.attach import Attached, split_attached
from vance_cli.tui import commands
from vance_cli.tui.controller import ChatController
from vance_cli.tui.history import InputHistory
from vance_cli.tui.keys import KeysFirst
from vance_cli.tui.messages import EngineEvent, QuitRequested, Submitted, TurnEnded
from vance_cli.tui.widgets.command_hints import CommandHints
from vance_cli.tui.widgets.journal_panel import JournalPanel
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.note_line import NoteLine
from vance_cli.tui.widgets.prompt_input import PromptInput
from vance_cli.tui.widgets.status_bar import StatusBar
from vance_cli.tui.widgets.todo_box import TodoBox
from vance_cli.tui.widgets.tool_line import ToolLine
from vance_cli.tui.widgets.transcript import Transcript

QUIT_WINDOW = 3.0  # seconds in which a second Ctrl+C quits
LISTING_SECONDS = 5.0  # how long the workspace's listing for @ completion is reused
_NO_WIDGET = ("result", "journal")  # transcript entries that make no widget of their own (_widgets_for)


def _newest(items: list[Entry], count: int) -> int:
    """Where the newest entries that make ``count`` widgets start."""
    made = 0
    for index in range(len(items) - 1, -1, -1):
        if items[index].kind not in _NO_WIDGET:
            made += 1
            if made == count:
                return index
    return 0


def _take_keys(app) -> None:
    take = getattr(app, "take_keys", None)
    if take is not None:
        take()


class ChatScreen(KeysFirst, Screen):
    CSS_PATH = "chat_screen.tcss"
    BINDINGS = [
        Binding("f2", "toggle_journal", "Journal"),
        Binding("escape", "leave_prompt", "Leave prompt", show=False),
    ]

    def __init__(self, controller: ChatController, history: InputHistory | None = None, *, pick: bool = False,
                 pick_all_folders: bool = False) -> None:
        super().__init__()
        self.controller = controller
        self.pick = pick  # open on the resume picker (`vance chat --resume` without an id)
        self.pick_all_folders = pick_all_folders  # ... with --all: every folder's chats
        self.history = history or InputHistory(None)
        self.turn_worker: Worker | None = None
        self._tools: dict[str, tuple[ToolLine, float]] = {}
        self._quit_armed_at: float | None = None
        self._listing: tuple[float, list[str]] | None = None  # (when, the workspace's paths)

    def compose(self) -> ComposeResult:
        yield TodoBox(id="todos")
        with Horizontal(id="main"):
            yield Transcript(id="transcript")
            yield JournalPanel(id="journal")
        yield CommandHints(id="hints")
        yield PromptInput(self.history, id="prompt")
        yield StatusBar(id="status")

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    def on_mount(self) -> None:
        self.query_one(JournalPanel).display = False
        self.controller.subscribe(self._on_bus_event)
        self.load_process()
        prompt = self.query_one(PromptInput)
        prompt.path_source = self.workspace_paths
        prompt.focus()
        if self.pick:
            self.refresh_status("pick a chat to resume")
            self.open_picker(leave_on_cancel=True, all_folders=self.pick_all_folders)
        self.call_later(_take_keys, self.app)  # after the focus is set (focus() is queued too)

    def _on_bus_event(self, event: Event) -> None:
        # Called synchronously by the engine; hand the event to the screen's queue and return.
        self.post_message(EngineEvent(event))

    # --- the process on screen ----------------------------------------------------------------

    def load_process(self) -> None:
        """Show the open process: its transcript (the newest entries), todos and status."""
        transcript = self.transcript
        transcript.clear()
        process = self.controller.process
        if process is not None:
            items = entries(process)
            # Only the newest entries become widgets: the transcript keeps the last max_mounted
            # anyway, and building one for each of 5,000 messages held a resumed chat's first
            # paint for ~0.7 s (issue 20). The earlier ones are counted, not built.
            start = _newest(items, transcript.max_mounted)
            transcript.hidden += sum(1 for e in items[:start] if e.kind not in _NO_WIDGET)
            transcript.add_many(self._widgets_for(items[start:]))
            todos = self.query_one(TodoBox)
            todos.todos.clear()
            todos.set_todos(process.id, [t.model_dump() for t in process.todos])
            if self.controller.has_open_turn() and process.history:
                transcript.add(NoteLine("this turn did not finish: press Enter on an empty prompt (or /retry) to continue it", "warning"))
        self.refresh_status()

    def _widgets_for(self, items: list[Entry]) -> list:
        out: list = []
        lines: dict[str, ToolLine] = {}
        for e in items:
            if e.kind == "user":
                typed, files = split_attached(e.text)
                out.append(MessageView(typed, "user"))
                if files:
                    out.append(NoteLine(Attached(e.text, files).summary(), "info"))
            elif e.kind == "message":
                out.append(MessageView(e.text, "assistant"))
            elif e.kind == "call":
                line = ToolLine(e.call_id, e.name, e.text)
                lines[e.call_id] = line
                out.append(line)
            elif e.kind == "result":
                line = lines.get(e.call_id)
                if line is None:
                    line = ToolLine(e.call_id, e.name, "")
                    out.append(line)
                line.ok, line.summary, line.result_size = e.ok, " ".join(e.text.split())[:120], len(e.text)
                line.add_class("-ok" if e.ok else "-failed")
            elif e.kind == "note":
                label = {"correction": "correction: ", "summary": "summary of the earlier turns (sent instead of them): "}
                out.append(NoteLine(label.get(e.tag, "") + e.text[:160], "info"))
            elif e.kind == "rejected":
                out.append(NoteLine(f"respond rejected: {e.text[:160]}", "warning"))
            elif e.kind == "unshown":
                out.append(NoteLine(f"not shown ({e.tag}): {' '.join(e.text.split())[:160]}", "info"))
        return out

    def refresh_status(self, extra: str = "") -> None:
        self.query_one(StatusBar).show(self.controller.status(), extra)

    # --- events from the runtime --------------------------------------------------------------

    def on_engine_event(self, message: EngineEvent) -> None:
        event = message.event
        mine = event.process_id == self.controller.process_id
        if isinstance(event, TodosUpdated):
            self.query_one(TodoBox).set_todos(event.process_id, event.todos)
        elif isinstance(event, JournalEvent):
            journal = self.query_one(JournalPanel)
            journal.add_entry(event.text if mine else f"**{event.process_id}** {event.text}", event.level)
            if not mine:
                journal.display = True  # a worker is reporting: show its journal
            elif event.level in ("warning", "error"):
                self.transcript.end_stream()  # a corrected call: its text is replaced
                self.transcript.add(NoteLine(event.text, event.level))
        elif not mine:
            if isinstance(event, MessageEvent):
                self.query_one(JournalPanel).add_entry(f"**{event.process_id}** says: {event.text}")
            return
        elif isinstance(event, MessageDelta):
            self.transcript.stream(event.call, event.text)
        elif isinstance(event, MessageEvent):
            if not self.transcript.finish_stream(event.text):
                self.transcript.add(MessageView(event.text, "assistant"))
        elif isinstance(event, ToolStarted):
            self.transcript.end_stream()
            line = ToolLine(event.call_id, event.name, event.arguments)
            self._tools[event.call_id] = (line, event.ts)
            self.transcript.add(line)
        elif isinstance(event, ToolFinished):
            line, started = self._tools.pop(event.call_id, (None, event.ts))
            if line is None:
                line = ToolLine(event.call_id, event.name, "")
                self.transcript.add(line)
            line.finish(event.ok, event.summary, event.size, max(0.0, event.ts - started))
        if isinstance(event, (StatusChanged, UsageEvent)):
            self.refresh_status()

    # --- the person's intents -----------------------------------------------------------------

    @property
    def turn_running(self) -> bool:
        return self.turn_worker is not None and not self.turn_worker.is_finished

    def workspace_paths(self) -> list[str]:
        """The workspace's paths for ``@`` completion (listed again after ``LISTING_SECONDS``)."""
        now = time.monotonic()
        if self._listing is None or now - self._listing[0] > LISTING_SECONDS:
            self._listing = (now, self.controller.workspace_paths())
        return self._listing[1]

    @on(PromptInput.Changed)
    def _hint(self, event: PromptInput.Changed) -> None:
        prompt = self.query_one(PromptInput)
        hints = self.query_one(CommandHints)
        word = prompt.at_word() if prompt.search is None else None
        if word is not None:
            hints.show_paths(word, prompt.path_matches() or [])
        else:
            hints.show_for(event.text_area.text)

    def on_submitted(self, message: Submitted) -> None:
        text = message.text
        self.query_one(CommandHints).show_for("")
        parsed = commands.parse(text)
        if parsed is not None:
            self.run_command(*parsed)
            return
        if not text.strip():
            if not self.turn_running and self.controller.has_open_turn():
                self.start_turn(None)
            return
        text = commands.message_text(text)
        try:
            attached = self.controller.attach(text)
        except VanceError as exc:  # an @path the file tools refuse: nothing is sent, the text comes back
            self.note(exc.render(), "error")
            prompt = self.query_one(PromptInput)
            if not prompt.text:
                prompt.load_text(message.text)
                prompt.move_cursor(prompt.document.end)
            return
        self.transcript.add(MessageView(text, "user"))
        if attached.summary():
            self.note(attached.summary(), "info")
        text = attached.message
        if self.turn_running:
            # taken in by the engine after the running turn, like any message that arrives meanwhile
            self.controller.runtime.send(self.controller.process, text)
            self.transcript.add(NoteLine("queued: taken in after the running turn", "info"))
            return
        self.start_turn(text)

    def on_quit_requested(self, message: QuitRequested) -> None:
        self.app.exit()

    def start_turn(self, text: str | None) -> None:
        self._quit_armed_at = None
        self.turn_worker = self.run_turn(text)
        self.refresh_status()

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, text: str | None) -> None:
        try:
            await self.controller.turn(text)
        except asyncio.CancelledError:
            self.post_message(TurnEnded(stopped=True))
            raise
        except VanceError as exc:
            self.post_message(TurnEnded(error=exc.render()))
        except Exception as exc:  # a bug: say so in the app, keep the app alive
            self.post_message(TurnEnded(error=f"internal error: {type(exc).__name__}: {exc}\n  (set VANCE_DEBUG=1 and use --plain for a traceback)"))
        else:
            self.post_message(TurnEnded())

    def on_turn_ended(self, message: TurnEnded) -> None:
        self.transcript.end_stream()
        if message.stopped:
            self.transcript.add(NoteLine("stopped; the state is saved. Enter on an empty prompt (or /retry) continues the turn", "warning"))
        elif message.error:
            self.transcript.add(NoteLine(message.error + "\n  (Enter on an empty prompt or /retry tries again)", "error"))
        self.refresh_status()

    def interrupt(self) -> None:
        """Ctrl+C: stop the running turn; a second Ctrl+C (within a few seconds) quits."""
        now = time.monotonic()
        if self._quit_armed_at is not None and now - self._quit_armed_at <= QUIT_WINDOW:
            self.app.exit()
            return
        self._quit_armed_at = now
        if self.turn_running:
            assert self.turn_worker is not None
            self.turn_worker.cancel()
            self.refresh_status("stopping…")
        self.app.notify("Ctrl+C again to quit", timeout=QUIT_WINDOW)

    def action_toggle_journal(self) -> None:
        journal = self.query_one(JournalPanel)
        journal.display = not journal.display

    def action_leave_prompt(self) -> None:
        # Esc never stops work: it only moves the focus (to the transcript, for copy and expand),
        # and from anywhere else back to the prompt.
        prompt = self.query_one(PromptInput)
        if self.focused is not prompt:
            prompt.focus()
            return
        self.query_one(CommandHints).show_for("")
        self.transcript.focus()

    def on_key(self, event: events.Key) -> None:
        """A printable key typed outside the prompt (after Esc, Tab or a click) is typed in the
        prompt, unless the focused widget has a binding for it (space expands a tool line)."""
        prompt = self.query_one(PromptInput)
        focused = self.focused
        if not event.is_printable or focused is prompt or isinstance(focused, (Input, TextArea)):
            return
        if event.key in self.app.active_bindings:
            return
        event.stop()
        event.prevent_default()
        prompt.focus()
        prompt.insert(event.character or "")

    # --- slash commands -----------------------------------------------------------------------

    def note(self, text: str, level: str = "plain") -> None:
        self.transcript.add(NoteLine(text, level))

    def run_command(self, name: str, arg: str) -> None:
        command = commands.BY_NAME.get(name)
        if command is None:
            self.note(f"unknown command /{name}; /help lists them (a message that starts with / is typed \\/)", "warning")
            return
        if command.needs_arg and not arg:
            self.note(f"/{name} needs {command.arg}: /{name} {command.arg}", "warning")
            return
        if self.turn_running and name in ("new", "resume", "recipe", "retry", "compact"):
            self.note(f"/{name} waits for the running turn: Ctrl+C stops it", "warning")
            return
        try:
            getattr(self, f"cmd_{name}")(arg)
        except VanceError as exc:
            self.note(exc.render(), "error")

    def cmd_help(self, arg: str) -> None:
        self.transcript.add(MessageView(commands.help_text(), "system", label="help"))

    def cmd_ps(self, arg: str) -> None:
        rows = [f"{'ID':<23} {'ENGINE':<7} {'STATUS':<9} TITLE"]
        for p in self.controller.processes()[:30]:
            here = " (this chat)" if p.id == self.controller.process_id else ""
            rows.append(f"{p.id:<23} {p.engine:<7} {p.status.value:<9} {(p.title or '')[:40]}{here}")
        self.note("\n".join(rows))

    def cmd_attach(self, arg: str) -> None:
        pid = self.controller.resolve(arg)
        self.app.watch_process(pid)

    def cmd_new(self, arg: str) -> None:
        process = self.controller.new()
        self.load_process()
        self.note(f"new chat {process.id}", "info")

    def open_picker(self, *, leave_on_cancel: bool = False, all_folders: bool = False) -> None:
        """The resume picker over this folder's chats; Enter resumes one, Esc cancels (and, when
        no chat is open yet, leaves: `vance chat --resume` without an id creates nothing)."""
        from vance_cli.output.chats import chat_rows
        from vance_cli.tui.screens.resume_screen import ResumeScreen
        from vance_cli.tui.status import folder_label

        runtime = self.controller.runtime
        chats = runtime.chats(all_folders=all_folders)
        current = self.controller.process.id if self.controller.process is not None else None
        if not [p for p in chats if p.id != current]:
            self.note("no other chat in this folder to resume; `vance chat --resume --all` lists every folder's", "info")
            if leave_on_cancel:
                self.app.exit()
            return

        def chosen(pid: str | None) -> None:
            if pid is None:
                if leave_on_cancel:
                    self.app.exit()
                return
            try:
                self.cmd_resume(pid)
            except VanceError as exc:
                self.note(exc.render(), "error")

        self.app.push_screen(ResumeScreen(chat_rows(chats, current), folder="" if all_folders else folder_label(str(runtime.scopes.cwd))), chosen)

    def cmd_resume(self, arg: str) -> None:
        if not arg:
            self.open_picker()
            return
        pid = self.controller.resolve(arg)
        if pid == self.controller.process_id:
            self.note(f"{pid} is this chat: it is already open", "info")
            return
        if self.controller.runtime.store.load(pid).engine == "benjy":
            self.note(f"{pid} is a Benjy run, not a chat: /attach {pid} shows it live; "
                      f"`vance benjy resume {pid}` continues it", "warning")
            return
        self.controller.open(pid)
        self.load_process()
        self.note(f"resumed {pid}", "info")

    def cmd_recipe(self, arg: str) -> None:
        process = self.controller.new(recipe=arg)
        self.load_process()
        self.note(f"new chat {process.id} with recipe {process.recipe_name}", "info")

    def cmd_model(self, arg: str) -> None:
        if not arg:
            self.note(self._models_text())
            return
        resolved = self.controller.set_model(arg)
        self.refresh_status()
        self.note(f"model for the next turns: {resolved}", "info")

    def _models_text(self) -> str:
        settings = self.controller.runtime.settings
        process = self.controller.process
        current = process.model if process is not None and process.model else "(none yet)"
        lines = [f"model: {current}"]
        if self.controller.model_override:
            lines.append(f"next turns: {settings.resolve_model(self.controller.model_override)} (switched with /model)")
        lines.append("aliases (config.toml [aliases]; /model NAME switches to an alias or a model string):")
        aliases = settings.model_aliases()
        width = max(len(a) for a, _ in aliases)
        lines += [f"  {alias:<{width}}  {target}" for alias, target in aliases]
        return "\n".join(lines)

    def cmd_copy(self, arg: str) -> None:
        from vance_cli.store.transcript import last_reply

        process = self.controller.process
        reply = last_reply(process) if process is not None else None
        if reply is None or not reply.text:
            self.note("nothing to copy: no reply since your last message", "info")
            return
        self.app.copy_to_clipboard(reply.text)
        self.note(f"copied the last reply ({len(reply.text):,} characters) to the clipboard "
                  "(by the terminal, OSC 52: some terminals need it allowed; macOS Terminal ignores it)", "info")

    def cmd_retry(self, arg: str) -> None:
        if self.controller.has_open_turn():
            self.start_turn(None)
        else:
            self.note("nothing to retry: the last turn finished", "info")

    def cmd_compact(self, arg: str) -> None:
        self.compact_worker = self.run_compact()

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_compact(self) -> None:
        process = self.controller.process
        if process is None:
            return
        try:
            done = await self.controller.chat.compact(process)
        except VanceError as exc:
            self.note(exc.render(), "error")
            return
        if done:
            summary = process.history[-1].content or ""
            self.note(f"compacted: the older turns are summarised (the process file keeps them): {summary[:300]}", "info")
        else:
            self.note("nothing to compact: only the last turns are in the history", "info")

    def cmd_permissions(self, arg: str) -> None:
        from vance_cli.runtime.approvals import permissions_command

        self.transcript.add(MessageView(permissions_command(self.controller.runtime.approvals, arg), "system", label="permissions"))

    def cmd_clear(self, arg: str) -> None:
        self.transcript.clear()

    def cmd_quit(self, arg: str) -> None:
        self.app.exit()
