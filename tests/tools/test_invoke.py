"""Tool.invoke on the workspace tools: schemas, argument validation, and errors as results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vance_cli import names
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


def test_factories_cover_the_four_workspace_tools():
    workspace_tools = [name for name in names.TOOLS if names.TOOLS[name].startswith(("vance_cli.tools.files:", "vance_cli.tools.exec_run:"))]
    assert sorted(workspace_tools) == [
        "exec_run",
        "file_list",
        "file_read",
        "file_write",
    ]
    registry = builtin_registry()
    for name in workspace_tools:
        tool = registry.get(name)
        assert tool.name == name
        assert tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False
        assert tool.description


def test_builtin_registry_offers_the_workspace_tools():
    from vance_cli.tools.registry import builtin_registry

    names = builtin_registry().names()
    assert {"respond", "file_read", "file_list", "file_write", "exec_run"} <= set(names)


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("file_read", {}, "'path' is a required property"),
        ("file_write", {"path": "x"}, "'content' is a required property"),
        ("exec_run", {}, "'command' is a required property"),
        ("file_read", {"path": "a", "encoding": "latin-1"}, "Additional properties"),
        ("file_list", {"path": ".", "depth": 2}, "Additional properties"),
        ("file_read", {"path": "a", "offset": "3"}, "offset"),
        ("file_read", {"path": "a", "limit": 0}, "limit"),
        ("file_list", {"max_entries": 100000}, "max_entries"),
        ("exec_run", {"command": "true", "timeout": 601}, "timeout"),
        ("exec_run", {"command": "true", "timeout": 0}, "timeout"),
    ],
)
async def test_invalid_arguments_are_error_results_not_exceptions(
    call, name: str, args: dict, expected: str
):
    res = await call(name, **args)
    assert not res.ok
    assert res.content.startswith(f"ERROR: invalid arguments for {name}")
    assert expected in res.content


async def test_malformed_json_arguments_are_an_error_result(ws: Path):
    res = await builtin_registry().get("file_list").invoke(
        "{not json", ToolContext(workspace=ws)
    )
    assert not res.ok and "not valid JSON" in res.content


async def test_run_turns_unexpected_exceptions_into_error_results(
    ws: Path, monkeypatch
):
    (ws / "a.txt").write_text("x")

    def broken(*a: Any, **k: Any) -> Any:
        raise ValueError("kaboom")

    monkeypatch.setattr(files, "_read_text", broken)
    res = await builtin_registry().get("file_read").run(
        {"path": "a.txt"}, ToolContext(workspace=ws)
    )
    assert not res.ok and "kaboom" in res.content


async def test_run_on_a_missing_workspace_is_an_error_result(tmp_path: Path):
    ctx = ToolContext(workspace=tmp_path / "gone")
    for name, args in [("file_list", {}), ("exec_run", {"command": "true"})]:
        res = await builtin_registry().get(name).run(args, ctx)
        assert not res.ok and "does not exist" in res.content
