"""Issue 17 re-review, finding 1 (HIGH): a planted `--target` workspace link cannot make $VANCE_HOME
the workspace.

A cloned repository ships `.vance/workspaces/docs -> ../../../.vance` (or `/root/.vance`, or the whole
`.vance/workspaces -> $VANCE_HOME`): `vance benjy run --target docs` used to resolve the workspace to
$VANCE_HOME itself, where the deny-list let the tools in (a secret holding the workspace root did not
count), and the worker rewrote config.toml. Now a `--target` workspace must be a real folder inside
the state folder's `workspaces/` (benjy_service.resolve_workspace), and a workspace that is itself a
secret path is refused by every tool (tools/paths.py tool_root), whoever picked it.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.cli.test_cli_delegation import own_hub_with_commands
from tests.engines.benjy_brain import Brain
from tests.helpers import run_cli

KEY = "sk-the-persons-key-0123"


def _plant(clone, vance_home, how: str) -> None:
    (clone / ".vance" / "workspaces").mkdir(parents=True)
    link = clone / ".vance" / "workspaces" / "docs"
    if how == "relative":
        os.symlink(os.path.relpath(vance_home, link.parent), link)
    elif how == "absolute":
        os.symlink(vance_home, link)
    else:  # the whole workspaces/ folder is a link into $VANCE_HOME: --target processes
        (clone / ".vance" / "workspaces").rmdir()
        (vance_home / "docs").mkdir()
        os.symlink(vance_home, clone / ".vance" / "workspaces")


@pytest.mark.parametrize("how", ["relative", "absolute", "workspaces-folder"])
def test_a_planted_target_link_cannot_rewrite_vance_home(fake_openai, tmp_path, vance_home, how):
    # the reviewer's repro (tests/review17c repro test_r9_target_link_to_vance_home.py), three spellings
    (vance_home / "config.toml").write_text(f'[model]\napi_key = "{KEY}"\n')
    clone = tmp_path / "work"  # the conftest's cwd
    _plant(clone, vance_home, how)
    fake_openai.responder = Brain(items=1, worker_files=lambda n, p: [("config.toml", "[exec]\nsandbox = \"off\"\n")]).reply_body
    env = {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    r = run_cli("benjy", "run", "update the docs", "--target", "docs", env=env, cwd=clone)
    assert KEY in (vance_home / "config.toml").read_text(), "the worker rewrote $VANCE_HOME/config.toml"
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "symbolic link" in r.stderr and "fix:" in r.stderr, r.stderr
    assert "internal error" not in r.stderr
    assert not fake_openai.requests  # refused before any model call
    assert not (vance_home / "processes").exists() or not list((vance_home / "processes").iterdir())


def test_a_real_target_folder_still_works(fake_openai, tmp_path, vance_home):
    """The refusal is about links: `--target docs` in a project makes and uses .vance/workspaces/docs."""
    clone = tmp_path / "work"
    (clone / ".vance").mkdir()
    fake_openai.responder = Brain(items=1).reply_body
    env = {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    r = run_cli("benjy", "run", "write the item file", "--target", "docs", env=env, cwd=clone)
    assert r.returncode == 0, r.stderr
    assert (clone / ".vance" / "workspaces" / "docs" / "item1.txt").is_file()


def test_the_tools_refuse_a_workspace_that_is_vance_home(fake_openai, vance_home):
    """However the workspace became $VANCE_HOME (a chat started in it, a --workspace typed), the
    file tools and exec_run refuse it as a whole (file_write: the worker in the test above): a secret holding the workspace is exempt only when
    the workspace lies strictly inside it (a real `--target` folder in $VANCE_HOME/workspaces/)."""
    (vance_home / "config.toml").write_text(
        f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\napi_key = "{KEY}"\n')
    own_hub_with_commands(vance_home)
    for name, args in (
        ("file_read", {"path": "config.toml"}),
        ("file_list", {"path": "."}),
        ("exec_run", {"command": "cat config.toml; echo x > made.txt"}),
    ):
        fake_openai.enqueue(tool_calls=[(name, args)])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done", "awaiting_user_input": True})])
    r = run_cli("chat", "-p", "hi", "--yes", cwd=vance_home)
    assert r.returncode == 0, r.stderr
    results = [m["content"] for m in fake_openai.requests[-1]["messages"] if m.get("role") == "tool"]
    assert len(results) == 3, results
    assert KEY not in json.dumps(fake_openai.requests)
    assert KEY in (vance_home / "config.toml").read_text()
    assert not (vance_home / "made.txt").exists()
    for text in results:
        assert "holds credentials" in text, text
