"""Issue 17 review: git control files a command or a file tool could still plant.

Each case plants through the real CLI (the local test server plays the model), then runs the
person's next git command and checks that nothing planted ran. A planted core.fsmonitor writes
PWNED at `git status`; a planted hook would run at the next commit.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_cli_delegation import own_hub_with_commands
from tests.helpers import run_cli
from tests.hostile.test_sandbox_holes import _chat, _script, _tool_results, needs_bwrap, outside_tmp  # noqa: F401
from tests.tools.exec_helpers import settings
from vance_cli.tools.base import ToolContext
from vance_cli.tools.paths import git_config_value
from vance_cli.tools.registry import builtin_registry

FSMON = "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \\\"id > PWNED; false\\\"\\n"


def _git_status(work: Path) -> None:
    subprocess.run(["git", "status"], cwd=work, capture_output=True, timeout=60)


def _repo(work: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)


def _plant(fake_openai, work: Path, command: str, env: dict | None = None) -> None:
    """The model runs ``command`` through exec_run; then the person runs `git status` there."""
    _script(fake_openai, ("exec_run", {"command": command}))
    _chat(work, env=env)
    _git_status(work)


def _worktree(main: Path, work: Path) -> str:
    """``work`` as a `git worktree` of a new repository ``main``; the text of its `.git` file."""
    main.mkdir()
    _repo(main)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"],
                   cwd=main, check=True)
    subprocess.run(["git", "worktree", "add", "-q", str(work)], cwd=main, check=True)
    return (work / ".git").read_text()


def _own_hub(vance_home: Path, fake_openai) -> None:
    own_hub_with_commands(vance_home)
    (vance_home / "config.toml").write_text(f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\n')


@needs_bwrap
def test_a_planted_commondir_is_moved_aside(fake_openai, outside_tmp):  # noqa: F811
    home, work = outside_tmp
    _repo(work)
    plant = f"mkdir -p g/objects g/refs && printf '{FSMON}' > g/config && echo ../g > .git/commondir; echo rc=$?"
    _plant(fake_openai, work, plant)
    assert not (work / "PWNED").exists()
    assert not (work / ".git" / "commondir").exists()
    assert "commondir" in _tool_results(fake_openai)[0]


def test_a_commondir_planted_without_a_sandbox_is_moved_aside(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    _repo(work)
    _own_hub(vance_home, fake_openai)
    plant = f"mkdir -p g/objects g/refs && printf '{FSMON}' > g/config && echo ../g > .git/commondir; echo rc=$?"
    _plant(fake_openai, work, plant, env={"VANCE_SANDBOX": "off"})
    assert not (work / "PWNED").exists()


@needs_bwrap
def test_a_hooks_path_folder_made_by_the_command_does_not_run(fake_openai, outside_tmp):  # noqa: F811
    home, work = outside_tmp
    _repo(work)
    subprocess.run(["git", "config", "core.hooksPath", ".githooks"], cwd=work, check=True)
    plant = "mkdir -p .githooks && printf '#!/bin/sh\\nid > PWNED\\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit"
    _script(fake_openai, ("exec_run", {"command": plant}))
    _chat(work)
    assert not (work / ".githooks" / "pre-commit").exists()
    assert (work / ".githooks" / "pre-commit.made-by-a-command").exists()  # kept for the person to check


@needs_bwrap
def test_a_gitdir_file_cannot_be_swapped_for_a_repository(fake_openai, outside_tmp):  # noqa: F811
    """A `git worktree` (or submodule) checkout: .git is a `gitdir:` file."""
    home, work = outside_tmp
    work.rmdir()
    gitfile = _worktree(work.parent / "main", work)
    plant = f"rm .git; git init -q . ; printf '{FSMON}' > .git/config; echo rc=$?"
    _plant(fake_openai, work, plant)
    assert not (work / "PWNED").exists()
    assert (work / ".git").read_text() == gitfile


def test_a_gitdir_file_replaced_without_a_sandbox_is_written_back(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    gitfile = _worktree(tmp_path / "main", work)
    _own_hub(vance_home, fake_openai)
    plant = f"rm .git && git init -q . && printf '{FSMON}' > .git/config; echo rc=$?"
    _plant(fake_openai, work, plant, env={"VANCE_SANDBOX": "off"})
    assert not (work / "PWNED").exists()
    assert (work / ".git").read_text() == gitfile
    assert (work / ".git-made-by-a-command" / "config").is_file()


def test_a_nested_repository_made_by_a_command_is_moved_aside(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    _own_hub(vance_home, fake_openai)
    plant = f"mkdir -p src && cd src && git init -q . && printf '{FSMON}' > .git/config; echo ok"
    _script(fake_openai, ("exec_run", {"command": plant}))
    _chat(work)
    _git_status(work / "src")
    assert not (work / "src" / "PWNED").exists()
    assert (work / "src" / ".git-made-by-a-command").is_dir()


def test_a_nested_repositorys_config_changed_by_a_command_is_put_back(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    (work / "lib").mkdir(parents=True)
    _repo(work / "lib")
    config = (work / "lib" / ".git" / "config").read_text()
    _own_hub(vance_home, fake_openai)
    plant = f"printf '{FSMON}' > lib/.git/config; echo ok"
    _script(fake_openai, ("exec_run", {"command": plant}))
    _chat(work)
    _git_status(work / "lib")
    assert not (work / "lib" / "PWNED").exists()
    assert (work / "lib" / ".git" / "config").read_text() == config


def test_file_write_refuses_a_hooks_path_with_an_inline_comment(fake_openai, vance_home, tmp_path):
    """git reads `hooksPath = tools/hooks ; the team's hooks` as tools/hooks."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    _repo(work)
    with open(work / ".git" / "config", "a") as f:
        f.write("[core]\n\thooksPath = tools/hooks ; the team's hooks\n")
    git_reads = subprocess.run(["git", "config", "core.hooksPath"], cwd=work, capture_output=True, text=True).stdout
    assert git_reads == "tools/hooks\n"
    (work / "tools" / "hooks").mkdir(parents=True)
    result = file_write_in_a_chat(fake_openai, vance_home, work, "tools/hooks/pre-commit", "#!/bin/sh\nid > pwned\n")
    assert not (work / "tools" / "hooks" / "pre-commit").exists()
    assert "core.hooksPath" in result


def file_write_in_a_chat(fake_openai, vance_home: Path, work: Path, path: str, content: str) -> str:
    """The model calls file_write(path, content) in a `vance chat` with the coding recipe in
    ``work``; the tool result it got back."""
    (vance_home / "config.toml").write_text(f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\n')
    _script(fake_openai, ("file_write", {"path": path, "content": content}))
    r = run_cli("chat", "-p", "help", "--yes", "--recipe", "coding", cwd=work)
    assert r.returncode == 0, r.stderr
    return _tool_results(fake_openai)[0]


@pytest.mark.parametrize(
    "raw,value",
    [("tools/hooks ; c", "tools/hooks"), ("tools/hooks # c", "tools/hooks"), ('"a;b" ; c', "a;b"), ('x\\"y', 'x"y')],
)
def test_git_config_values_read_as_git_reads_them(raw, value):
    assert git_config_value(raw) == value


def test_a_cancelled_command_still_has_its_plant_undone(tmp_path):
    """The check runs in exec_run's `finally`: a call cancelled mid-command leaves no planted hook."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _repo(ws)
    plant = "mkdir -p .git/hooks && printf '#!/bin/sh\\nid > PWNED\\n' > .git/hooks/pre-commit && touch planted; sleep 37.3"
    cancel_once_started(ws, plant, ws / "planted")
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()


def cancel_once_started(ws: Path, command: str, started: Path) -> None:
    """Run ``command`` through exec_run (no sandbox) and cancel the call once ``started`` exists."""
    ctx = ToolContext(workspace=ws, settings=settings(VANCE_SANDBOX="off"))
    tool = builtin_registry().get("exec_run")

    async def run() -> None:
        task = asyncio.create_task(tool.invoke(json.dumps({"command": command, "timeout": 30}), ctx))
        for _ in range(500):
            if started.exists():
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert started.exists()
