"""The process store: one JSON file per process, corrupt files reported and never overwritten."""

from __future__ import annotations

import json
import time

import pytest

from vance_cli.config.scopes import Scopes
from vance_cli.errors import CorruptProcessFile, ProcessNotFound, StoreError, UsageError
from vance_cli.messages import Message
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import SCHEMA_VERSION, Process, Status


@pytest.fixture
def store(tmp_path) -> ProcessStore:
    return ProcessStore(tmp_path / "processes")


def make(pid: str, engine: str = "arthur", updated: float | None = None) -> Process:
    process = Process(
        id=pid, engine=engine, history=[Message(role="user", content="hi")]
    )
    if updated is not None:
        process.updated = updated
    return process


def test_for_scopes_uses_the_state_dir_processes_folder(vance_home):
    assert (
        ProcessStore.for_scopes(Scopes.discover()).root
        == vance_home.resolve() / "processes"
    )


def test_create_then_load_round_trips(store):
    process = make("20260101-120000-abc123")
    store.create(process)
    assert store.path(process.id).name == "20260101-120000-abc123.json"
    loaded = store.load(process.id)
    assert loaded == process
    assert loaded.history[0].content == "hi"


def test_the_file_is_the_indented_model_dump(store):
    process = make("p1")
    store.create(process)
    text = store.path("p1").read_text(encoding="utf-8")
    assert json.loads(text) == process.model_dump(mode="json")
    assert text.startswith('{\n  "schema_version": ')


def test_create_refuses_an_existing_id_and_keeps_the_file(store):
    store.create(make("p1"))
    before = store.path("p1").read_bytes()
    with pytest.raises(StoreError, match="process p1 already exists"):
        store.create(make("p1", engine="ford"))
    assert store.path("p1").read_bytes() == before


def test_save_stamps_updated_and_replaces(store):
    process = make("p1", updated=1.0)
    store.create(process)
    process.mark_running()
    store.save(process)
    loaded = store.load("p1")
    assert loaded.status == Status.RUNNING
    assert loaded.updated > 1.0
    assert abs(loaded.updated - time.time()) < 60


def test_load_of_a_missing_process_is_not_found(store):
    with pytest.raises(ProcessNotFound, match="no process nope"):
        store.load("nope")


@pytest.mark.parametrize("bad", ["../escape", "a/b", "", ".hidden"])
def test_ids_that_are_not_plain_file_names_are_rejected(store, bad):
    with pytest.raises(UsageError, match="invalid process id"):
        store.path(bad)


CORRUPTIONS = {
    "truncated JSON": (b'{"id": "p1", "engine": "ar', "invalid JSON at line 1"),
    "not an object": (b"[1, 2]", "expected a JSON object"),
    "fails the model": (
        b'{"id": "p1", "engine": "arthur", "status": "DANCING"}',
        "status",
    ),
    "missing engine": (b'{"id": "p1"}', "engine: Field required"),
    "not UTF-8": (b'{"id": "p1", "engine": "\xff"}', "not UTF-8"),
    "wrong id inside": (
        b'{"id": "other", "engine": "arthur"}',
        "does not match the file name",
    ),
}


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_a_corrupt_file_is_reported_by_load_and_list_and_never_touched(store, case):
    raw, reason = CORRUPTIONS[case]
    store.create(make("good", updated=5.0))
    store.root.joinpath("p1.json").write_bytes(raw)

    with pytest.raises(CorruptProcessFile) as info:
        store.load("p1")
    assert info.value.message.startswith(
        f"process file {store.path('p1')} is unreadable: "
    )
    assert reason in info.value.message
    assert info.value.hint == "it was kept untouched; fix or move it away"

    processes, corrupt = store.list()
    assert [p.id for p in processes] == ["good"]
    assert [(path.name, reason in why) for path, why in corrupt] == [("p1.json", True)]
    assert store.latest().id == "good"
    with pytest.raises(StoreError):
        store.create(make("p1"))
    assert store.path("p1").read_bytes() == raw


def test_a_file_from_a_newer_vance_is_refused_clearly(store):
    data = make("p1").model_dump(mode="json")
    data["schema_version"] = SCHEMA_VERSION + 1
    store.root.mkdir(parents=True)
    raw = json.dumps(data).encode()
    store.path("p1").write_bytes(raw)
    with pytest.raises(
        CorruptProcessFile,
        match=rf"written by a newer vance \(schema_version {SCHEMA_VERSION + 1}; this vance reads up to {SCHEMA_VERSION}\)",
    ):
        store.load("p1")
    assert store.path("p1").read_bytes() == raw


def test_list_is_newest_first_and_skips_temp_and_lock_files(store):
    store.create(make("a", updated=1.0))
    store.create(make("b", updated=3.0))
    store.create(make("c", engine="ford", updated=2.0))
    (store.root / ".a.json.x1y2.tmp").write_text("{half")
    (store.root / ".b.json").write_text("{hidden")
    (store.root / "a.lock").write_text('{"pid": 1}')
    processes, corrupt = store.list()
    assert [p.id for p in processes] == ["b", "c", "a"]
    assert corrupt == []
    assert store.ids() == ["a", "b", "c"]


def test_list_of_a_missing_folder_is_empty(store):
    assert store.list() == ([], [])
    assert store.latest() is None
    assert not store.root.exists()  # reading never creates the folder


def test_latest_filters_by_engine(store):
    store.create(make("a", engine="ford", updated=1.0))
    store.create(make("b", engine="arthur", updated=2.0))
    assert store.latest().id == "b"
    assert store.latest("ford").id == "a"
    assert store.latest("benjy") is None


def test_resolve_id_exact_prefix_and_suffix(store):
    for pid in (
        "20260101-120000-abc123",
        "20260101-120500-abd999",
        "20260102-080000-ffee01",
        "2026",
    ):
        store.create(make(pid))
    # An exact id wins over being a prefix of others.
    assert store.resolve_id("2026") == "2026"
    assert store.resolve_id("20260102") == "20260102-080000-ffee01"
    assert store.resolve_id("20260101-1205") == "20260101-120500-abd999"
    assert store.resolve_id("abc") == "20260101-120000-abc123"  # the random suffix
    assert store.resolve_id("ffee01") == "20260102-080000-ffee01"


def test_resolve_id_ambiguous_is_a_usage_error_listing_the_matches(store):
    store.create(make("20260101-120000-abc123"))
    store.create(make("20260101-120500-abd999"))
    with pytest.raises(UsageError) as info:
        store.resolve_id("20260101")
    assert "ambiguous" in info.value.message
    assert (
        "20260101-120000-abc123" in info.value.message
        and "20260101-120500-abd999" in info.value.message
    )
    assert info.value.exit_code == 2
    with pytest.raises(UsageError, match="ambiguous"):
        store.resolve_id("ab")


def test_resolve_id_without_a_match_is_not_found(store):
    store.create(make("20260101-120000-abc123"))
    with pytest.raises(ProcessNotFound, match="no process matches 'zzz'"):
        store.resolve_id("zzz")
    with pytest.raises(UsageError, match="empty process id"):
        store.resolve_id("  ")


def test_resolve_id_finds_corrupt_files_so_load_can_report_them(store):
    store.root.mkdir(parents=True)
    store.path("20260101-120000-abc123").write_text("{")
    pid = store.resolve_id("2026")
    with pytest.raises(CorruptProcessFile):
        store.load(pid)
