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
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.hostile.test_git_planting import FSMON, _git_status, _own_hub, _repo, cancel_once_started, file_write_in_a_chat
from tests.hostile.test_sandbox_holes import _chat, _script, _tool_results, needs_bwrap, outside_tmp  # noqa: F401
from tests.tools.exec_helpers import bwrap_works, gone_soon, settings, sleepers
from vance_cli.tools import git_guard
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


# --------------------------------------------------------------------------- F2 the walk's limit

PLANT_DEEP = f"mkdir -p p/q && git init -q p/q && printf '{FSMON}' > p/q/.git/config"


def test_a_repository_planted_after_many_entries_is_still_found(monkeypatch, tmp_path):
    """The command makes more entries than the walk looks at, then a repository: the check looks
    where the command changed something first, so the bulk does not hide it."""
    monkeypatch.setattr(git_guard, "WALK_LIMIT", 1000)
    ws = tmp_path / "ws"
    ws.mkdir()
    res = _exec(ws, f"seq 1 3000 | sed s/^/f/ | xargs touch && {PLANT_DEEP}; echo rc=$?")
    assert "rc=0" in res.content
    _git_status(ws / "p" / "q")
    assert not _pwned(ws)
    assert (ws / "p" / "q" / ".git-made-by-a-command").is_dir()
    assert "p/q/.git" in res.content


def test_a_check_cut_short_says_what_it_did_not_check(monkeypatch, tmp_path):
    monkeypatch.setattr(git_guard, "CHANGED_LIMIT", 500, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    res = _exec(ws, f"seq 1 3000 | sed s/^/f/ | xargs touch && {PLANT_DEEP}; echo rc=$?")
    assert "rc=0" in res.content
    assert "not fully checked" in res.content


def test_a_workspace_bigger_than_the_walk_says_it_was_checked_in_part(monkeypatch, tmp_path):
    monkeypatch.setattr(git_guard, "WALK_LIMIT", 1000)
    ws = tmp_path / "ws"
    (ws / "big").mkdir(parents=True)
    for n in range(1500):
        (ws / "big" / f"f{n}").touch()
    res = _exec(ws, "echo hi")
    assert "not fully checked" in res.content
    small = tmp_path / "small"
    small.mkdir()
    assert "checked" not in _exec(small, "echo hi").content


def test_the_check_never_moves_or_writes_through_a_link_out_of_the_workspace(tmp_path):
    """The command swaps a nested repository's folder for a link to another repository outside:
    the check must not put the workspace's config into that one (nor move its config aside)."""
    other = tmp_path / "other"
    other.mkdir()
    _repo(other)
    subprocess.run(["git", "config", "user.name", "other"], cwd=other, check=True)
    config = (other / ".git" / "config").read_text()
    ws = tmp_path / "ws"
    (ws / "lib").mkdir(parents=True)
    _repo(ws / "lib")
    _exec(ws, f"mv lib lib2 && ln -s {other} lib")
    assert (other / ".git" / "config").read_text() == config
    assert sorted(p.name for p in (other / ".git").iterdir() if "made-by" in p.name) == []


def test_a_repository_planted_in_an_old_folder_with_its_times_set_back_is_found(monkeypatch, tmp_path):
    """Only folders whose state changed are listed again; a command can set a folder's mtime back
    but not its ctime."""
    monkeypatch.setattr(git_guard, "RACY_NS", 0)  # the folders below are seconds old, not minutes
    ws = tmp_path / "ws"
    (ws / "a" / "b" / "c").mkdir(parents=True)
    res = _exec(ws, f"git init -q a/b/c && printf '{FSMON}' > a/b/c/.git/config && touch -d 2001-01-01 a/b/c a/b a .")
    _git_status(ws / "a" / "b" / "c")
    assert not _pwned(ws)
    assert "a/b/c/.git" in res.content


def test_work_in_a_repository_that_was_there_is_left_alone(tmp_path):
    ws = tmp_path / "ws"
    (ws / "lib").mkdir(parents=True)
    _repo(ws / "lib")
    res = _exec(ws, "cd lib && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && touch new.txt && echo ok")
    assert res.content.splitlines()[1:] == ["ok"]
    assert (ws / "lib" / ".git" / "HEAD").is_file()


# --------------------------------------------------------------------------- F3 detached planters

# Writes its shell's pid to `armed`, waits, then makes a repository (its config could hold anything)
# and a marker file. Each command below waits for `armed` before it goes on, so the planter is
# known to be running when the command ends, times out or is cancelled; the test then checks that
# its shell is gone (nothing left to plant), not a race between its sleep and the kill (which a
# loaded machine, CI at load 9, lost by half a second).
PLANTER = ("setsid sh -c 'echo $$ > armed.tmp; mv armed.tmp armed; sleep {d}; git init -q late; touch planted' "
           ">/dev/null 2>&1 </dev/null & while [ ! -s armed ]; do sleep 0.01; done;")


def _planter(duration: str) -> str:
    return PLANTER.format(d=duration)


@pytest.fixture
def planters_ended():
    """After the test: no planter left, whatever happened."""
    yield
    for duration in ("4.0731", "20.0732", "4.0733"):
        for pid in sleepers(duration):
            os.kill(pid, 9)
        for pid in _planter_shells(duration):
            os.kill(pid, 9)


def _planter_shells(duration: str) -> list[int]:
    """Live planter shells (`sh -c '... sleep DURATION ...'`), in any PID namespace."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argv[:2] == [b"sh", b"-c"] and f"sleep {duration};".encode() in argv[2] and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def _nothing_planted_later(ws: Path, duration: str) -> None:
    assert (ws / "armed").is_file()  # the planter was running when the command ended
    deadline = time.monotonic() + 0.5
    while _planter_shells(duration) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _planter_shells(duration), "the planter's shell outlived exec_run: it would plant later"
    assert gone_soon(duration, within=0.5)
    assert not (ws / "planted").exists() and not (ws / "late").exists()


@pytest.mark.parametrize("mode", ["off", "bwrap"])
def test_a_detached_planter_does_not_outlive_the_command(tmp_path, mode, planters_ended):
    if mode == "bwrap" and not bwrap_works():
        pytest.skip("bubblewrap does not work here")
    ws = tmp_path / "ws"
    ws.mkdir()
    res = _exec(ws, _planter("4.0731") + " echo started", mode=mode)
    assert "started" in res.content
    _nothing_planted_later(ws, "4.0731")


def test_a_detached_planter_does_not_outlive_a_timeout(tmp_path, planters_ended):
    ws = tmp_path / "ws"
    ws.mkdir()
    # the planter sleeps well past the 3 s timeout: a kill that came late on a loaded machine
    # (a full suite beside a reviewer's, load ~4) let a 4 s planter plant before it, and once a
    # 9 s one (a full suite, 2026-12-07): not a race to test here
    res = _exec(ws, _planter("20.0732") + " sleep 30", timeout=3)
    assert res.data["timed_out"]
    _nothing_planted_later(ws, "20.0732")


def test_a_detached_planter_does_not_outlive_a_cancelled_call(tmp_path, planters_ended):
    ws = tmp_path / "ws"
    ws.mkdir()
    cancel_once_started(ws, _planter("4.0733") + " touch started; sleep 30", ws / "started")
    _nothing_planted_later(ws, "4.0733")


# --------------------------------------------------------------------------- F4 include targets

INCLUDES = {"include": "[include]\n\tpath = ../tools/git.cfg\n",
            "includeIf": '[includeIf "gitdir:/"]\n\tpath = ../tools/git.cfg\n'}
EVIL_CFG = '[core]\n\tfsmonitor = "id > PWNED; false"\n'


def _included(work: Path, section: str) -> None:
    work.mkdir(exist_ok=True)
    _repo(work)
    (work / "tools").mkdir()
    (work / "tools" / "git.cfg").write_text("[user]\n\tname = team\n")
    with open(work / ".git" / "config", "a") as f:
        f.write(INCLUDES[section])


@pytest.mark.parametrize("section", sorted(INCLUDES))
def test_file_write_refuses_a_file_the_repositorys_config_includes(fake_openai, vance_home, tmp_path, section):
    work = tmp_path / "work"
    _included(work, section)
    assert subprocess.run(["git", "config", "user.name"], cwd=work, capture_output=True, text=True).stdout == "team\n"
    result = file_write_in_a_chat(fake_openai, vance_home, work, "tools/git.cfg", EVIL_CFG)
    _git_status(work)
    assert not _pwned(work)
    assert (work / "tools" / "git.cfg").read_text() == "[user]\n\tname = team\n"
    assert "include" in result


def test_file_write_refuses_a_hooks_path_set_in_an_included_file(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    _included(work, "include")
    (work / "tools" / "git.cfg").write_text("[core]\n\thooksPath = tools/hooks\n")
    result = file_write_in_a_chat(fake_openai, vance_home, work, "tools/hooks/pre-commit", "#!/bin/sh\nid > PWNED\n")
    assert not (work / "tools" / "hooks" / "pre-commit").exists()
    assert "core.hooksPath" in result


def test_an_included_file_changed_by_a_command_is_put_back(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    _included(work, "include")
    _own_hub(vance_home, fake_openai)
    _script(fake_openai, ("exec_run", {"command": f"printf '{FSMON}' > tools/git.cfg; echo ok"}))
    _chat(work, env={"VANCE_SANDBOX": "off"})
    _git_status(work)
    assert not _pwned(work)
    assert (work / "tools" / "git.cfg").read_text() == "[user]\n\tname = team\n"
    assert "tools/git.cfg" in _tool_results(fake_openai)[0]


@needs_bwrap
def test_an_included_file_is_read_only_in_the_sandbox(fake_openai, outside_tmp):  # noqa: F811
    home, work = outside_tmp
    _included(work, "include")
    _script(fake_openai, ("exec_run", {"command": f"printf '{FSMON}' > tools/git.cfg; echo rc=$?"}))
    _chat(work)
    _git_status(work)
    assert not _pwned(work)
    assert "rc=1" in _tool_results(fake_openai)[0]  # refused by the sandbox, not undone after


def test_included_files_are_found_as_git_finds_them(tmp_path):
    """Relative to the including file's folder, nested, every includeIf whatever its condition;
    a loop of includes ends."""
    from vance_cli.tools.paths import git_include_paths

    work = tmp_path / "work"
    _included(work, "includeIf")
    (work / "tools" / "git.cfg").write_text("[include]\n\tpath = more/deeper.cfg ; a comment\n")
    (work / "tools" / "more").mkdir()
    (work / "tools" / "more" / "deeper.cfg").write_text('[include]\n\tpath = "../git.cfg"\n')
    assert git_include_paths(work / ".git" / "config") == [
        (work / "tools" / "git.cfg").resolve(), (work / "tools" / "more" / "deeper.cfg").resolve()]
