"""Issue 17 re-review, finding 12 (LOW): a trusted project's `.vance/config.toml` is hidden from the
tools, as $VANCE_HOME's is.

It may hold `[model] api_key` (README lists it as a project setting); file_read returned it to the
model (and so to its provider), and exec_run could `cat` it (.vance/ is read-only in the sandbox,
not hidden). The project scope's config.toml is now one of the secret paths (tools/paths.py
secret_paths): file_read refuses it, file_list leaves it out, the sandbox shows an empty file.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli
from tests.tools.exec_helpers import bwrap_works

KEY = "sk-project-key-0123456789"


def _trusted_project(tmp_path, fake_openai, recipe_tools=None):
    proj = tmp_path / "proj"
    (proj / ".vance").mkdir(parents=True)
    (proj / ".vance" / "config.toml").write_text(
        f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\napi_key = "{KEY}"\n')
    return proj


def test_a_key_in_the_project_config_is_not_read_by_the_model(fake_openai, tmp_path, vance_home):
    # the reviewer's repro (test_r9_project_config_key_readable.py)
    proj = _trusted_project(tmp_path, fake_openai)
    assert run_cli("trust", str(proj)).returncode == 0
    fake_openai.enqueue(tool_calls=[("file_read", {"path": ".vance/config.toml"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done", "awaiting_user_input": True})])
    run_cli("chat", "-p", "hi", cwd=proj)
    messages = json.dumps(fake_openai.requests[-1]["messages"])
    assert KEY not in messages
    assert "hidden from the tools" in messages


def test_file_list_leaves_the_project_config_out(fake_openai, tmp_path, vance_home):
    proj = _trusted_project(tmp_path, fake_openai)
    (proj / ".vance" / "notes.md").write_text("team notes\n")
    assert run_cli("trust", str(proj)).returncode == 0
    fake_openai.enqueue(tool_calls=[("file_list", {"path": ".vance"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done", "awaiting_user_input": True})])
    run_cli("chat", "-p", "hi", cwd=proj)
    results = [m["content"] for m in fake_openai.requests[-1]["messages"] if m.get("role") == "tool"]
    assert "notes.md" in results[0] and "config.toml" not in results[0], results


@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap does not work here")
def test_a_sandboxed_command_sees_an_empty_project_config(fake_openai, tmp_path, vance_home):
    from tests.cli.test_cli_delegation import own_hub_with_commands

    own_hub_with_commands(vance_home)
    proj = _trusted_project(tmp_path, fake_openai)
    assert run_cli("trust", str(proj)).returncode == 0
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": "cat .vance/config.toml; echo END"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done", "awaiting_user_input": True})])
    r = run_cli("chat", "-p", "hi", "--yes", cwd=proj)
    assert r.returncode == 0, r.stderr
    results = [m["content"] for m in fake_openai.requests[-1]["messages"] if m.get("role") == "tool"]
    assert "END" in results[0] and "sandbox: bubblewrap" in results[0], results
    assert KEY not in json.dumps(fake_openai.requests)
