"""Issue 17: what a hostile model gets through exec_run and the file tools, shown through `vance chat`.

The person's own hub recipe (user scope) grants exec_run; the local test server plays the model
and records every tool result that went back to it. Sandbox cases run where bubblewrap works, as
root too (this machine and CI are root): root inside must be powerless. Folders that must be
outside the sandbox's private /tmp (to be visible at all) live under /var/tmp.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.cli.test_cli_delegation import own_hub_with_commands
from tests.helpers import run_cli
from tests.tools.exec_helpers import bwrap_works

KEY = "sk-secret-in-config-0123"
needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap does not work here")


def _script(server, *calls) -> None:
    for name, args in calls:
        server.enqueue(tool_calls=[(name, args)])
    server.enqueue(tool_calls=[("respond", {"message": "done", "awaiting_user_input": True})])


def _tool_results(server) -> list[str]:
    last = server.requests[-1]["messages"]
    return [m["content"] for m in last if m.get("role") == "tool"]


@pytest.fixture
def outside_tmp(monkeypatch, fake_openai):
    """A VANCE_HOME (with the API key in config.toml) and a work folder outside /tmp."""
    base = Path(tempfile.mkdtemp(prefix="vance-hostile-", dir="/var/tmp")).resolve()
    home = base / "vance-home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\napi_key = "{KEY}"\n'
    )
    own_hub_with_commands(home)
    monkeypatch.setenv("VANCE_HOME", str(home))
    work = base / "work"
    work.mkdir()
    yield home, work
    shutil.rmtree(base, ignore_errors=True)


def _chat(cwd: Path, env: dict | None = None):
    r = run_cli("chat", "-p", "help", "--yes", cwd=cwd, env=env or {})
    assert r.returncode == 0, r.stderr
    return r


@needs_bwrap
def test_root_inside_the_sandbox_cannot_lift_its_mounts(fake_openai, outside_tmp):
    home, work = outside_tmp
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    command = (
        f"umount {home} 2>&1; cat {home}/config.toml 2>&1; "
        "mount -o remount,rw / 2>&1 && echo REMOUNTED; "
        "umount .git/hooks 2>&1; echo planted > .git/hooks/pre-commit 2>&1; id -u"
    )
    _script(fake_openai, ("exec_run", {"command": command}))
    _chat(work)
    result = _tool_results(fake_openai)[0]
    assert "sandbox: bubblewrap" in result
    assert KEY not in json.dumps(fake_openai.requests)
    assert "REMOUNTED" not in result
    assert not (work / ".git" / "hooks" / "pre-commit").exists()


@needs_bwrap
def test_a_target_workspace_in_vance_home_does_not_expose_the_key(fake_openai, outside_tmp):
    home, _work = outside_tmp
    target = home / "workspaces" / "foo"  # where `benjy run --target foo` works without a project
    target.mkdir(parents=True)
    _script(fake_openai, ("exec_run", {"command": f"cat {home}/config.toml; ls {home}; echo hi > here.txt"}))
    _chat(target)
    assert KEY not in json.dumps(fake_openai.requests)
    assert (target / "here.txt").read_text() == "hi\n"  # the workspace itself stays writable


def test_a_target_workspace_does_not_untrust_the_project(tmp_path):
    proj = tmp_path / "work"
    (proj / ".vance").mkdir()
    (proj / ".vance" / "config.toml").write_text("[exec]\nnetwork = false\n")
    assert run_cli("trust", cwd=proj).returncode == 0
    (proj / ".vance" / "workspaces" / "foo").mkdir(parents=True)
    (proj / ".vance" / "workspaces" / "foo" / "made.txt").write_text("a worker wrote this")
    listed = run_cli("trust", "--list", cwd=proj)
    assert "changed" not in listed.stdout and "trusted" in listed.stdout, listed.stdout


def test_the_file_tools_do_not_read_the_persons_secrets(fake_openai, tmp_path):
    """A chat started in the home folder: the file tools hide what the sandbox hides."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-SSH-KEY")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("AWS-SECRET")
    vhome = home / ".vance"
    vhome.mkdir()
    (vhome / "config.toml").write_text(
        f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\napi_key = "{KEY}"\n'
    )
    _script(
        fake_openai,
        ("file_read", {"path": ".ssh/id_ed25519"}),
        ("file_read", {"path": f"{home}/.aws/credentials"}),
        ("file_read", {"path": ".vance/config.toml"}),
        ("file_list", {"path": ".ssh"}),
    )
    _chat(home, env={"HOME": str(home), "VANCE_HOME": str(vhome)})
    sent = json.dumps(fake_openai.requests)
    assert "PRIVATE-SSH-KEY" not in sent and "AWS-SECRET" not in sent and KEY not in sent
    assert all("is hidden from the tools" in r for r in _tool_results(fake_openai))


def test_file_write_cannot_plant_a_hook_in_core_hooks_path(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text('[core]\n\trepositoryformatversion = 0\n\thooksPath = "tools/hooks"\n')
    (work / "tools" / "hooks").mkdir(parents=True)
    (vance_home / "config.toml").write_text(f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\n')
    _script(fake_openai, ("file_write", {"path": "tools/hooks/pre-commit", "content": "#!/bin/sh\nid > pwned\n"}))
    r = run_cli("chat", "-p", "help", "--yes", "--recipe", "coding", cwd=work)
    assert r.returncode == 0, r.stderr
    assert not (work / "tools" / "hooks" / "pre-commit").exists()
    assert "core.hooksPath" in _tool_results(fake_openai)[0]


def test_a_git_created_by_a_command_is_moved_aside(fake_openai, vance_home, tmp_path):
    work = tmp_path / "work"
    own_hub_with_commands(vance_home)
    (vance_home / "config.toml").write_text(f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\n')
    plant = "mkdir -p .git/hooks && printf '[core]\\n\\tfsmonitor = id > pwned\\n' > .git/config && echo ok"
    _script(fake_openai, ("exec_run", {"command": plant}))
    _chat(work)
    assert not (work / ".git").exists()
    assert (work / ".git-made-by-a-command" / "config").is_file()
    assert "moved to .git-made-by-a-command" in _tool_results(fake_openai)[0]


@needs_bwrap
def test_a_command_cannot_swap_git_or_write_hooks_path(fake_openai, outside_tmp):
    home, work = outside_tmp
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n\thooksPath = .githooks\n")
    (work / ".githooks").mkdir()
    command = (
        "mv .git .git-old 2>&1; mkdir -p .git/hooks; echo planted > .git/hooks/pre-commit 2>&1; "
        "echo planted > .githooks/pre-commit 2>&1; true"
    )
    _script(fake_openai, ("exec_run", {"command": command}))
    _chat(work)
    assert (work / ".git" / "config").read_text() == "[core]\n\thooksPath = .githooks\n"
    assert not (work / ".git-old").exists()
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert not (work / ".githooks" / "pre-commit").exists()
