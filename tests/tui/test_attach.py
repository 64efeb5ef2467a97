"""`/attach ID`: another process shown live on top of the chat (todos, its question), Esc comes back."""

from __future__ import annotations

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.store.process import Process, Status, Todo
from vance_cli.tui.screens.chat_screen import ChatScreen
from vance_cli.tui.screens.run_screen import RunScreen
from vance_cli.tui.widgets.todo_box import TodoBox


async def test_attach_shows_the_process_and_escape_comes_back_to_the_chat():
    app = make_app(ScriptedModel([respond("hi there")]))
    async with app.run_test(size=SIZE) as pilot:
        store = app.controller.runtime.store
        other = Process(engine="benjy", recipe_name="benjy-coding", status=Status.BLOCKED,
                        todos=[Todo(id="1", text="write the parser", status="open")],
                        engine_params={"benjyState": {"pendingQuestion": {"text": "Which parser?"}}})
        store.create(other)
        await type_text(pilot, f"/attach {other.id[-6:]}")  # a unique suffix is enough
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await wait_for(pilot, lambda: app.screen.query_one(TodoBox).display)
        assert "write the parser" in app.screen.query_one(TodoBox).render_body()
        for _ in range(2):  # the first Esc may only leave the answer box
            if isinstance(app.screen, RunScreen):
                await pilot.press("escape")
                await pilot.pause(0.2)
        assert isinstance(app.screen, ChatScreen)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(getattr(m, "text", None) == "hi there" for m in app.screen.query("MessageView")))
    assert store.load(other.id).status == Status.BLOCKED  # looking never changed it
    app.controller.close()
