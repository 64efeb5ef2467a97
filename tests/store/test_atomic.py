"""Atomic writes: readers see the old file or the new one; a killed or failing writer changes nothing."""

from __future__ import annotations

import json
import os
import signal
import stat

import pytest

from tests.store.helpers import finish, spawn, wait_for_line
from vance_cli.store import atomic
from vance_cli.store.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text, is_temp_file


@pytest.fixture
def folder(tmp_path):
    """A folder of our own: the suite's tmp_path also holds the VANCE_HOME and work folders."""
    path = tmp_path / "atomic"
    path.mkdir()
    return path


def test_write_creates_the_folder_and_leaves_no_temp_file(folder):
    target = folder / "deep" / "er" / "f.txt"
    atomic_write_text(target, "héllo\n")
    assert target.read_text(encoding="utf-8") == "héllo\n"
    assert os.listdir(target.parent) == ["f.txt"]


def test_write_replaces_and_keeps_the_file_mode(folder):
    target = folder / "f.txt"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_new_file_gets_the_umask_mode_not_0600(folder):
    target = folder / "f.txt"
    atomic_write_text(target, "x")
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~atomic._UMASK


def test_a_private_mode_applies_to_a_new_and_a_replaced_file(folder):
    new, old = folder / "new", folder / "old"
    old.write_text("old")
    old.chmod(0o644)
    for target in (new, old):
        atomic_write_bytes(target, b"secret", mode=0o600)
        assert target.read_bytes() == b"secret" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(os.listdir(folder)) == ["new", "old"]


def test_json_is_indented_utf8_with_a_trailing_newline(folder):
    target = folder / "f.json"
    atomic_write_json(target, {"a": ["ü", 1]})
    text = target.read_text(encoding="utf-8")
    assert text == '{\n  "a": [\n    "ü",\n    1\n  ]\n}\n'


def test_a_failing_replace_removes_the_temp_file_and_keeps_the_original(
    folder, monkeypatch
):
    target = folder / "f.json"
    target.write_text('{"v": 1}')

    def boom(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write_json(target, {"v": 2})
    assert target.read_text() == '{"v": 1}'
    assert os.listdir(folder) == ["f.json"]


def test_a_failing_write_removes_the_temp_file(folder):
    target = folder / "f.json"
    target.write_text("original")
    with pytest.raises(TypeError):
        # Not serialisable: fails before any temp file exists.
        atomic_write_json(target, {"v": object()})
    with pytest.raises(UnicodeEncodeError):
        # Fails while writing the temp file.
        atomic_write_text(target, "bad \udc80 surrogate")
    assert target.read_text() == "original"
    assert os.listdir(folder) == ["f.json"]


def test_exclusive_write_refuses_an_existing_file(folder):
    target = folder / "f.txt"
    atomic_write_text(target, "first", exclusive=True)
    with pytest.raises(FileExistsError):
        atomic_write_text(target, "second", exclusive=True)
    assert target.read_text() == "first"
    assert os.listdir(folder) == ["f.txt"]


KILLED_WRITER = """
import os, sys, time
from vance_cli.store import atomic

def slow_fsync(fd):
    print("writing", flush=True)  # the temp file holds the new text now, the rename has not happened
    time.sleep(60)

os.fsync = slow_fsync
atomic.atomic_write_text(sys.argv[1], '{"big": "' + "x" * 5_000_000 + '"}')
print("finished", flush=True)
"""


def test_a_writer_killed_mid_write_leaves_the_original_intact(folder):
    target = folder / "p.json"
    original = json.dumps({"id": "p", "history": ["kept"]}, indent=2)
    target.write_text(original)

    child = spawn(KILLED_WRITER, str(target))
    try:
        wait_for_line(child, "writing")
        leftovers = [p for p in folder.iterdir() if p.name != "p.json"]
        assert len(leftovers) == 1 and is_temp_file(leftovers[0])
        # The new content was really on its way.
        assert leftovers[0].stat().st_size > 5_000_000
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        finish(child)

    assert target.read_text() == original
    assert json.loads(target.read_text())["history"] == ["kept"]


def test_a_file_name_at_the_length_limit_is_written_through_a_short_temp_name(tmp_path):
    # "<name>.<random>.tmp" would pass NAME_MAX (255 bytes); file_write writes such names too
    folder = tmp_path / "long"
    path = folder / ("x" * 250 + ".txt")
    atomic_write_bytes(path, b"data", sync_folder=True)
    assert path.read_bytes() == b"data"
    assert [p.name for p in folder.iterdir()] == [path.name]
