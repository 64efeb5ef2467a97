"""What one Benjy item costs must not grow with the run (issue 20, bench/bench_benjy.py): counted
here, not timed. Per item: one save of the Benjy process file (the DO step's, which already holds
IDLE and the worker in flight), one walk of the workspace (the fingerprint taken when the
worker's reply comes in is the next DO's "before" while no check command ran in between), and no
rebuilding of every todo for the TodosUpdated of each transition."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.engines.benjy_brain import Brain
from tests.engines.test_benjy_loop import Harness
from vance_cli.engines.benjy import engine as benjy_engine
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import Status


@pytest.fixture
def counted(monkeypatch):
    counts: Counter = Counter()
    save, walk = ProcessStore.save, benjy_engine.workspace_fingerprint

    def counting_save(self, process):
        counts[process.engine] += 1
        return save(self, process)

    def counting_walk(root):
        counts["walk"] += 1
        return walk(root)

    dicts = benjy_engine.todo_dicts

    def counting_dicts(todos):
        counts["todo_dicts"] += 1
        return dicts(todos)

    monkeypatch.setattr(ProcessStore, "save", counting_save)
    monkeypatch.setattr(benjy_engine, "workspace_fingerprint", counting_walk)
    monkeypatch.setattr(benjy_engine, "todo_dicts", counting_dicts)
    return counts


def _run(tmp_path, items, counts, **kw):
    tmp_path.mkdir()
    h = Harness(tmp_path, Brain(items=items))
    pid = h.start(**kw)
    counts.clear()
    assert h.run(pid).status == Status.DONE
    return dict(counts)


def test_one_save_and_one_workspace_walk_per_item(tmp_path, counted):
    few = _run(tmp_path / "a", 2, counted, check=None)
    more = _run(tmp_path / "b", 5, counted, check=None)  # the recipe's default maxInitialItems
    # the same fixed part at every size; 3 items more cost 3 saves and 3 walks more
    assert more["benjy"] - few["benjy"] == 3, (few, more)
    assert more["walk"] - few["walk"] == 3, (few, more)
    assert few["walk"] == 2 + 1  # one per item, and the first DO's own
    # the todos as events carry them: kept from one transition to the next, never rebuilt whole
    assert more.get("todo_dicts", 0) == few.get("todo_dicts", 0) <= 1, (few, more)


def test_a_check_command_between_workers_walks_the_workspace_again(tmp_path, counted):
    # the check may write files: the DO after it takes its own "before"
    few = _run(tmp_path / "a", 2, counted)
    more = _run(tmp_path / "b", 4, counted)
    assert more["walk"] - few["walk"] == 2 * 2, (few, more)
    assert more["benjy"] - few["benjy"] == 2 * 2, (few, more)  # and saves before each check
