"""Process files of an older vance still load, and their runs go on (tests/store/data/v1, schema_version 1).

The files were written by main 13b20ac (tests/store/data/make_v1_files.py), where the tree
fields were keys of ``engine_params``; they now are fields of the process (schema_version 2).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.engines.benjy_brain import Brain
from tests.engines.harness import respond
from tests.helpers import run_cli, write_script
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.events import EventBus
from vance_cli.llm.scripted import FunctionModel
from vance_cli.runtime.benjy_service import BenjyService
from vance_cli.runtime.runner import Runtime
from vance_cli.runtime.scheduler import Scheduler, delivery_id
from vance_cli.store.process import SCHEMA_VERSION, SCHEMA_VERSION_NO_LOG, InboxItem, Status

DATA = Path(__file__).with_name("data") / "v1"
WRITTEN_IN = "/tmp/vance-v1-fixture/ws"  # the workspace the files were written in
TREES = json.loads((DATA / "trees.json").read_text())


def _runtime(tmp_path: Path, fn) -> Runtime:
    """A runtime whose state folder holds the v1 files, their workspace moved to ``tmp_path/ws``."""
    ws = tmp_path / "ws"
    ws.mkdir()
    scopes = Scopes.discover(cwd=ws)
    settings = Settings.load(scopes, env={"VANCE_MODEL": "fn"})
    folder = scopes.processes_dir()
    folder.mkdir(parents=True)
    for path in DATA.glob("2*.json"):
        text = path.read_text(encoding="utf-8")
        assert WRITTEN_IN in text
        (folder / path.name).write_text(text.replace(WRITTEN_IN, str(ws)), encoding="utf-8")
    model = FunctionModel(fn)
    return Runtime(scopes, settings, bus=EventBus(), model_factory=lambda m, s: model)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("VANCE_HOME", str(tmp_path / "home"))


def test_the_files_are_version_1_with_the_tree_in_engine_params():
    data = {path.stem: json.loads(path.read_text()) for path in DATA.glob("2*.json")}
    assert {d["schema_version"] for d in data.values()} == {1}
    parent, child = TREES["chat"]
    assert data[parent]["engine_params"]["children"] == [child]
    assert data[child]["engine_params"]["delivery"]["to"] == parent
    assert "children" not in data[parent] and "delivery" not in data[child]


def test_a_version_1_tree_loads_with_its_tree_fields(tmp_path):
    rt = _runtime(tmp_path, lambda request: respond("unused"))
    parent_id, child_id = TREES["chat"]
    parent, child = rt.store.load(parent_id), rt.store.load(child_id)
    assert parent.schema_version == SCHEMA_VERSION
    assert parent.children == [child_id] and parent.delivery is None and not parent.worker
    assert child.status == Status.BLOCKED and child.delivery is not None
    assert (child.delivery.to, child.delivery.kind, child.deliveries) == (parent_id, "reply", 1)
    assert not {"children", "delivery", "deliveries", "worker"} & set(child.engine_params)
    benjy_id, first, second = TREES["benjy"]
    run, w1, w2 = (rt.store.load(pid) for pid in TREES["benjy"])
    assert run.engine == "benjy" and run.status == Status.IDLE and run.children == [first, second]
    assert w1.worker and w1.status == Status.DONE and w1.delivery.to == benjy_id
    assert w2.worker and w2.status == Status.READY and w2.delivery is None
    # saved again, a file says the version it now has (2: its tree fields moved; it names no
    # history log, the only thing of 3) and keeps its fields
    rt.store.save(child)
    saved = json.loads(rt.store.path(child_id).read_text())
    assert "history_log" not in saved
    assert saved["schema_version"] == SCHEMA_VERSION_NO_LOG == 2 and saved["delivery"]["to"] == parent_id


def test_a_version_1_chat_child_that_asked_is_answered_and_delivers_anew(tmp_path):
    def brain(request):
        users = [m.content for m in request.messages if m.role == "user"]
        if users[-1] == "the one in src/":
            return respond("done with src/", awaiting=False)
        return respond(f"parent saw: {users[-1]}")

    rt = _runtime(tmp_path, brain)
    parent_id, child_id = TREES["chat"]
    with rt.store.lock(child_id):
        child = rt.store.load(child_id)
        child.inbox.append(InboxItem(content="the one in src/", sender=parent_id))
        rt.store.save(child)
    asyncio.run(Scheduler(rt).run(parent_id))
    child, parent = rt.store.load(child_id), rt.store.load(parent_id)
    assert child.status == Status.DONE and child.deliveries == 2
    second = [m for m in parent.history if m.meta.get("inbox_id") == delivery_id(child_id, 1)]
    assert len(second) == 1 and "done with src/" in second[0].content
    assert parent.children == []


def test_a_version_1_benjy_run_stopped_mid_item_runs_to_done(tmp_path):
    rt = _runtime(tmp_path, Brain(items=2))
    benjy_id, first, second = TREES["benjy"]
    process = asyncio.run(BenjyService(rt).run(benjy_id)).process
    assert process.status == Status.DONE
    workers = [rt.store.load(pid) for pid in (first, second)]
    assert all(w.status == Status.DONE and w.delivery is not None and w.delivery.to == benjy_id for w in workers)
    assert process.children == []
    assert process.history[-1].meta["kind"] == "synthesis"


# --- a chat file written by the console script of main 120d7fb (tests/store/data/v1-cli/README.md)

CLI_DATA = Path(__file__).with_name("data") / "v1-cli"
CLI_PID = "20261204-042902-59a91e"
CLI_WRITTEN_IN = "/tmp/v120-fixture"  # the folder the file and its scripted model were written in


def _cli_home(tmp_path: Path) -> tuple[Path, Path]:
    """VANCE_HOME holding the 120d7fb file, its folder moved to ``tmp_path``; (home, workspace)."""
    home = tmp_path / "home"
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("hello\n")
    (tmp_path / "script.yaml").write_text((CLI_DATA / "script.yaml").read_text())
    folder = home / "processes"
    folder.mkdir(parents=True)
    text = (CLI_DATA / f"{CLI_PID}.json").read_text(encoding="utf-8")
    assert json.loads(text)["schema_version"] == 1 and CLI_WRITTEN_IN in text
    (folder / f"{CLI_PID}.json").write_text(text.replace(CLI_WRITTEN_IN, str(tmp_path)), encoding="utf-8")
    return home, tmp_path / "ws"


def test_a_chat_file_of_120d7fb_shows_as_120d7fb_showed_it(tmp_path):
    home, ws = _cli_home(tmp_path)
    result = run_cli("show", CLI_PID, env={"VANCE_HOME": str(home), "NO_COLOR": "1"}, cwd=ws)
    assert result.returncode == 0, result.stderr
    expected = (CLI_DATA / "show.txt").read_text(encoding="utf-8").replace(CLI_WRITTEN_IN, str(tmp_path))
    assert result.stdout == expected


def test_a_chat_file_of_120d7fb_goes_on_and_is_saved_in_todays_format(tmp_path):
    home, ws = _cli_home(tmp_path)
    model = write_script(tmp_path / "next.json", [respond("You are welcome.")])
    result = run_cli(
        "chat", "--resume", CLI_PID, "--model", model, "-p", "thanks",
        env={"VANCE_HOME": str(home), "NO_COLOR": "1"}, cwd=ws,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "You are welcome."
    saved = json.loads((home / "processes" / f"{CLI_PID}.json").read_text())
    old = json.loads((CLI_DATA / f"{CLI_PID}.json").read_text())
    assert saved["schema_version"] == SCHEMA_VERSION_NO_LOG and "history_log" not in saved  # a short chat
    # the old turn is kept as it was, the new one follows it
    assert [m["content"] for m in saved["history"][: len(old["history"])]] == [m["content"] for m in old["history"]]
    assert saved["history"][len(old["history"])]["content"] == "thanks"
    assert saved["usage"]["calls"] == old["usage"]["calls"] + 1
