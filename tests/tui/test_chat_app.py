"""The chat app driven with Pilot: messages, streaming, status, tools, corrections, keys, commands."""

from __future__ import annotations

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.status_bar import StatusBar


def _messages(app, role="assistant"):
    return [m.text for m in app.screen.query(MessageView) if m.role == role]


async def test_a_message_gets_the_respond_reply_and_blocked_is_waiting_for_you():
    app = make_app(ScriptedModel([respond("Hello **there**")]))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _messages(app) == ["Hello **there**"])
        assert _messages(app, "user") == ["hi"]
        await wait_for(pilot, lambda: "waiting for you" in app.screen.query_one(StatusBar).render_text())
        assert "1 calls" in app.screen.query_one(StatusBar).render_text()
    app.controller.close()


async def test_the_respond_message_streams_in_before_the_turn_ends(fake_openai, monkeypatch):
    from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces
    from vance_cli.tui.widgets.streaming_message import StreamingMessage

    monkeypatch.setenv("VANCE_API_BASE", fake_openai.url)
    long = "This reply is streamed piece by piece so that the person sees it grow. " * 3
    fake_openai.enqueue(tool_calls=[("respond", {"message": long})], chunk_delay=0.02)
    painted: list[tuple[str, int]] = []  # (text on screen, messages in the transcript then)
    original = StreamingMessage.flush

    def recording_flush(self):
        original(self)
        if self.text:
            painted.append((self.text, len(_messages(app))))

    monkeypatch.setattr(StreamingMessage, "flush", recording_flush)
    app = make_app(model_name="openai/test-model")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _messages(app) == [long], describe=lambda: _messages(app))
        # the streamed widget became the message in place (issue 16: nothing parsed twice)
        await wait_for(pilot, lambda: app.screen.transcript.streaming_text is None)
        (message,) = [m for m in app.screen.query(MessageView) if m.role == "assistant"]
        assert isinstance(message, StreamingMessage) and not message.streaming
        await wait_for(pilot, lambda: message.query_one(MarkdownPieces).shown == long)
    partial = [text for text, shown in painted if text != long and shown == 0]
    assert partial, painted
    assert all(long.startswith(text) for text, _ in painted)
    assert len({text for text, _ in painted}) > 2  # it grew on screen in several steps
    assert fake_openai.requests[0]["stream"] is True


async def test_tool_calls_show_as_compact_lines_that_expand(tmp_path):
    from vance_cli.tui.widgets.tool_line import ToolLine

    (tmp_path / "work").mkdir(exist_ok=True)
    reply = {"tool_calls": [{"name": "file_list", "arguments": {"path": "."}}]}
    app = make_app(ScriptedModel([reply, respond("listed")]), recipe="ford")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "list")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _messages(app) == ["listed"])
        line = app.screen.query_one(ToolLine)
        assert line.tool_name == "file_list" and line.ok is True and line.result_size is not None
        collapsed = line.render_text()
        assert "\n" not in collapsed and "file_list" in collapsed and "chars" in collapsed
        await pilot.click(ToolLine)
        assert "arguments:" in line.render_text()


async def test_a_correction_turn_is_quiet_and_only_the_final_reply_shows():
    from vance_cli.tui.widgets.note_line import NoteLine

    app = make_app(ScriptedModel(["plain text without a tool", respond("the real answer")]))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "q")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _messages(app) == ["the real answer"])
        notes = [n.text for n in app.screen.query(NoteLine)]
        assert any("correction 1/" in n for n in notes)
        assert "plain text without a tool" not in " ".join(_messages(app))


async def test_a_workers_todos_and_journal_update_the_box_and_panel():
    from vance_cli.events import JournalEvent, TodosUpdated
    from vance_cli.tui.widgets.journal_panel import JournalPanel
    from vance_cli.tui.widgets.todo_box import TodoBox

    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(TodoBox)
        assert not box.display
        todos = [{"id": "1", "text": "write the parser", "status": "done"},
                 {"id": "2", "text": "test it", "status": "open"}]
        app.controller.emit(TodosUpdated("worker-1", todos))
        app.controller.emit(JournalEvent("worker-1", "**DO** item 2"))
        await pilot.pause()
        assert box.display and box.title == "todos · 1 done · 1 open"
        assert "✓ write the parser" in box.render_body()
        journal = app.screen.query_one(JournalPanel)
        assert journal.display and journal.texts == ["**worker-1** **DO** item 2"]
        app.controller.emit(TodosUpdated("worker-1", []))
        await pilot.pause()
        assert not box.display


async def test_an_unreachable_model_shows_the_fix_and_the_app_keeps_working(monkeypatch, vance_home):
    import socket

    from tests.fakeserver import FakeOpenAIServer
    from vance_cli.tui.widgets.note_line import NoteLine

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    monkeypatch.setenv("VANCE_API_BASE", f"http://127.0.0.1:{dead}/v1")
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\n")
    app = make_app(model_name="openai/test-model")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.level == "error" for n in app.screen.query(NoteLine)), timeout=30)
        error = next(n.text for n in app.screen.query(NoteLine) if n.level == "error")
        assert "cannot connect" in error and "fix:" in error and "Traceback" not in error
        assert "failed" in app.screen.query_one(StatusBar).render_text()
        # the server comes up: Enter on an empty prompt retries the same turn
        with FakeOpenAIServer(port=dead):
            await pilot.press("enter")
            await wait_for(pilot, lambda: _messages(app) == ["echo: hello"], timeout=10)
        assert "waiting for you" in app.screen.query_one(StatusBar).render_text()
        assert _messages(app, "user") == ["hello"]


async def test_a_worker_started_from_the_chat_runs_its_todos_show_and_its_report_comes_back(
        fake_openai, monkeypatch, vance_home):
    # Not scripted events: Arthur (over the local server) calls process_spawn, the real Benjy run
    # works in the chat's folder, and the console shows its todos, then Arthur's relay of its report.
    from tests.cli.test_cli_delegation import CHECK_PY, arthur, own_hub_with_commands
    from tests.engines.benjy_brain import Brain
    from vance_cli.events import TodosUpdated
    from vance_cli.tui.widgets.todo_box import TodoBox

    own_hub_with_commands(vance_home)  # the model's check runs a command: the hub must grant exec_run
    brain = Brain(items=1)
    fake_openai.responder = lambda body: arthur(body) or brain.reply_body(body)
    monkeypatch.setenv("VANCE_API_BASE", fake_openai.url)
    monkeypatch.setenv("VANCE_MODEL", "openai/fake-model")  # the worker's model
    (vance_home.parent / "work" / "check.py").write_text(CHECK_PY)
    app = make_app(model_name="openai/fake-model")
    seen: list[tuple[str, int]] = []
    app.controller.subscribe(lambda e: seen.append((e.process_id, len(e.todos))) if isinstance(e, TodosUpdated) else None)
    boxes: list[str] = []  # what the todo box showed, after each update the screen gave it
    original = TodoBox.set_todos

    def recording_set_todos(self, process_id, todos):
        original(self, process_id, todos)
        boxes.append(self.render_body())

    monkeypatch.setattr(TodoBox, "set_todos", recording_set_todos)

    def relayed() -> bool:
        return any(m.startswith("The run is back: [worker ") for m in _messages(app))

    from vance_cli.events import ApprovalNeeded
    from vance_cli.tui.screens.approval_screen import ApprovalScreen

    asked: list[str] = []
    app.controller.subscribe(lambda e: asked.append(e.tool) if isinstance(e, ApprovalNeeded) else None)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "make item1")
        await pilot.press("enter")
        # the person approves the run once, at its start: the goal, the recipe, the model's check
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        fields = dict(app.screen.request.preview.fields)
        assert fields["recipe"] == "benjy-coding" and fields["check"].endswith("check.py")
        await pilot.press("y")
        await wait_for(pilot, relayed, timeout=60, describe=lambda: _messages(app))
        assert asked == ["process_spawn"]  # the worker's file_write did not ask again
        assert _messages(app)[0] == "I started a Benjy run for that."
        workers = {pid for pid, n in seen if pid != app.controller.process_id and n}
        assert workers, seen  # the worker's todos reached this screen
        assert any("write item1.txt" in body for body in boxes), boxes
    assert (vance_home.parent / "work" / "item1.txt").is_file()
    app.controller.close()
