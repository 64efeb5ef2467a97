"""Issue 17 re-review, finding 11 (LOW): a link inside the project no longer pulls the work tree into
the trust digest.

A shipped `.vance/z -> ..` made `vance trust` and every later command hash the whole project (every
byte of every file), and any file written anywhere turned the folder CHANGED. The digest covers what
the loaders read: a link in `config.toml`, `recipes/` or `schemas/` is followed when it stays inside
the project and does not lead to the project folder itself (that is refused, as a link out is); any
other link in `.vance/` counts by its target path and is never followed.
"""

from __future__ import annotations

import os

from tests.helpers import run_cli
from vance_cli.config import trust


def test_a_link_to_the_project_root_does_not_put_the_work_tree_in_the_digest(tmp_path, vance_home):
    # the reviewer's repro (test_r5_inside_link_follows_the_whole_project.py)
    clone = tmp_path / "clone"
    (clone / ".vance").mkdir(parents=True)
    (clone / ".vance" / "config.toml").write_text("[model]\ntimeout = 30\n")
    os.symlink("..", clone / ".vance" / "z")
    (clone / "README.md").write_text("hello\n")
    assert run_cli("trust", str(clone)).returncode == 0
    (clone / "notes.txt").write_text("a file the model wrote in the workspace\n")
    listed = run_cli("trust", "--list")
    assert "changed" not in listed.stdout, listed.stdout


def test_a_link_nobody_reads_counts_by_its_target_only(tmp_path):
    proj = tmp_path / "p"
    (proj / ".vance").mkdir(parents=True)
    (proj / "src").mkdir()
    os.symlink("../src", proj / ".vance" / "z")
    before = trust.project_digest(proj / ".vance")
    (proj / "src" / "main.py").write_text("print(1)\n")
    assert trust.project_digest(proj / ".vance") == before
    (proj / ".vance" / "z").unlink()
    os.symlink("../other", proj / ".vance" / "z")
    assert trust.project_digest(proj / ".vance") != before  # the target path counts


def test_a_loaded_link_to_the_project_root_is_refused(tmp_path, vance_home):
    """`.vance/recipes -> ..` would make the project's own *.yaml files recipes: not followed, so
    not in the digest, so never trusted."""
    proj = tmp_path / "p"
    (proj / ".vance").mkdir(parents=True)
    os.symlink("..", proj / ".vance" / "recipes")
    (proj / "worker.yaml").write_text("name: worker\nengine: ford\n")
    r = run_cli("trust", str(proj))
    assert r.returncode != 0 and "symlink out of the project" in r.stderr and "internal error" not in r.stderr, r.stderr
    assert trust.links_out(proj / ".vance") == ["recipes"]
