"""A long history's first messages in a log beside the process file (store/history_log.py, issue 20:
a save rewrote every message the chat ever had, 63 ms at 10,000 messages, twice a turn)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from tests.helpers import REPO
from vance_cli.errors import CorruptProcessFile
from vance_cli.messages import Message, ToolCall
from vance_cli.store import history_log
from vance_cli.store.files import ProcessStore
from vance_cli.store.history_log import LOG_BATCH, LOG_START, message_line
from vance_cli.store.process import SCHEMA_VERSION, Process

PID = "20260101-000000-abc123"


def turn(n: int) -> list[Message]:
    """One chat turn: the question, a respond call, its result."""
    call = ToolCall(id=f"c{n}", name="respond", arguments=json.dumps({"message": f"answer {n}"}))
    return [Message(role="user", content=f"question {n}", meta={"kind": "user"}),
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id=f"c{n}", name="respond", content="delivered", meta={"delivered": True})]


def chat(turns: int) -> Process:
    return Process(id=PID, engine="arthur", history=[m for n in range(turns) for m in turn(n)])


@pytest.fixture
def store(tmp_path) -> ProcessStore:
    return ProcessStore(tmp_path / "processes")


def logs(store: ProcessStore) -> list[str]:
    return sorted(p.name for p in store.root.glob("*.jsonl"))


def head(store: ProcessStore) -> dict:
    return json.loads(store.path(PID).read_text())


def test_a_short_chat_stays_one_file(store):
    process = chat(LOG_START // 3 - 1)
    store.create(process)
    assert logs(store) == [] and "history_log" not in head(store)
    assert len(head(store)["history"]) == len(process.history)


def test_only_a_file_that_names_a_log_says_schema_version_3(store, monkeypatch):
    """Review 20c #8: every save wrote schema_version 3, so a vance of schema 2 refused even a short
    chat whose file has nothing it cannot read. A file without a log says 2; one naming a log, 3."""
    from vance_cli.store import files

    process = chat(10)
    store.create(process)
    assert "history_log" not in head(store) and head(store)["schema_version"] == 2
    process.history += [m for n in range(10, 40) for m in turn(n)]
    store.save(process)
    assert "history_log" in head(store) and head(store)["schema_version"] == SCHEMA_VERSION == 3
    monkeypatch.setattr(files, "SCHEMA_VERSION", 2)  # as a vance of schema 2 reads it
    with pytest.raises(CorruptProcessFile, match="written by a newer vance"):
        store.load(PID)
    monkeypatch.undo()
    process.history = process.history[-6:]  # short again: one file, readable by that vance again
    store.save(process)
    assert "history_log" not in head(store) and head(store)["schema_version"] == 2
    monkeypatch.setattr(files, "SCHEMA_VERSION", 2)
    assert store.load(PID).history == process.history


def test_a_long_chat_saves_only_what_is_new(store):
    process = chat(40)  # 120 messages: the 117 before the last question go to the log
    store.create(process)
    assert logs(store) == [f"{PID}.history.1.jsonl"]
    saved = head(store)
    assert saved["schema_version"] == SCHEMA_VERSION == 3
    assert saved["history_log"] == {"file": f"{PID}.history.1.jsonl", "messages": 117,
                                     "bytes": store.root.joinpath(f"{PID}.history.1.jsonl").stat().st_size}
    assert [m["content"] for m in saved["history"]] == ["question 39", None, "delivered"]
    log = store.root / f"{PID}.history.1.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    assert lines == [message_line(m) for m in process.history[:117]]  # one compact message a line
    assert store.load(PID) == process

    # turns that stay under LOG_BATCH older messages: the log is not touched, the file stays small
    size = log.stat().st_size
    for n in range(40, 40 + LOG_BATCH // 3):
        process.history += turn(n)
        store.save(process)
    assert log.stat().st_size == size
    assert len(head(store)["history"]) < LOG_BATCH + 3
    # the next one appends exactly the messages that went past it, nothing else is rewritten
    before = list(process.history)
    process.history += turn(99)
    store.save(process)
    appended = log.read_bytes()[size:]
    assert appended == b"".join(message_line(m) for m in before[117:])
    assert store.load(PID) == process
    assert head(store)["history_log"]["messages"] == len(before)


def test_each_save_round_trips_with_the_turn_under_way_changing(store, monkeypatch):
    monkeypatch.setattr(history_log, "LOG_START", 2)
    monkeypatch.setattr(history_log, "LOG_BATCH", 1)
    process = chat(1)
    store.create(process)
    for n in range(1, 6):
        process.history += turn(n)[:2]
        store.save(process)
        assert store.load(PID) == process
        # the engines change messages of the turn under way (a call marked started, delivered)
        process.history[-1].meta["started"] = ["c1"]
        process.history.append(turn(n)[2])
        process.history[-1].meta["delivered"] = True
        store.save(process)
        loaded = store.load(PID)
        assert loaded == process and loaded.history[-2].meta == {"started": ["c1"]}
    assert logs(store) == [f"{PID}.history.1.jsonl"]


def test_a_history_replaced_gets_a_new_log_and_the_old_one_goes(store):
    process = chat(40)
    store.create(process)
    process.history = process.history[30:]  # as Benjy moves its journal out
    store.save(process)
    assert logs(store) == [f"{PID}.history.2.jsonl"]
    assert store.load(PID) == process
    process.history = process.history[-6:]  # short again: one file
    store.save(process)
    assert logs(store) == [] and "history_log" not in head(store)
    assert store.load(PID) == process


def test_a_file_of_an_older_vance_loads_and_is_saved_with_a_log(store):
    """Migration: a schema_version 2 file (the whole history in it) loads as it is; its next save
    moves the older messages to a log, and what loads then is the same process."""
    process = chat(40)
    data = process.model_dump(mode="json")
    data["schema_version"] = 2
    store.root.mkdir(parents=True)
    store.path(PID).write_text(json.dumps(data, indent=2))
    old = store.load(PID)
    assert old.history == process.history and logs(store) == []
    store.save(old)
    assert logs(store) == [f"{PID}.history.1.jsonl"] and head(store)["schema_version"] == 3
    assert store.load(PID).history == process.history


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda log, ref: log.unlink(), "is missing"),
    (lambda log, ref: log.write_bytes(log.read_bytes()[:-10]), "shorter than the file says"),
    (lambda log, ref: ref.update(messages=5), "holds 117 messages, the file says 5"),
    (lambda log, ref: ref.update(file="../../etc/passwd"), "must name"),
    (lambda log, ref: log.write_bytes(b"{" * 10 + log.read_bytes()[10:]), "not one JSON message per line"),
    # a restored backup made of links (cp -rs), a cloned folder's link: never read through
    (lambda log, ref: (log.rename(log.with_name("elsewhere")), log.symlink_to("elsewhere")), "symbolic link"),
])
def test_a_damaged_log_is_an_unreadable_file_kept_untouched(store, damage, reason):
    store.create(chat(40))
    data = head(store)
    damage(store.root / data["history_log"]["file"], data["history_log"])
    store.path(PID).write_text(json.dumps(data))
    kept = store.path(PID).read_bytes()
    with pytest.raises(CorruptProcessFile, match=reason):
        store.load(PID)
    assert store.list()[1][0][0] == store.path(PID)
    assert store.path(PID).read_bytes() == kept


def in_time(fn, seconds: float = 5.0) -> tuple[bool, dict]:
    """``fn()`` in a thread: (still waiting after ``seconds``, {"value": ...} or {"error": ...})."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return thread.is_alive(), box


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_planted_as_the_log_is_unreadable_and_never_waited_on(store):
    """Review 20c #3: a FIFO as <id>.history.1.jsonl (a cloned .vance/processes) made `vance show`,
    `chat --resume` and `chat --continue` (store.list) wait forever for a writer."""
    store.create(chat(40))
    log = store.root / f"{PID}.history.1.jsonl"
    log.unlink()
    os.mkfifo(log)
    kept = store.path(PID).read_bytes()

    def load_and_list():
        with pytest.raises(CorruptProcessFile, match="not a regular file"):
            store.load(PID)
        return store.list()

    waiting, box = in_time(load_and_list)
    if waiting:  # the old code: let the blocked open go (a writer that closes at once)
        os.close(os.open(log, os.O_WRONLY | os.O_NONBLOCK))
    assert not waiting, "reading the log waits for a writer to the FIFO"
    assert "error" not in box, box.get("error")
    processes, corrupt = box["value"]
    assert processes == [] and [(path, "not a regular file" in why) for path, why in corrupt] == [(store.path(PID), True)]
    assert store.path(PID).read_bytes() == kept and log.is_fifo()  # kept untouched


@pytest.mark.parametrize("plant", ["link", "fifo"])
def test_a_log_that_became_a_link_or_fifo_is_never_written_through(store, tmp_path, plant):
    """Review 20c #4: the log is replaced by a link (a restored `cp -rs` backup) or a FIFO between
    the load and the save. The append must not write through the link (it truncated the target to
    the logged length and appended to it) nor wait on the FIFO: the save starts a new log."""
    if plant == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    store.create(chat(40))
    process = store.load(PID)
    log = store.root / f"{PID}.history.1.jsonl"
    victim = tmp_path / "victim.txt"  # a file of the person's outside the state folder
    victim.write_bytes(log.read_bytes() + b"PERSON'S OTHER DATA THAT MUST SURVIVE\n")
    kept = victim.read_bytes()
    log.unlink()
    if plant == "link":
        log.symlink_to(victim)
    else:
        os.mkfifo(log)
    process.history += [m for n in range(40, 60) for m in turn(n)]  # past LOG_BATCH: an append
    waiting, box = in_time(lambda: store.save(process))
    if waiting:  # the old code: a reader lets the blocked open go
        os.close(os.open(log, os.O_RDONLY | os.O_NONBLOCK))
    assert not waiting, "the save waits for a reader of the FIFO"
    assert "error" not in box, box.get("error")
    assert victim.read_bytes() == kept  # still holds the other data
    assert logs(store) == [f"{PID}.history.2.jsonl"] and not log.is_symlink()
    assert head(store)["history_log"]["file"] == f"{PID}.history.2.jsonl"
    assert store.load(PID) == process


def test_an_id_that_starts_with_another_ids_log_name_keeps_its_log(store):
    """Review 20c #5: ids may hold dots; the logs of id ``a`` were found with the glob
    ``a.history.*.jsonl``, which also matched the log of id ``a.history.7``: a new log of ``a``
    removed it (``a.history.7`` then unreadable, "log missing"), and ``a`` could name it."""
    history = [m for n in range(40) for m in turn(n)]
    other = Process(id="a.history.7", engine="arthur", history=list(history))
    store.create(other)
    store.create(Process(id="a", engine="arthur", history=list(history)))
    assert logs(store) == ["a.history.1.jsonl", "a.history.7.history.1.jsonl"]
    mine = store.load("a")
    mine.history = [m for n in range(41) for m in turn(n)]  # a history replaced: a new log, others of 'a' go
    store.save(mine)
    assert logs(store) == ["a.history.2.jsonl", "a.history.7.history.1.jsonl"]
    assert store.load("a.history.7") == other and store.load("a") == mine
    # the file of 'a' naming the log of 'a.history.7' is refused, as any other id's log
    data = json.loads(store.path("a").read_text())
    data["history_log"] = json.loads(store.path("a.history.7").read_text())["history_log"]
    store.path("a").write_text(json.dumps(data))
    with pytest.raises(CorruptProcessFile, match="must name a a.history.<n>.jsonl"):
        store.load("a")


def test_a_logged_message_with_a_lone_surrogate_is_written_as_u_fffd(store):
    process = chat(40)
    process.history[0].meta["name"] = "caf\udce9"
    store.create(process)
    assert store.load(PID).history[0].meta["name"] == "caf\ufffd"


SAVE_MORE = r"""
import sys
from vance_cli.store.files import ProcessStore
from tests.store.test_history_log import PID, turn
store = ProcessStore(sys.argv[1])
process = store.load(PID)
process.history += [m for n in range(int(sys.argv[2]), int(sys.argv[2]) + 12) for m in turn(n)]
store.save(process)
print("saved")
"""


@pytest.mark.parametrize("point", ["store.log_appended", "store.log_written"])
def test_kill_9_between_the_log_and_the_file_loses_nothing_saved(store, point):
    process = chat(40)
    if point == "store.log_written":
        process.history = process.history[-40:]  # 40 messages, no log yet: the next save writes one
    store.create(process)
    before = store.load(PID)
    env = {**os.environ, "PYTHONPATH": str(REPO), "VANCE_TEST_CRASH_AT": point}
    killed = subprocess.run([sys.executable, "-c", SAVE_MORE, str(store.root), "100"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert killed.returncode == -9 and "saved" not in killed.stdout, killed.stderr
    assert store.load(PID) == before  # the file still names what it named: the appended bytes unread
    env.pop("VANCE_TEST_CRASH_AT")
    done = subprocess.run([sys.executable, "-c", SAVE_MORE, str(store.root), "200"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    after = store.load(PID)
    assert after.history == before.history + [m for n in range(200, 212) for m in turn(n)]
    (log,) = logs(store)  # a new log a crash left unnamed is gone once another is named
    ref = head(store)["history_log"]
    assert log == ref["file"] and (store.root / log).stat().st_size == ref["bytes"]  # the cut-off append overwritten
    assert not [p for p in store.root.iterdir() if p.name.endswith(".tmp")]
