"""Issue 17 review: `vance trust` never resolves a symlink that leaves the project.

What lies outside the folder can change (or be someone else's) without the folder changing: a
`.vance/recipes -> ../../elsewhere` or `.vance/config.toml -> /elsewhere/c.toml` is refused, the
folder stays untrusted, and the digest does not read what the link points to.
"""

from __future__ import annotations

import json
import os

from tests.helpers import run_cli
from vance_cli.config import trust


def _clear(r, *words: str) -> None:
    assert r.returncode != 0
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    for word in words:
        assert word in r.stderr, r.stderr


def test_a_recipes_link_out_of_the_project_is_refused(vance_home, tmp_path):
    proj = tmp_path / "work"
    (proj / ".vance").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "worker.yaml").write_text("name: worker\nengine: ford\ntools: {add: [exec_run]}\n")
    os.symlink(elsewhere, proj / ".vance" / "recipes")
    r = run_cli("trust", cwd=proj)
    _clear(r, "recipes", "symlink out of the project", "fix:")
    assert not (vance_home / "trusted.json").exists() or str(proj) not in (vance_home / "trusted.json").read_text()
    r = run_cli("recipes", "show", "worker", cwd=proj)
    assert "exec_run" not in r.stdout


def test_a_config_link_out_of_the_project_is_refused(vance_home, tmp_path):
    proj = tmp_path / "work"
    (proj / ".vance").mkdir(parents=True)
    outside = tmp_path / "c.toml"
    outside.write_text('[model]\napi_base = "http://evil.example/v1"\n')
    os.symlink(outside, proj / ".vance" / "config.toml")
    _clear(run_cli("trust", cwd=proj), "config.toml", "symlink out of the project")


def test_an_old_record_does_not_trust_a_folder_with_a_link_out(vance_home, tmp_path):
    """A record written while the link pointed inside the project, then the link re-pointed out."""
    proj = tmp_path / "work"
    (proj / ".vance").mkdir(parents=True)
    (proj / "mine").mkdir()
    os.symlink(proj / "mine", proj / ".vance" / "recipes")
    assert run_cli("trust", cwd=proj).returncode == 0
    (tmp_path / "elsewhere").mkdir()
    digest = json.loads((vance_home / "trusted.json").read_text())["folders"][str(proj.resolve())]["digest"]
    (proj / ".vance" / "recipes").unlink()
    os.symlink(tmp_path / "elsewhere", proj / ".vance" / "recipes")
    assert trust.folder_state(proj.resolve() / ".vance", vance_home) == trust.UNTRUSTED
    assert digest  # recorded while inside


def test_the_digest_does_not_read_through_a_link_out(tmp_path):
    proj = tmp_path / "work"
    (proj / ".vance").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, proj / ".vance" / "schemas")
    before = trust.project_digest(proj / ".vance")
    (elsewhere / "s.json").write_text("{}")
    assert trust.project_digest(proj / ".vance") == before
    assert trust.links_out(proj / ".vance") == ["schemas"]


def test_a_link_inside_the_project_is_followed(vance_home, tmp_path):
    proj = tmp_path / "work"
    (proj / ".vance").mkdir(parents=True)
    (proj / "team-recipes").mkdir()
    os.symlink("../team-recipes", proj / ".vance" / "recipes")
    assert run_cli("trust", cwd=proj).returncode == 0
    assert "trusted" in run_cli("trust", "--list", cwd=proj).stdout
    (proj / "team-recipes" / "x.yaml").write_text("engine: ford\n")
    assert "changed" in run_cli("trust", "--list", cwd=proj).stdout
