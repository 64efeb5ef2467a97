"""The process listing (store/listing.py, `vance ps`): the shown fields only, each file read once
and then taken from the cache until it changes; unreadable files stay listed as unreadable (issue 20:
ps read and validated every whole process, history included, ~0.7 ms a file at 10,000 files)."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.helpers import run_cli
from vance_cli.messages import Message
from vance_cli.store import listing
from vance_cli.store.files import ProcessStore
from vance_cli.store.listing import list_processes
from vance_cli.store.process import Process, Status

RECIPE = {"name": "arthur", "engine": "arthur"}


def _age(path, seconds: float = 60.0) -> None:
    """Date a file before the listing's racy window (as every file but the one just saved is)."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def _make(store: ProcessStore, n: int, **over) -> Process:
    process = Process(id=f"20260101-000000-{n:06d}", engine="arthur", recipe=dict(RECIPE), recipe_name="arthur",
                      title=f"chat {n}", updated=1_700_000_000.0 + n, status=Status.BLOCKED,
                      history=[Message(role="user", content=f"question {n}")], **over)
    store.create(process)
    _age(store.path(process.id))
    return process


@pytest.fixture
def reads(monkeypatch):
    """The files a listing read (not taken from its cache)."""
    read: list[str] = []
    summary_of = listing.summary_of

    def counting(path):
        read.append(path.stem)
        return summary_of(path)

    monkeypatch.setattr(listing, "summary_of", counting)
    return read


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return home


def test_each_file_is_read_once_then_only_what_changed(home, reads):
    store = ProcessStore(home / "processes")
    made = [_make(store, n) for n in range(5)]
    first = list_processes(store.root, home=home)
    assert len(reads) == 5
    assert [p.id for p in first.processes] == [p.id for p in reversed(made)]  # newest first
    assert first.processes[0].title == "chat 4" and first.processes[0].status == Status.BLOCKED
    assert list(first.recipes.values()) == [RECIPE]  # one snapshot, kept once
    reads.clear()
    again = list_processes(store.root, home=home)
    assert reads == [] and again.processes == first.processes and again.recipes == first.recipes
    # a save replaces the file: read again, and only it
    made[2].title = "renamed"
    store.save(made[2])
    _age(store.path(made[2].id))
    third = list_processes(store.root, home=home)
    assert reads == [made[2].id]
    assert next(p for p in third.processes if p.id == made[2].id).title == "renamed"
    # a removed file is gone from the listing
    store.path(made[0].id).unlink()
    assert made[0].id not in [p.id for p in list_processes(store.root, home=home).processes]


def test_a_file_modified_just_now_is_read_every_time_until_it_is_older(home, reads):
    store = ProcessStore(home / "processes")
    process = _make(store, 1)
    os.utime(store.path(process.id))  # now: a coarse clock could hide an edit of the same size
    list_processes(store.root, home=home)
    list_processes(store.root, home=home)
    assert reads == [process.id, process.id]
    _age(store.path(process.id))
    list_processes(store.root, home=home)
    list_processes(store.root, home=home)
    assert reads == [process.id] * 3


def test_an_unreadable_file_stays_listed_as_unreadable(home, reads):
    store = ProcessStore(home / "processes")
    _make(store, 1)
    bad = store.root / "20260101-000000-badbad.json"
    bad.write_text('{"id": "20260101-000000-badbad", "engine": "arthur", "updated": 1e300}')
    _age(bad)
    for _ in range(2):  # from the file, then from the cache
        found = list_processes(store.root, home=home)
        assert [p.name for p, _ in found.unreadable] == [bad.name]
        assert "updated" in found.unreadable[0][1] and len(found.processes) == 1
    assert reads.count("20260101-000000-badbad") == 1
    bad.write_text("{ not json")
    _age(bad)
    assert "invalid JSON" in list_processes(store.root, home=home).unreadable[0][1]


def test_a_damaged_cache_is_read_from_the_files_again(home, reads):
    store = ProcessStore(home / "processes")
    _make(store, 1)
    _make(store, 2)
    list_processes(store.root, home=home)
    (cache,) = (home / "cache" / "ps").glob("*.json")
    assert oct(cache.stat().st_mode & 0o777) == "0o600"
    data = json.loads(cache.read_text())
    first = next(iter(data["files"]))
    data["files"][first][4] = {"row": ["too", "short"]}
    cache.write_text(json.dumps(data))
    reads.clear()
    assert len(list_processes(store.root, home=home).processes) == 2
    assert reads == [first.removesuffix(".json")]
    cache.write_text("{ not json")
    reads.clear()
    assert len(list_processes(store.root, home=home).processes) == 2 and len(reads) == 2


def test_without_a_state_folder_nothing_is_kept(tmp_path, reads):
    store = ProcessStore(tmp_path / "processes")
    _make(store, 1)
    list_processes(store.root, home=tmp_path / "missing")
    list_processes(store.root, home=tmp_path / "missing")
    assert len(reads) == 2 and not (tmp_path / "missing").exists()


def test_the_listing_does_not_read_the_history(home):
    store = ProcessStore(home / "processes")
    process = _make(store, 1)
    path = store.path(process.id)
    data = json.loads(path.read_text())
    data["history"] = [{"role": "nobody", "content": 5}]  # resuming or showing it says what is wrong
    path.write_text(json.dumps(data))
    assert [p.id for p in list_processes(store.root).processes] == [process.id]
    assert store.list()[1] and "history" in store.list()[1][0][1]


def test_ps_checks_each_recipe_snapshot_once(vance_home, monkeypatch):
    from vance_cli.runtime import checks

    store = ProcessStore(vance_home / "processes")
    for n in range(4):
        _make(store, n)
    calls = []
    problem = checks.recipe_problem
    monkeypatch.setattr(checks, "recipe_problem", lambda recipe: calls.append(recipe) or problem(recipe))
    r = run_cli("ps")
    assert r.returncode == 0, r.stderr
    assert all(f"chat {n}" in r.stdout for n in range(4))
    assert calls == [RECIPE]


def test_a_chat_whose_history_log_is_gone_is_listed_as_unreadable(home, reads):
    """Review 20c #7: ps listed a chat whose log was missing (or replaced) as READY with no word;
    only `vance show` / `--resume` said so. The listing now lstats the log the file names, every
    time (the log can go while the process file, and so its cache entry, stays the same)."""
    store = ProcessStore(home / "processes")
    _make(store, 1)
    long = _make(store, 2)
    long.history = [Message(role="user" if i % 2 == 0 else "assistant", content=f"m{i}") for i in range(80)]
    store.save(long)
    _age(store.path(long.id))
    (log,) = store.root.glob("*.jsonl")
    for _ in range(2):  # from the file, then from the cache
        found = list_processes(store.root, home=home)
        assert [p.id for p in found.processes] == [long.id, "20260101-000000-000001"] and not found.unreadable
    reads.clear()
    log.unlink()
    for _ in range(2):
        found = list_processes(store.root, home=home)
        assert [p.id for p in found.processes] == ["20260101-000000-000001"]
        assert [(p.name, why) for p, why in found.unreadable] == [
            (store.path(long.id).name, f"its history log {log.name} is missing")]
    assert reads == []  # a stat, not a read: the process file did not change
    log.symlink_to(store.path("20260101-000000-000001"))
    assert "it is a symbolic link" in list_processes(store.root, home=home).unreadable[0][1]
    log.unlink()
    log.write_bytes(b"{}\n")  # shorter than the file says
    assert "shorter than the file says" in list_processes(store.root, home=home).unreadable[0][1]
