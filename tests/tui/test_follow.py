"""The transcript and the journal keep the newest output in view until the person scrolls up
(found by review: a streamed reply taller than the screen, and journal pruning, stopped it for good)."""

from __future__ import annotations

from tests.tui.conftest import make_app
from vance_cli.events import JournalEvent, MessageDelta
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.widgets.journal_panel import JournalPanel
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.transcript import Transcript
from vance_cli.tui.widgets.note_line import NoteLine


async def test_the_transcript_follows_a_streamed_reply_taller_than_the_screen_and_what_comes_after():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        pid = app.controller.process_id
        transcript = app.screen.query_one(Transcript)
        text = ""
        for i in range(80):
            text += f"line {i}\n\n"
            app.controller.emit(MessageDelta(pid, 1, text, "respond"))
            await pilot.pause(0.03)
        await pilot.pause(0.5)
        assert transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
        transcript.end_stream()  # as the chat screen does when the reply is decided
        transcript.add(MessageView(text, "assistant"))
        await pilot.pause(0.3)
        for i in range(3):  # the person's next message, and more
            transcript.add(NoteLine(f"what comes next {i}", "info"))
            await pilot.pause(0.2)
            assert transcript.scroll_y == transcript.max_scroll_y > 0


async def test_a_stream_dropped_without_a_reply_leaves_a_sane_scroll():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        pid = app.controller.process_id
        transcript = app.screen.query_one(Transcript)
        app.controller.emit(MessageDelta(pid, 1, "line\n\n" * 60, "respond"))
        await pilot.pause(0.5)
        transcript.end_stream()  # a stopped turn: nothing replaces it
        transcript.add(NoteLine("stopped", "warning"))
        await pilot.pause(0.3)
        assert 0 <= transcript.scroll_y <= transcript.max_scroll_y


async def test_the_transcript_stays_where_the_person_scrolled():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.screen.query_one(Transcript)
        for i in range(40):
            transcript.add(NoteLine(f"note {i}", "info"))
        await pilot.pause(0.3)
        transcript.scroll_to(y=0, animate=False, release_anchor=True)  # what the wheel and keys do
        await pilot.pause(0.2)
        transcript.add(NoteLine("one more", "info"))
        await pilot.pause(0.3)
        assert transcript.scroll_y == 0


async def test_the_journal_keeps_following_past_its_pruning():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        journal = app.screen.query_one(JournalPanel)
        journal.max_entries = 50
        journal.display = True
        for i in range(90):
            app.controller.emit(JournalEvent(app.controller.process_id, f"entry {i}\n\nmore"))
            await pilot.pause(0.02)
        await pilot.pause(0.5)
        assert journal.following and journal.scroll_y == journal.max_scroll_y
