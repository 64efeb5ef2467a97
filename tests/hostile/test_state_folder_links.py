"""Issue 17 re-review, finding 7 (LOW-MED): no state is written through a planted folder link.

O_NOFOLLOW guards only a path's last part: a cloned repository whose `.vance`, `.vance/processes` or
`.vance/data` is a symlink made Vance write the conversation, the lock and the schema database
wherever it pointed (a world-readable /tmp folder, a served web root). Every state folder is now
made or checked part by part with lstat below its scope (store/atomic.py state_folder), and the
files in it are private: process files and locks 0600 in 0700 folders.
"""

from __future__ import annotations

import os
import stat

import pytest

from tests.helpers import run_cli, write_script

RESPOND = {"tool_calls": [{"name": "respond", "arguments": {"message": "hi", "awaiting_user_input": True}}]}


@pytest.mark.parametrize("link", [".vance", ".vance/processes"])
def test_no_state_is_written_through_a_planted_folder_link(tmp_path, link):
    # the reviewer's repro (test_r7_state_folder_links.py)
    outside = tmp_path / "shared"  # e.g. /tmp/x readable by others, or /var/www/html
    outside.mkdir()
    clone = tmp_path / "clone"
    clone.mkdir()
    if link == ".vance/processes":
        (clone / ".vance").mkdir()
    os.symlink(outside, clone / link)
    script = write_script(tmp_path / "b.json", [RESPOND] * 2)
    r = run_cli("chat", "-p", "my secret prompt", "--model", script, cwd=clone)
    written = [p for p in outside.rglob("*") if p.is_file()]
    assert not written, written
    assert r.returncode == 1 and "is a symbolic link" in r.stderr and "fix:" in r.stderr, r.stderr
    assert "internal error" not in r.stderr


def _clone_with_a_linked(tmp_path, folder: str):
    """A clone whose `.vance/<folder>` links to an outside folder; (the clone, that folder)."""
    outside = tmp_path / "shared"
    outside.mkdir()
    clone = tmp_path / "clone"
    (clone / ".vance").mkdir(parents=True)
    os.symlink(outside, clone / ".vance" / folder)
    return clone, outside


def test_no_schema_database_is_written_through_a_data_link(tmp_path):
    clone, outside = _clone_with_a_linked(tmp_path, "data")
    (tmp_path / "s.json").write_text('{"type": "object"}')
    r = run_cli("schemas", "add", "x", str(tmp_path / "s.json"), cwd=clone)
    assert not list(outside.iterdir())
    assert r.returncode == 1 and "is a symbolic link" in r.stderr, r.stderr


def test_doctor_names_a_linked_state_folder(tmp_path):
    clone, outside = _clone_with_a_linked(tmp_path, "processes")
    r = run_cli("doctor", cwd=clone)
    assert not list(outside.iterdir())
    assert "is a symbolic link" in r.stdout + r.stderr, (r.stdout, r.stderr)


def test_process_files_and_locks_are_private(tmp_path, vance_home):
    clone = tmp_path / "clone"
    (clone / ".vance").mkdir(parents=True)
    script = write_script(tmp_path / "b.json", [RESPOND] * 2)
    assert run_cli("chat", "-p", "my secret prompt", "--model", script, cwd=clone).returncode == 0
    folder = clone / ".vance" / "processes"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (pfile,) = folder.glob("*.json")
    assert stat.S_IMODE(pfile.stat().st_mode) == 0o600
    assert stat.S_IMODE(pfile.with_suffix(".lock").stat().st_mode) == 0o600
    assert run_cli("chat", "-p", "again", "--continue", "--model", script, cwd=clone).returncode == 0
    assert stat.S_IMODE(pfile.stat().st_mode) == 0o600  # a save keeps it private
