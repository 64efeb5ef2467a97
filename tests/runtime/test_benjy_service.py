"""`vance benjy run`'s way through the service: one recipe load, one params resolution, one save, no unlocked gap, no re-read."""

from __future__ import annotations

import asyncio

import pytest

from tests.engines.benjy_brain import Brain
from tests.engines.test_benjy_loop import Harness
from vance_cli.config import recipes
from vance_cli.engines.benjy import config as benjy_config
from vance_cli.errors import ProcessLocked
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import Status


def _count(monkeypatch, owner, name: str) -> list:
    """Count the calls of ``owner.name`` (calls[0]); their arguments follow."""
    calls: list = [0]
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_start_writes_once_and_run_drives_the_held_process_without_reading_it_again(tmp_path, monkeypatch):
    h = Harness(tmp_path, Brain(items=1))
    loads = _count(monkeypatch, recipes, "load_recipe")
    resolutions = _count(monkeypatch, benjy_config, "resolve")
    writes = _count(monkeypatch, ProcessStore, "_write")
    reads = _count(monkeypatch, ProcessStore, "load")
    with h.svc.start("write the item files", workspace=h.ws, check=None) as started:
        pid = started.process.id
        # the benjy recipe is loaded once; the one resolution loads the recipes it names
        benjy_loads = [args for args in loads[1:] if args[0] == "benjy-coding"]
        assert len(benjy_loads) == 1 and resolutions[0] == 1 and writes[0] == 1
        on_disk = h.rt.store.load(pid)
        del reads[:]
        reads.append(0)
        assert (
            on_disk.inbox[0].content == "write the item files"
            and on_disk.engine_params["benjyOptions"]["check"] is None
        )
        # no gap: another vance cannot take the run before it is driven
        with pytest.raises(ProcessLocked), h.rt.store.lock(pid):
            pass
        loads_at_start = loads[0]
        process = asyncio.run(h.svc.run(pid)).process
    assert process.status == Status.DONE
    assert process is started.process  # the run drove the process start made
    assert resolutions[0] == 1 and loads[0] == loads_at_start  # the run resolved nothing again
    assert [args for args in reads[1:] if pid in args] == []  # nor read the file it had written
    with h.rt.store.lock(pid):  # released when the run ended
        pass


def test_a_started_run_that_is_not_driven_is_released_and_resolves_from_its_file(tmp_path):
    h = Harness(tmp_path, Brain(items=1))
    with h.svc.start("write the item files", workspace=h.ws, check=None) as started:
        pid = started.process.id
    with h.rt.store.lock(pid):
        assert "benjyState" not in h.rt.store.load(pid).engine_params  # the config stays in memory only
    assert h.run(pid).status == Status.DONE  # the first loop entry resolves it from the file


def test_status_reads_the_pending_question_through_the_one_accessor(tmp_path):
    # Found by review of issue 14: status() read benjyState.pendingQuestion itself, so a question
    # the scheduler and the console take for none (blank text) was shown, to be answered.
    from vance_cli.engines import pending_question
    from vance_cli.engines.benjy.state import STATE_KEY, PendingQuestion, load_state

    h = Harness(tmp_path, Brain(items=1))
    pid = h.start()
    with h.rt.session(pid) as process:
        load_state(process).pendingQuestion = PendingQuestion(text="Which parser?", reason="ask_parent", asked=1.0)
        h.rt.store.save(process)
    assert h.svc.status(pid)["pendingQuestion"] == {"text": "Which parser?", "reason": "ask_parent", "asked": 1.0}
    with h.rt.session(pid) as process:
        load_state(process).pendingQuestion = PendingQuestion(text="   ", reason="ask_parent")
        assert pending_question(process) is None
        h.rt.store.save(process)
    assert h.svc.status(pid)["pendingQuestion"] is None
    assert h.rt.store.load(pid).engine_params[STATE_KEY]["pendingQuestion"]["text"] == "   "  # it is there
