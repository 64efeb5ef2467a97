"""Issue 16: a Benjy run driven on this screen that waits for an answer, answered by another
command: the screen notices the answer on disk and goes on (within a bounded time)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from tests.tui.conftest import SIZE, wait_for
from tests.tui.test_benjy_live import _service, _start, _texts, asking_brain
from vance_cli.runtime.benjy_service import BenjyService
from vance_cli.store.process import Status
from vance_cli.tui.app import VanceApp
from vance_cli.tui.sources import benjy as benjy_source
from vance_cli.tui.sources.benjy import BenjyRunSource
from vance_cli.tui.widgets.question_box import QuestionBox
from vance_cli.tui.widgets.status_bar import StatusBar

# seconds: the file is read every POLL_SECONDS (0.25 s; ~0.3 s here on a quiet machine), the rest
# is room for a loaded one (3-5 s seen with 7 other agents on 2 cores); the old code never moved on
BOUND = 10.0


def _asking_brain(routes: list[str], gate: asyncio.Event | None = None):
    brain = asking_brain(routes)
    if gate is None:
        return brain

    async def gated(request):  # after the answer, the workers wait for the test's gate
        if request.tools and len(routes) > 1:
            await gate.wait()
        return brain(request)

    return gated


def _driven_here(tmp_path, fn):
    """(service, workspace, run id, source, app): the run driven on this screen."""
    service, ws = _service(tmp_path, fn)
    pid = _start(service, ws)
    source = BenjyRunSource(service, pid)
    return service, ws, pid, source, VanceApp(run_source=source, preload=False)


async def _asked(app, pilot) -> tuple[QuestionBox, StatusBar]:
    box, status = app.screen.query_one(QuestionBox), app.screen.query_one(StatusBar)
    await wait_for(pilot, lambda: box.display, timeout=20, describe=lambda: status.render_text())
    return box, status


async def test_an_answer_written_by_another_process_moves_the_driving_screen_on(tmp_path):
    routes: list[str] = []
    service, ws, pid, source, app = _driven_here(tmp_path, _asking_brain(routes))
    async with app.run_test(size=SIZE) as pilot:
        box, status = await _asked(app, pilot)
        # what `vance benjy watch` does with an answer (ProcessFileSource.answer), from another process
        code = ("import sys; from vance_cli.store.files import ProcessStore; "
                "from vance_cli.runtime.benjy_service import queue_answer; "
                "queue_answer(ProcessStore(__import__('pathlib').Path(sys.argv[1])), sys.argv[2], 'please write fine')")
        subprocess.run([sys.executable, "-c", code, str(service.runtime.store.root), pid], check=True, timeout=30)
        assert service.runtime.store.load(pid).inbox  # on disk, not handed to this screen
        answered_at = time.monotonic()
        await wait_for(pilot, lambda: not box.display, timeout=BOUND, describe=lambda: status.render_text())
        assert time.monotonic() - answered_at < BOUND
        assert "**answered elsewhere**: please write fine" in _texts(app)
        await wait_for(pilot, lambda: "done" in status.render_text(), timeout=20, describe=lambda: status.render_text())
        await pilot.press("q")
    assert "Answer (verbatim):\nplease write fine" in routes[1]  # this screen's drive took it in
    assert (ws / "item1.txt").read_text() == "fine\n"
    assert source.outcome().status == Status.DONE


async def test_a_run_another_vance_drives_after_answering_is_followed_to_its_end(tmp_path):
    routes: list[str] = []
    gate = asyncio.Event()
    fn = _asking_brain(routes, gate)
    service, ws, pid, source, app = _driven_here(tmp_path, fn)
    (tmp_path / "other").mkdir()
    other = BenjyService(_service(tmp_path / "other", fn)[0].runtime)  # as `vance benjy answer` elsewhere
    async with app.run_test(size=SIZE) as pilot:
        box, status = await _asked(app, pilot)
        elsewhere = asyncio.ensure_future(other.answer(pid, "please write fine"))  # takes the lock, drives
        await wait_for(pilot, lambda: not box.display and "driven by vance pid" in status.render_text(),
                       timeout=BOUND, describe=lambda: status.render_text())
        assert "*the run goes on in vance pid" in _texts(app)
        assert not source.running  # this screen does not drive it meanwhile
        gate.set()
        result = await asyncio.wait_for(elsewhere, timeout=20)
        assert result.status == Status.DONE
        await wait_for(pilot, lambda: "done" in status.render_text() and "driven by" not in status.render_text(),
                       timeout=BOUND, describe=lambda: status.render_text())
        await pilot.press("q")
    assert len(routes) == 2 and source.outcome().status == Status.DONE
    assert (ws / "item1.txt").read_text() == "fine\n"


def test_the_file_is_read_often_enough_for_the_bound():
    assert benjy_source.POLL_SECONDS <= 0.5
