"""The path gate: resolve_in_workspace and the tools refusing every escape."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from vance_cli.tools.base import ToolContext, ToolResult
from vance_cli.tools.paths import (
    PathOutsideWorkspace,
    WorkspaceError,
    resolve_in_workspace,
)
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


def test_relative_path_resolves_inside(ws: Path):
    assert resolve_in_workspace(ws, "a/b.txt") == ws.resolve() / "a" / "b.txt"


@pytest.mark.parametrize("rel", ["", ".", "./"])
def test_empty_and_dot_are_the_root(ws: Path, rel: str):
    assert resolve_in_workspace(ws, rel) == ws.resolve()


def test_absolute_path_inside_is_accepted(ws: Path):
    (ws / "f.txt").write_text("x")
    assert resolve_in_workspace(ws, str(ws / "f.txt")) == ws.resolve() / "f.txt"


def test_absolute_path_outside_is_rejected(ws: Path, outside: Path):
    with pytest.raises(PathOutsideWorkspace, match="outside the workspace"):
        resolve_in_workspace(ws, str(outside / "secret.txt"))
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, "/etc/passwd")


@pytest.mark.parametrize("rel", ["../outside/secret.txt", "a/../../x", "a/..", ".."])
def test_dotdot_component_is_rejected(ws: Path, rel: str):
    with pytest.raises(PathOutsideWorkspace, match=r"'\.\.'"):
        resolve_in_workspace(ws, rel)


def test_symlink_file_pointing_outside_is_rejected(ws: Path, outside: Path):
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathOutsideWorkspace, match="symlink"):
        resolve_in_workspace(ws, "link.txt")


def test_symlink_dir_pointing_outside_is_rejected_for_paths_below_it(
    ws: Path, outside: Path
):
    (ws / "sub").mkdir()
    (ws / "sub" / "out").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, "sub/out")
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, "sub/out/secret.txt")
    with pytest.raises(PathOutsideWorkspace):  # not-yet-existing target below the link
        resolve_in_workspace(ws, "sub/out/new/file.txt")


def test_dangling_symlink_to_outside_is_rejected(ws: Path, outside: Path):
    (ws / "dangling").symlink_to(outside / "does-not-exist.txt")
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, "dangling")


def test_symlink_staying_inside_is_followed(ws: Path):
    (ws / "real").mkdir()
    (ws / "real" / "f.txt").write_text("x")
    (ws / "alias").symlink_to(ws / "real", target_is_directory=True)
    assert resolve_in_workspace(ws, "alias/f.txt") == ws.resolve() / "real" / "f.txt"


def test_symlink_loop_is_rejected_not_crashing(ws: Path):
    (ws / "a").symlink_to(ws / "b")
    (ws / "b").symlink_to(ws / "a")
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, "a/x")


def test_workspace_reached_through_a_symlink_accepts_its_absolute_paths(
    tmp_path: Path, ws: Path
):
    alias = tmp_path / "ws-alias"
    alias.symlink_to(ws, target_is_directory=True)
    assert resolve_in_workspace(alias, str(alias / "f.txt")) == ws.resolve() / "f.txt"


def test_missing_workspace_is_a_workspace_error(tmp_path: Path):
    with pytest.raises(WorkspaceError, match="does not exist"):
        resolve_in_workspace(tmp_path / "nope", "x")


def test_nul_byte_is_rejected(ws: Path):
    with pytest.raises(PathOutsideWorkspace, match="NUL"):
        resolve_in_workspace(ws, "a\x00b")


# ------------------------------------------------------------------ every tool refuses escapes


async def test_file_read_refuses_absolute_outside_and_leaks_nothing(
    call, outside: Path
):
    res = await call("file_read", path=str(outside / "secret.txt"))
    assert not res.ok
    assert "outside the workspace" in res.content
    assert "top secret" not in res.content


async def test_file_read_refuses_dotdot(call):
    res = await call("file_read", path="../outside/secret.txt")
    assert not res.ok and "'..'" in res.content


async def test_file_read_refuses_symlinked_file(call, ws: Path, outside: Path):
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    res = await call("file_read", path="link.txt")
    assert not res.ok and "symlink" in res.content
    assert "top secret" not in res.content


async def test_file_read_refuses_file_below_symlinked_dir(
    call, ws: Path, outside: Path
):
    (ws / "out").symlink_to(outside, target_is_directory=True)
    res = await call("file_read", path="out/secret.txt")
    assert not res.ok and "top secret" not in res.content


async def test_file_list_refuses_symlinked_dir(call, ws: Path, outside: Path):
    (ws / "out").symlink_to(outside, target_is_directory=True)
    res = await call("file_list", path="out")
    assert not res.ok and "secret.txt" not in res.content


async def test_file_list_recursive_does_not_descend_into_symlinked_dir(
    call, ws: Path, outside: Path
):
    (ws / "out").symlink_to(outside, target_is_directory=True)
    res = await call("file_list", recursive=True)
    assert res.ok
    assert "secret.txt" not in res.content
    assert "out -> " in res.content  # the link itself is shown, not followed


async def test_file_write_refuses_symlinked_parent(call, ws: Path, outside: Path):
    (ws / "out").symlink_to(outside, target_is_directory=True)
    res = await call("file_write", path="out/new.txt", content="pwned")
    assert not res.ok
    assert not (outside / "new.txt").exists()


async def test_file_write_refuses_symlinked_grandparent_for_new_dirs(
    call, ws: Path, outside: Path
):
    (ws / "out").symlink_to(outside, target_is_directory=True)
    res = await call("file_write", path="out/a/b/new.txt", content="pwned")
    assert not res.ok
    assert not (outside / "a").exists()


async def test_file_write_refuses_dangling_symlink_to_outside(
    call, ws: Path, outside: Path
):
    (ws / "link.txt").symlink_to(outside / "created.txt")
    res = await call("file_write", path="link.txt", content="pwned")
    assert not res.ok
    assert not (outside / "created.txt").exists()


async def test_file_write_refuses_overwriting_outside_file_through_symlink(
    call, ws: Path, outside: Path
):
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    res = await call("file_write", path="link.txt", content="pwned")
    assert not res.ok
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_file_write_refuses_absolute_outside(call, outside: Path):
    res = await call("file_write", path=str(outside / "x.txt"), content="pwned")
    assert not res.ok and not (outside / "x.txt").exists()


async def test_exec_run_refuses_cwd_outside(call, outside: Path):
    for cwd in ("..", str(outside)):
        res = await call("exec_run", command="touch escaped", cwd=cwd)
        assert not res.ok
    assert not (outside / "escaped").exists()
    assert not (outside.parent / "escaped").exists()


async def test_exec_run_refuses_cwd_through_symlink(call, ws: Path, outside: Path):
    (ws / "out").symlink_to(outside, target_is_directory=True)
    res = await call("exec_run", command="touch escaped", cwd="out")
    assert not res.ok and not (outside / "escaped").exists()


def test_symlink_fixture_sanity(ws: Path, outside: Path):
    # Guards the escape tests above: the outside folder really is outside the workspace.
    assert os.path.commonpath([ws.resolve(), outside.resolve()]) != str(ws.resolve())
