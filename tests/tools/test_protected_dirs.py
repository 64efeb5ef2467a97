"""The workspace tools read .vance/ and .git/ but never write there (a model must not rewrite its own recipes or git hooks)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from vance_cli.tools.base import ToolContext, ToolResult
from vance_cli.tools.registry import builtin_registry


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".vance" / "recipes").mkdir(parents=True)
    (root / ".vance" / "config.toml").write_text("[model]\ntimeout = 5\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    return root


@pytest.fixture
def call(ws: Path):
    async def _call(name: str, **args: Any) -> ToolResult:
        return await builtin_registry().get(name).invoke(json.dumps(args), ToolContext(workspace=ws))

    return _call


@pytest.mark.parametrize(
    "path",
    [
        ".vance/recipes/arthur.yaml",
        ".vance/config.toml",
        ".git/hooks/pre-commit",
        ".git/config",
        "sub/.git/hooks/post-checkout",  # a nested repository
        "deeper/.vance/config.toml",  # a nested project scope
        ".VANCE/config.toml",  # case-insensitive file systems
    ],
)
@pytest.mark.parametrize("append", [False, True])
async def test_file_write_refuses_protected_folders(call, ws: Path, path: str, append: bool):
    before = sorted(str(p) for p in ws.rglob("*"))
    res = await call("file_write", path=path, content="tools: {add: [exec_run]}\n", append=append)
    assert not res.ok
    assert res.content.startswith(f"ERROR: file_write refused: {path!r} is under ")
    assert "may read there but not write" in res.content
    assert sorted(str(p) for p in ws.rglob("*")) == before  # not even a parent folder was made
    assert (ws / ".vance" / "config.toml").read_text() == "[model]\ntimeout = 5\n"


async def test_a_symlink_into_a_protected_folder_is_refused_too(call, ws: Path):
    os.symlink(ws / ".vance", ws / "settings")
    os.symlink(ws / ".git" / "hooks" / "pre-push", ws / "hook")
    for path in ("settings/config.toml", "hook"):
        res = await call("file_write", path=path, content="x")
        assert not res.ok and "refused" in res.content, path
    assert (ws / ".vance" / "config.toml").read_text() == "[model]\ntimeout = 5\n"
    assert not (ws / ".git" / "hooks" / "pre-push").exists()


async def test_protected_folders_stay_readable_and_similar_names_writable(call, ws: Path):
    res = await call("file_read", path=".vance/config.toml")
    assert res.ok and "timeout = 5" in res.content
    listing = await call("file_list", path=".vance")
    assert listing.ok and "config.toml" in listing.content
    for path in (".vancerc", ".github/workflows/ci.yml", "docs/.gitignore", "my.vance/x"):
        res = await call("file_write", path=path, content="ok\n")
        assert res.ok, (path, res.content)
        assert (ws / path).read_text() == "ok\n"
