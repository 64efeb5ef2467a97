"""Issue 17 re-review, finding 6 (MED): a clone's schema files that are links to /dev/zero, FIFOs or
the person's own files are refused, bounded and never hang.

Schemas apply in untrusted folders, so `.vance/schemas/a.json -> /dev/zero` used to read until
MemoryError and `-> a FIFO` hung `vance schemas list` forever. Every "read a small regular file"
place now goes through one helper (store/reading.py read_regular, what read_holder did for lock
files): O_NONBLOCK, a regular file only, a bounded read; in the project scope no symbolic link
(a link to ~/.docker/config.json would make a credential file a schema that goes to the model).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import run_cli, subprocess_env, write_script


def _vance(cwd, home, *args, timeout: float = 30):
    """A subprocess with its memory bounded: a runaway read ends in MemoryError, a hang in a timeout."""
    return subprocess.run(
        ["sh", "-c", 'ulimit -v 2500000; exec "$@"', "sh", sys.executable, "-m", "vance_cli", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL,
        env=subprocess_env({"VANCE_HOME": str(home)}),
    )


def _plant(tmp_path, name: str, plant: str):
    clone = tmp_path / "clone"
    (clone / ".vance" / "schemas").mkdir(parents=True, exist_ok=True)
    link = clone / ".vance" / "schemas" / name
    if plant == "dev-zero":
        os.symlink("/dev/zero", link)
    elif plant == "fifo":
        os.mkfifo(tmp_path / "fifo")
        os.symlink(tmp_path / "fifo", link)
    elif plant == "fifo-itself":
        os.mkfifo(link)
    return clone


@pytest.mark.parametrize("plant", ["dev-zero", "fifo"])
def test_a_planted_schema_special_file_is_a_clear_error(tmp_path, plant):
    # the reviewer's repro (test_r6_project_schema_special_file.py)
    clone = _plant(tmp_path, "a.json", plant)
    try:
        r = _vance(clone, tmp_path / "home", "schemas", "list")
    except subprocess.TimeoutExpired:
        pytest.fail("vance schemas list hangs on a planted .vance/schemas/a.json -> FIFO")
    assert "internal error" not in r.stderr and "MemoryError" not in r.stderr, r.stderr
    assert r.returncode == 0 and "warning: skipped schema 'a'" in r.stderr and "symbolic link" in r.stderr, r.stderr


def test_a_planted_manual_or_fifo_schema_never_hangs_structure(tmp_path):
    clone = _plant(tmp_path, "b.json", "fifo-itself")
    (clone / ".vance" / "schemas" / "a.json").write_text('{"type": "object"}')
    os.mkfifo(clone / ".vance" / "schemas" / "a.manual.md")
    script = write_script(tmp_path / "s.json", ['{"x": 1}'] * 3)
    for args in (("schemas", "list"), ("structure", "x", "--schema", "a", "--model", script)):
        try:
            r = _vance(clone, tmp_path / "home", *args)
        except subprocess.TimeoutExpired:
            pytest.fail(f"vance {' '.join(args[:2])} hangs on a FIFO in .vance/schemas/")
        assert "internal error" not in r.stderr, (args, r.stderr)
        assert "a.manual.md" in r.stderr and "not a regular file" in r.stderr, (args, r.stderr)


def test_a_schema_link_to_the_persons_json_is_not_read(tmp_path):
    """`.vance/schemas/creds.json -> ~/.docker/config.json`: the token would be sent to the model as
    part of the schema. A link in the project scope is refused (a file of its own is needed)."""
    secret = tmp_path / "docker-config.json"
    secret.write_text('{"auths": {"registry": {"auth": "SECRET-TOKEN-123"}}}')
    clone = tmp_path / "clone"
    (clone / ".vance" / "schemas").mkdir(parents=True)
    os.symlink(secret, clone / ".vance" / "schemas" / "creds.json")
    r = run_cli("schemas", "show", "creds", cwd=clone)
    assert "SECRET-TOKEN-123" not in r.stdout + r.stderr
    assert r.returncode != 0 and "symbolic link" in r.stderr and "fix:" in r.stderr, r.stderr


def test_a_linked_project_schemas_folder_is_not_read(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.json").write_text('{"type": "object", "description": "SECRET-TOKEN-123"}')
    clone = tmp_path / "clone"
    (clone / ".vance").mkdir(parents=True)
    os.symlink(elsewhere, clone / ".vance" / "schemas")
    r = run_cli("schemas", "list", cwd=clone)
    assert "SECRET-TOKEN-123" not in r.stdout and "config" not in r.stdout.split(), r.stdout
    assert "symbolic link" in r.stderr, r.stderr


def test_a_user_scope_link_is_still_followed(tmp_path, vance_home):
    """The person's own $VANCE_HOME/schemas may link to their dotfiles: only the project scope (a
    clone's files) refuses links."""
    mine = tmp_path / "dotfiles-schema.json"
    mine.write_text('{"type": "object", "properties": {"a": {"type": "string"}}}')
    (vance_home / "schemas").mkdir()
    os.symlink(mine, vance_home / "schemas" / "mine.json")
    r = run_cli("schemas", "list")
    assert "mine" in r.stdout and "warning" not in r.stderr, (r.stdout, r.stderr)


def test_the_structure_db_as_a_fifo_does_not_hang_schemas_add(tmp_path):
    clone = tmp_path / "clone"
    (clone / ".vance" / "data").mkdir(parents=True)
    os.mkfifo(clone / ".vance" / "data" / "structure.json")
    (tmp_path / "s.json").write_text('{"type": "object"}')
    try:
        r = _vance(clone, tmp_path / "home", "schemas", "add", "x", str(tmp_path / "s.json"))
    except subprocess.TimeoutExpired:
        pytest.fail("vance schemas add hangs on a FIFO as .vance/data/structure.json")
    assert r.returncode == 1 and "not a regular file" in r.stderr and "internal error" not in r.stderr, r.stderr


def test_read_regular_refuses_and_bounds(tmp_path):
    from vance_cli.store.reading import read_regular

    (tmp_path / "f").write_bytes(b"12345")
    assert read_regular(tmp_path / "f", 5) == b"12345"
    with pytest.raises(OSError, match="larger than 4 bytes"):
        read_regular(tmp_path / "f", 4)
    assert read_regular(tmp_path / "f", 4, head=True) == b"1234"  # its first bytes (a history log)
    with pytest.raises(OSError, match="not a regular file"):
        read_regular(Path("/dev/zero"), 10)
    with pytest.raises(OSError, match="not a regular file"):
        read_regular(Path("/dev/zero"), 10, head=True)
    os.mkfifo(tmp_path / "p")
    with pytest.raises(OSError, match="not a regular file"):
        read_regular(tmp_path / "p", 10)  # O_NONBLOCK: no writer, no wait
    os.symlink(tmp_path / "f", tmp_path / "l")
    assert read_regular(tmp_path / "l", 10) == b"12345"
    with pytest.raises(OSError, match="symbolic link"):
        read_regular(tmp_path / "l", 10, links=False)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 10)
