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
    assert f"source    {src} (each run in its own git worktree of {src}'s last commit)" in r.stderr
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
