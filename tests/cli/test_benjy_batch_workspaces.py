"""`vance benjy batch`: each run's workspace (a git worktree of the source's last commit, or a copy)."""

from __future__ import annotations

import subprocess

from tests.cli.test_benjy_batch import CHECK, env, roots, src, write_goals  # noqa: F401 (fixtures)
from tests.helpers import run_cli


def git(folder, *args):
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True).stdout


def commit(folder):
    git(folder, "init", "-q")
    git(folder, "add", ".")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")


def test_an_untracked_folder_of_a_repository_is_copied_and_the_approval_says_so(env, src, tmp_path, vance_home):
    commit(src)
    sub = src / "newdir"
    sub.mkdir()
    (sub / "check.py").write_text((src / "check.py").read_text())  # not committed
    goals = write_goals(tmp_path, [{"id": "b", "goal": "write one item file", "workspace": str(sub)},
                                   {"id": "c", "goal": "write one item file", "workspace": str(src)}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "--yes", env=env)
    assert r.returncode == 0, r.stderr  # its worktree would have no such folder: a copy of it works
    assert "--target" not in r.stderr  # benjy run's hint; batch has no --target
    assert f"source    {sub} (each run in its own copy of it)" in r.stderr
    sha = git(src, "rev-parse", "--short", "HEAD").strip()
    assert f"source    {src} (each run in its own git worktree of {src}'s last commit, {sha}; uncommitted changes left out)" in r.stderr
    (ws,) = vance_home.glob("batches/*/runs/b")
    assert (ws / "item1.txt").read_text() == "item 1\n" and (ws / "check.py").is_file()
    assert "b: run " in r.stderr and "(copy)" in r.stderr and "(worktree)" in r.stderr


def test_a_goal_never_removes_the_workspace_of_a_goal_named_like_its_temporary_copy(env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path, [{"id": "a.partial", "goal": "write one item file"}, {"id": "a", "goal": "write one item file"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--jobs", "1", env=env)
    (runs,) = vance_home.glob("batches/*/runs")
    assert (runs / "a.partial").is_dir(), "goal a's copy removed goal a.partial's workspace (its '.partial' temp name)"
    assert r.returncode == 0, r.stdout
    assert sorted(p.name for p in runs.iterdir()) == ["a", "a.partial"]  # no temporary copy left either


def test_a_worktree_git_still_lists_after_its_folder_was_deleted_is_pruned_and_made_again(env, src, tmp_path, vance_home):
    import shutil

    commit(src)
    (src / "dirty.txt").write_text("uncommitted\n")
    goals = write_goals(tmp_path, [{"id": "a", "goal": "write one item file"}])
    args = ("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes")
    assert run_cli(*args, env=env).returncode == 0
    shutil.rmtree(vance_home / "batches")  # the person starts the batch afresh
    r = run_cli(*args, env=env)
    assert r.returncode == 0, r.stderr
    (ws,) = vance_home.glob("batches/*/runs/a")
    assert "(worktree)" in r.stderr, "fell back to a copy without saying why"
    assert not (ws / ".git").is_dir() and not (ws / "dirty.txt").exists()
    assert git(src, "worktree", "list").count(str(ws)) == 1


def test_when_git_cannot_make_the_worktree_the_batch_says_why_and_copies_without_git_s_folder(env, src, tmp_path, vance_home):
    import shutil

    commit(src)
    goals = write_goals(tmp_path, [{"id": "a", "goal": "write one item file"}])
    args = ("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes")
    assert run_cli(*args, env=env).returncode == 0
    (ws,) = vance_home.glob("batches/*/runs/a")
    git(src, "worktree", "lock", str(ws))  # a locked worktree is not pruned: git refuses the same path
    shutil.rmtree(vance_home / "batches")
    r = run_cli(*args, env=env)
    assert r.returncode == 0, r.stderr
    assert f"warning: git could not make a worktree of {src} at {ws}" in r.stderr and "locked" in r.stderr, r.stderr
    assert "(copy)" in r.stderr and (ws / "check.py").is_file()
    assert not (ws / ".git").exists()  # never git's folder (hooks, config) in a copy


def test_in_a_project_the_batch_lives_in_the_user_state_folder_not_in_the_persons_repository(env, src, tmp_path, vance_home):
    (src / ".vance").mkdir()
    (src / ".vance" / "README").write_text("project scope\n")
    commit(src)
    goals = write_goals(tmp_path, [{"id": "a", "goal": "write one item file"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", ".", "--yes", env=env, cwd=src)
    assert r.returncode == 0, r.stderr
    assert "uncommitted changes" not in r.stderr, "a clean repository is called dirty (Vance's own files)"
    assert ".vance/batches" not in git(src, "status", "--porcelain"), "a worktree of the repository is made inside it"
    (ws,) = vance_home.glob("batches/*/runs/a")
    assert (ws / "item1.txt").read_text() == "item 1\n" and not (src / ".vance" / "batches").exists()


def test_making_a_worktree_runs_neither_the_sources_hooks_nor_its_fsmonitor(env, src, tmp_path, vance_home):
    commit(src)
    marker = tmp_path / "FSMONITOR_RAN"
    hook = tmp_path / "fsmon.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    git(src, "config", "core.fsmonitor", str(hook))  # planted in .git/config (a repository from a tarball)
    (src / ".git" / "hooks" / "post-checkout").write_text(f"#!/bin/sh\ntouch {tmp_path / 'HOOK_RAN'}\n")
    (src / ".git" / "hooks" / "post-checkout").chmod(0o755)
    (src / "notes.txt").write_text("not committed\n")  # the dirty check runs git status
    goals = write_goals(tmp_path, [{"id": "a", "goal": "write one item file"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert r.returncode == 0, r.stderr
    assert "(worktree)" in r.stderr and "uncommitted changes" in r.stderr
    assert not (tmp_path / "HOOK_RAN").exists()  # hooks are off
    assert not marker.exists(), "git status ran core.fsmonitor from the source's .git/config"


def test_a_dirty_repository_is_said_once_for_the_whole_batch_with_its_commit(env, src, tmp_path, vance_home):
    commit(src)
    sha = git(src, "rev-parse", "--short", "HEAD").strip()
    (src / "notes.txt").write_text("not committed\n")
    goals = write_goals(tmp_path, [{"id": f"g{i}", "goal": "write one item file"} for i in range(3)])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("has uncommitted changes or untracked files") == 1, r.stderr
    assert f"source    {src} (each run in its own git worktree of {src}'s last commit, {sha}; uncommitted changes left out)" in r.stderr


def test_ids_that_differ_only_in_case_are_refused(env, tmp_path, vance_home):
    goals = write_goals(tmp_path, [{"id": "Fix", "goal": "g"}, {"id": "fix", "goal": "h"}])
    r = run_cli("benjy", "batch", str(goals), "--yes", env=env)
    assert r.returncode == 2 and "goals.jsonl line 2: id 'fix' is also on line 1 ('Fix')" in r.stderr, r.stderr
    assert "differ only in case" in r.stderr and list(vance_home.glob("batches/*/runs")) == []
