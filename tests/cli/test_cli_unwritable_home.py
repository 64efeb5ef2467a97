"""A read-only or full state folder: say which file could not be written and why; text-mode
structure works without its cache (a warning).

Root writes through mode bits, so read-only and full are made real with a fault injected into
the vance subprocess (a sitecustomize that fails writes under one folder with EROFS or ENOSPC,
the way the kernel does; it needs a subprocess, whose interpreter loads it at start); a folder below
a regular file and, when not root, chmod give the same errors without any injection (in-process).
"""

from __future__ import annotations

import errno
import json
import os
import textwrap

import pytest

from tests.helpers import REPO, respond, run_cli, vance, write_script

SITECUSTOMIZE = textwrap.dedent(
    """
    import os

    _FAULT_DIR = os.environ["VANCE_TEST_FAULT_DIR"]
    _FAULT_ERRNO = int(os.environ["VANCE_TEST_FAULT_ERRNO"])
    _FAULT_MATCH = os.environ.get("VANCE_TEST_FAULT_MATCH", "")
    _WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT
    _open, _mkdir = os.open, os.mkdir


    def _inside(path):
        path = os.path.abspath(os.fsdecode(path))
        return path.startswith(_FAULT_DIR) and _FAULT_MATCH in path


    def _fail(path):
        raise OSError(_FAULT_ERRNO, os.strerror(_FAULT_ERRNO), os.fsdecode(path))


    def open_(path, flags, mode=0o777, *, dir_fd=None):
        if flags & _WRITING and _inside(path):
            _fail(path)
        return _open(path, flags, mode, dir_fd=dir_fd)


    def mkdir_(path, mode=0o777, *, dir_fd=None):
        if _inside(path) and not os.path.isdir(path):
            _fail(path)
        return _mkdir(path, mode, dir_fd=dir_fd)


    os.open, os.mkdir = open_, mkdir_
    """
)


@pytest.fixture
def faulty(tmp_path):
    """env for vance() that fails every write under ``folder`` with ``code``."""
    site = tmp_path / "fault-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)

    def env(folder, code: int, match: str = "", **more) -> dict:
        return {
            "PYTHONPATH": f"{site}{os.pathsep}{REPO}",
            "VANCE_TEST_FAULT_DIR": str(folder),
            "VANCE_TEST_FAULT_ERRNO": str(code),
            "VANCE_TEST_FAULT_MATCH": match,
            **more,
        }

    return env


@pytest.mark.parametrize(
    ("code", "why"), [(errno.EROFS, "the file system is read-only"), (errno.ENOSPC, "no space is left on the disk")]
)
def test_chat_in_a_read_only_or_full_home_says_what_could_not_be_written(tmp_path, vance_home, faulty, code, why):
    model = write_script(tmp_path / "s.json", [respond("hi")])
    r = vance("chat", "-p", "hello", env=faulty(vance_home, code, VANCE_MODEL=model))
    assert r.returncode == 1
    assert "error: cannot write process file " + str(vance_home / "processes") in r.stderr
    assert why in r.stderr and "fix: make " in r.stderr
    assert "internal error" not in r.stderr and "OSError" not in r.stderr


def test_a_full_disk_mid_turn_says_what_could_not_be_written(tmp_path, vance_home, faulty):
    model = write_script(tmp_path / "s.json", [respond("hi")])
    r = run_cli("chat", "-p", "first", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    model = write_script(tmp_path / "t.json", [respond("again")])
    pid = next((vance_home / "processes").glob("*.json")).stem
    before = (vance_home / "processes" / f"{pid}.json").read_bytes()
    # the lock can be taken; every save of the process file (its temp file) fails
    r = vance(
        "chat",
        "--continue",
        "-p",
        "second",
        "--model",
        model,
        env=faulty(vance_home / "processes", errno.ENOSPC, match=".json."),
    )
    assert r.returncode == 1
    assert f"error: cannot write process file {vance_home / 'processes' / pid}.json: no space is left" in r.stderr
    assert "internal error" not in r.stderr
    assert (vance_home / "processes" / f"{pid}.json").read_bytes() == before  # the last good state


def test_a_home_below_a_regular_file_says_what_could_not_be_written(tmp_path):
    (tmp_path / "a-file").write_text("x")
    model = write_script(tmp_path / "s.json", [respond("hi")])
    r = run_cli("chat", "-p", "hello", env={"VANCE_HOME": str(tmp_path / "a-file" / "home"), "VANCE_MODEL": model})
    assert r.returncode == 1
    assert "cannot write process file" in r.stderr and "a part of the path is not a folder" in r.stderr
    assert "internal error" not in r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any mode bits")
def test_chat_in_a_read_only_home_by_mode_bits(tmp_path, vance_home):
    model = write_script(tmp_path / "s.json", [respond("hi")])
    vance_home.chmod(0o500)
    try:
        r = run_cli("chat", "-p", "hello", env={"VANCE_MODEL": model})
    finally:
        vance_home.chmod(0o700)
    assert r.returncode == 1 and "cannot write process file" in r.stderr and "permission denied" in r.stderr


def test_text_mode_structure_runs_without_a_cache_it_cannot_write(fake_openai, vance_home, faulty):
    built = {
        "schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        "confidence": 0.9,
        "clarifyingQuestions": [],
    }
    for _ in range(2):
        fake_openai.enqueue(text=json.dumps(built))
        fake_openai.enqueue(text=json.dumps({"result": {"name": "Ann"}, "_need": None}))
    env = faulty(vance_home / "data", errno.EROFS, VANCE_MODEL="openai/test-model", VANCE_API_BASE=fake_openai.url)
    r = vance("structure", "Ann was here", "--schema", "the person's name", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"name": "Ann"}
    assert "warning: the schema cache was not used: cannot write the structure database" in r.stderr
    assert "read-only" in r.stderr
    r = vance("structure", "Ann was here", "--schema", "the person's name", "--json", env=env)
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["status"] == "ok" and out["schemaCached"] is False
    assert out["warnings"] and "read-only" in out["warnings"][0]
    assert not (vance_home / "data" / "structure.json").exists()
