"""Found by review: answering, then a hard stop (Ctrl+C twice), reported the old question (exit 10)."""

import asyncio
from tests.engines.benjy_brain import Brain
from tests.tui.conftest import SIZE, wait_for
from tests.tui.test_benjy_live import _service, _start
from vance_cli.store.process import Status
from vance_cli.tui.app import VanceApp
from vance_cli.tui.sources.benjy import BenjyRunSource
from vance_cli.tui.widgets.question_box import QuestionBox
from vance_cli.tui.widgets.status_bar import StatusBar



async def test_hard_stop_after_answering_reports_stopped_not_the_old_question(tmp_path):
    routes = []
    answered = asyncio.Event()
    started_after = asyncio.Event()

    def route(prompt):
        routes.append(prompt)
        if len(routes) == 1:
            return {"op": "ask_parent", "question": "Which content?", "reason": "check fails"}
        return {"op": "retry", "item": 1, "reason": "answered"}

    brain = Brain(items=1, overrides={"ROUTE": route},
                  worker_files=lambda n, p: [(f"item{n}.txt", "fine\n" if "write fine" in p else "BAD\n")])

    async def fn(request):
        if request.tools and answered.is_set():
            started_after.set()
            await asyncio.sleep(60)
        return brain(request)

    service, ws = _service(tmp_path, fn)
    pid = _start(service, ws)
    source = BenjyRunSource(service, pid)
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(QuestionBox)
        await wait_for(pilot, lambda: box.display, timeout=20)
        answered.set()
        for ch in "write fine":
            await pilot.press("space" if ch == " " else ch)
        await pilot.press("enter")
        await wait_for(pilot, started_after.is_set, timeout=20)
        await pilot.press("ctrl+c")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running, timeout=10)
    disk = service.runtime.store.load(pid)
    result = source.outcome()
    assert result.stopped and result.status != Status.BLOCKED, (result.status, result.question)
    assert disk.status != Status.BLOCKED
