"""Issue 17 re-review of the git guard (tools/git_guard.py): four holes a command still had.

F1 a bare repository (HEAD, objects/, refs/ and a config, no `.git`) planted in a folder;
F2 a repository planted behind more folder entries than the walk looks at;
F3 a detached process that plants after exec_run's check ran (without a sandbox);
F4 `[include] path = ...` in a repository's config naming a file in the work tree.

Planting goes through the real CLI (the local test server plays the model) or the exec_run tool;
then the person's next git command runs there and must not run what was planted.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from tests.hostile.test_git_planting import _git_status, _own_hub, _repo
from tests.hostile.test_sandbox_holes import _chat, _script, _tool_results
from tests.tools.exec_helpers import settings
from vance_cli.tools.base import ToolContext, ToolResult
from vance_cli.tools.registry import builtin_registry

# A repository without a `.git`: git finds it when run in (or -C) the folder; `worktree = .` gives
# it a work tree, so `git status` there runs core.fsmonitor.
BARE = "[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = \\\"id > PWNED; false\\\"\\n"


def _bare(folder: str) -> str:
    return (f"mkdir -p {folder}/objects {folder}/refs && echo 'ref: refs/heads/main' > {folder}/HEAD "
            f"&& printf '{BARE}' > {folder}/config; echo ok")


def _pwned(work: Path) -> list[Path]:
    return list(work.rglob("PWNED"))


def _exec(ws: Path, command: str, mode: str = "off", timeout: float = 20) -> ToolResult:
    ctx = ToolContext(workspace=ws, settings=settings(VANCE_SANDBOX="off" if mode == "off" else "required"))
    tool = builtin_registry().get("exec_run")
    return asyncio.run(tool.invoke(json.dumps({"command": command, "timeout": timeout}), ctx))


# --------------------------------------------------------------------------- F1 bare repositories


def test_a_bare_repository_made_in_a_sub_folder_is_disabled(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    _repo(work)
    _own_hub(vance_home, fake_openai)
    _script(fake_openai, ("exec_run", {"command": _bare("vendor/lib")}))
    _chat(work)
    subprocess.run(["git", "-C", "vendor/lib", "status"], cwd=work, capture_output=True, timeout=60)
    _git_status(work / "vendor" / "lib")
    assert not _pwned(work)
    assert (work / "vendor" / "lib" / "HEAD.made-by-a-command").is_file()  # kept for the person to check
    assert "vendor/lib" in _tool_results(fake_openai)[0]


def test_a_workspace_made_into_a_bare_repository_is_disabled(fake_openai, vance_home, tmp_path):
    """No `.git` at the root: git takes the folder itself for a repository when it looks like one."""
    work = tmp_path / "work"
    _own_hub(vance_home, fake_openai)
    _script(fake_openai, ("exec_run", {"command": _bare(".")}))
    _chat(work)
    _git_status(work)
    assert not _pwned(work)
    assert not (work / "HEAD").exists()


def test_a_bare_repositorys_config_changed_by_a_command_is_put_back(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", str(work / "store.git")], check=True)
    config = (work / "store.git" / "config").read_text()
    _own_hub(vance_home, fake_openai)
    _script(fake_openai, ("exec_run", {"command": f"printf '{BARE}' > store.git/config; echo ok"}))
    _chat(work, env={"VANCE_SANDBOX": "off"})
    subprocess.run(["git", "-C", "store.git", "status"], cwd=work, capture_output=True, timeout=60)
    assert not _pwned(work)
    assert (work / "store.git" / "config").read_text() == config
