"""Issue 17 re-review, finding 2 (MED): a `.vance` that is a symlink to a trusted project's `.vance`
does not inherit that project's trust.

Trust is keyed by the folder that holds the `.vance` entry (config/scopes.py find_project no longer
resolves the entry to its target's folder), and a `.vance` that leads out of its folder is a link out
of the project: `vance trust` refuses it, as it refuses `.vance/recipes -> elsewhere`.
"""

from __future__ import annotations

import os

from tests.helpers import run_cli, write_script
from vance_cli.config import trust
from vance_cli.config.scopes import Scopes

RESPOND = {"tool_calls": [{"name": "respond", "arguments": {"message": "driven by the trusted folder's brain", "awaiting_user_input": True}}]}


def _mine_and_clone(tmp_path):
    mine = tmp_path / "src" / "myproject"
    (mine / ".vance").mkdir(parents=True)
    brain = write_script(mine / "brain.json", [RESPOND] * 3)
    (mine / ".vance" / "config.toml").write_text(f'[model]\ndefault = "{brain}"\n')
    assert run_cli("trust", str(mine)).returncode == 0
    clone = tmp_path / "src" / "clone"
    clone.mkdir()
    os.symlink("../myproject/.vance", clone / ".vance")  # shipped in the repository
    return mine, clone


def test_a_vance_symlink_to_a_trusted_project_is_not_trusted(tmp_path, vance_home):
    # the reviewer's repro (test_r5_vance_dir_symlink_inherits_trust.py)
    _mine, clone = _mine_and_clone(tmp_path)
    r = run_cli("chat", "-p", "hi", cwd=clone)
    # The clone was never trusted: its (borrowed) model.default must be ignored with the notice.
    assert "driven by the trusted folder's brain" not in r.stdout, (r.stdout, r.stderr)
    assert "is not trusted" in r.stderr, r.stderr
    assert f"{clone}/.vance is not trusted" in r.stderr, r.stderr  # named by the folder holding the link


def test_the_project_scope_is_the_folder_holding_the_link(tmp_path, vance_home):
    mine, clone = _mine_and_clone(tmp_path)
    scopes = Scopes.discover(cwd=clone)
    assert scopes.project == clone.resolve() / ".vance"
    assert trust.state(scopes) == trust.UNTRUSTED
    assert trust.state(Scopes.discover(cwd=mine)) == trust.TRUSTED  # the real folder keeps its trust


def test_trusting_a_vance_link_out_of_the_folder_is_refused(tmp_path, vance_home):
    _mine, clone = _mine_and_clone(tmp_path)
    r = run_cli("trust", cwd=clone)
    assert r.returncode != 0 and "internal error" not in r.stderr
    assert "symlink out of the project" in r.stderr and "fix:" in r.stderr, r.stderr
    assert str(clone.resolve()) not in (vance_home / "trusted.json").read_text()
    assert trust.folder_state(clone.resolve() / ".vance", vance_home) == trust.UNTRUSTED


def test_trust_given_the_vance_link_itself_names_the_folder_holding_it(tmp_path, vance_home):
    _mine, clone = _mine_and_clone(tmp_path)
    r = run_cli("trust", str(clone / ".vance"))
    assert r.returncode != 0 and "symlink out of the project" in r.stderr, r.stderr
