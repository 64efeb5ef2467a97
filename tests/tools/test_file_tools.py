"""file_read, file_list and file_write: happy paths, caps, binary files, atomic writes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from vance_cli.tools import files
from vance_cli.tools.base import ToolContext, ToolResult
from vance_cli.tools.registry import builtin_registry


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n")
    return folder


@pytest.fixture
def call(ws: Path):
    """Invoke a workspace tool the way an engine does: raw JSON arguments through Tool.invoke."""

    async def _call(name: str, **args: Any) -> ToolResult:
        return await builtin_registry().get(name).invoke(
            json.dumps(args), ToolContext(workspace=ws)
        )

    return _call


# ------------------------------------------------------------------ file_read


async def test_file_read_returns_the_text(call, ws: Path):
    (ws / "a.txt").write_text("one\ntwo\n")
    res = await call("file_read", path="a.txt")
    assert res.ok
    assert res.content == "one\ntwo\n"


async def test_file_read_accepts_absolute_path_inside(call, ws: Path):
    (ws / "a.txt").write_text("hello")
    res = await call("file_read", path=str(ws / "a.txt"))
    assert res.ok and res.content == "hello"


async def test_file_read_offset_and_limit_select_lines_and_say_how_to_continue(
    call, ws: Path
):
    (ws / "n.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    res = await call("file_read", path="n.txt", offset=2, limit=3)
    assert res.ok
    assert res.content.startswith("line3\nline4\nline5\n[")
    assert "line6" not in res.content
    assert "lines 3-5" in res.content and "offset=5" in res.content


async def test_file_read_limit_covering_the_end_adds_no_note(call, ws: Path):
    (ws / "n.txt").write_text("a\nb\nc")
    res = await call("file_read", path="n.txt", offset=1, limit=5)
    assert res.content == "b\nc"


async def test_file_read_offset_past_end_says_how_many_lines(call, ws: Path):
    (ws / "n.txt").write_text("a\nb\n")
    res = await call("file_read", path="n.txt", offset=7)
    assert res.ok and "past the end" in res.content and "2 lines" in res.content


async def test_file_read_truncates_at_the_cap_and_names_the_next_offset(
    call, ws: Path, monkeypatch
):
    monkeypatch.setattr(files, "MAX_READ_CHARS", 100)
    # 50 lines of 10 characters: the cap falls after line 10.
    (ws / "big.txt").write_text("".join(f"{i:09d}\n" for i in range(50)))
    res = await call("file_read", path="big.txt")
    assert res.ok
    assert res.content.startswith("000000000\n")
    assert "000000009\n" in res.content and "000000010" not in res.content
    assert "truncated" in res.content and "offset=10" in res.content
    assert res.data["truncated"] is True
    nxt = await call("file_read", path="big.txt", offset=10, limit=1)
    assert nxt.content.startswith("000000010\n")


async def test_file_read_cap_inside_a_long_line_says_so(call, ws: Path, monkeypatch):
    monkeypatch.setattr(files, "MAX_READ_CHARS", 50)
    (ws / "min.js").write_text("short\n" + "x" * 500 + "\nafter\n")
    res = await call("file_read", path="min.js")
    assert res.ok
    assert "inside line 2" in res.content and "offset=2" in res.content
    assert "x" * 500 not in res.content
    nxt = await call("file_read", path="min.js", offset=2)
    assert nxt.content == "after\n"


async def test_file_read_binary_file_is_an_error(call, ws: Path):
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    res = await call("file_read", path="img.png")
    assert not res.ok and "binary" in res.content


async def test_file_read_non_utf8_file_is_an_error(call, ws: Path):
    (ws / "latin.bin").write_bytes(bytes(range(128, 256)) * 4)
    res = await call("file_read", path="latin.bin")
    assert not res.ok and "binary" in res.content


async def test_file_read_missing_file_names_path_and_suggests_file_list(call):
    res = await call("file_read", path="nope/missing.txt")
    assert not res.ok
    assert "nope/missing.txt" in res.content and "file_list" in res.content


async def test_file_read_folder_is_an_error_pointing_to_file_list(call, ws: Path):
    (ws / "d").mkdir()
    res = await call("file_read", path="d")
    assert not res.ok and "file_list" in res.content


async def test_file_read_empty_file_says_empty(call, ws: Path):
    (ws / "e.txt").write_text("")
    res = await call("file_read", path="e.txt")
    assert res.ok and "empty" in res.content


# ------------------------------------------------------------------ file_list


@pytest.fixture
def tree(ws: Path) -> Path:
    (ws / "b.txt").write_text("12345")
    (ws / "a").mkdir()
    (ws / "a" / "inner.py").write_text("x = 1\n")
    (ws / "c").mkdir()
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref")
    (ws / "a" / "__pycache__").mkdir()
    (ws / "a" / "__pycache__" / "inner.pyc").write_bytes(b"\x00")
    return ws


async def test_file_list_sorted_dirs_with_slash_and_sizes(call, tree: Path):
    res = await call("file_list")
    assert res.ok
    body = res.content.splitlines()[1:]
    assert body == [".git/", "a/", "b.txt  (5 bytes)", "c/"]


@pytest.mark.parametrize("path", ["", "."])
async def test_file_list_empty_path_and_dot_list_the_root(call, tree: Path, path: str):
    res = await call("file_list", path=path)
    assert res.ok and "b.txt" in res.content


async def test_file_list_recursive_skips_git_and_pycache(call, tree: Path):
    res = await call("file_list", recursive=True)
    body = res.content.splitlines()[1:]
    assert body == ["a/", "a/inner.py  (6 bytes)", "b.txt  (5 bytes)", "c/"]


async def test_file_list_subfolder(call, tree: Path):
    res = await call("file_list", path="a")
    assert res.content.splitlines()[1:] == ["__pycache__/", "inner.py  (6 bytes)"]


async def test_file_list_caps_entries_with_a_note(call, ws: Path):
    for i in range(12):
        (ws / f"f{i:02d}").write_text("")
    res = await call("file_list", max_entries=5)
    assert res.ok
    lines = res.content.splitlines()
    assert lines[1:6] == [f"f{i:02d}  (0 bytes)" for i in range(5)]
    assert "capped at 5 entries" in lines[-1]
    assert res.data["capped"] is True


async def test_file_list_cap_also_stops_a_recursive_walk(call, ws: Path):
    for d in range(3):
        (ws / f"d{d}").mkdir()
        for i in range(5):
            (ws / f"d{d}" / f"f{i}").write_text("")
    res = await call("file_list", recursive=True, max_entries=4)
    assert res.content.splitlines()[1:5] == [
        "d0/",
        "d0/f0  (0 bytes)",
        "d0/f1  (0 bytes)",
        "d0/f2  (0 bytes)",
    ]
    assert "capped" in res.content


async def test_file_list_empty_folder_says_so(call, ws: Path):
    res = await call("file_list")
    assert res.ok and "(empty folder)" in res.content


async def test_file_list_missing_folder_is_an_error(call):
    res = await call("file_list", path="ghost")
    assert not res.ok and "ghost" in res.content


async def test_file_list_on_a_file_points_to_file_read(call, ws: Path):
    (ws / "f.txt").write_text("x")
    res = await call("file_list", path="f.txt")
    assert not res.ok and "file_read" in res.content


# ------------------------------------------------------------------ file_write


async def test_file_write_creates_file_and_parent_dirs(call, ws: Path):
    res = await call("file_write", path="new/deep/f.txt", content="héllo\n")
    assert res.ok, res.content
    assert (ws / "new" / "deep" / "f.txt").read_text(encoding="utf-8") == "héllo\n"
    assert "created" in res.content


async def test_file_write_replaces_and_leaves_no_temp_files(call, ws: Path):
    (ws / "f.txt").write_text("old content")
    res = await call("file_write", path="f.txt", content="new")
    assert res.ok and "replaced" in res.content
    assert (ws / "f.txt").read_text() == "new"
    assert sorted(p.name for p in ws.iterdir()) == ["f.txt"]


async def test_file_write_append_adds_to_the_end(call, ws: Path):
    (ws / "log.txt").write_text("a\n")
    res = await call("file_write", path="log.txt", content="b\n", append=True)
    assert res.ok and "appended" in res.content
    assert (ws / "log.txt").read_text() == "a\nb\n"


async def test_file_write_append_to_missing_file_creates_it(call, ws: Path):
    res = await call("file_write", path="log.txt", content="x", append=True)
    assert res.ok and (ws / "log.txt").read_text() == "x"


async def test_file_write_keeps_existing_permissions(call, ws: Path):
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    await call("file_write", path="run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


async def test_file_write_through_symlink_inside_updates_the_target(call, ws: Path):
    (ws / "real.txt").write_text("old")
    (ws / "alias.txt").symlink_to(ws / "real.txt")
    res = await call("file_write", path="alias.txt", content="new")
    assert res.ok
    assert (ws / "real.txt").read_text() == "new"
    assert (ws / "alias.txt").is_symlink()


async def test_file_write_to_a_folder_is_an_error(call, ws: Path):
    (ws / "d").mkdir()
    res = await call("file_write", path="d", content="x")
    assert not res.ok and "folder" in res.content


async def test_file_write_to_the_root_is_an_error(call):
    res = await call("file_write", path=".", content="x")
    assert not res.ok


async def test_file_write_under_an_existing_file_is_an_error_result(call, ws: Path):
    (ws / "f.txt").write_text("x")
    res = await call("file_write", path="f.txt/child.txt", content="x")
    assert not res.ok and res.content.startswith("ERROR:")


async def test_file_write_failure_mid_write_keeps_the_old_file(
    call, ws: Path, monkeypatch
):
    (ws / "f.txt").write_text("old")

    def boom(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", boom)
    res = await call("file_write", path="f.txt", content="new")
    assert not res.ok and "Input/output error" in res.content
    assert (ws / "f.txt").read_text() == "old"
    assert sorted(p.name for p in ws.iterdir()) == ["f.txt"]
