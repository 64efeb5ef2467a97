"""Issue 19 review M5: a run, a batch or an editor's session never starts in a credential folder.

An MCP client (benjy_run's workspace / criteria), a goals file or an editor (ACP session cwd) picks
these paths, not the person: $VANCE_HOME or ~/.ssh as the workspace, or a criteria file inside them
(its text goes to the model). Refused before any process file is made, through the one service path
(`vance benjy run` here; benjy_run and benjy batch go through BenjyService too).
"""

from __future__ import annotations

from tests.helpers import run_cli


def _no_process_made(vance_home):
    processes = vance_home / "processes"
    return not processes.exists() or not any(processes.glob("*.json"))


def test_vance_home_or_ssh_as_the_workspace_is_refused_before_anything_is_made(vance_home, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    for folder in (vance_home, home / ".ssh"):
        r = run_cli("benjy", "run", "write a file", "--workspace", str(folder), "--check", "true",
                    env={"HOME": str(home), "VANCE_MODEL": "openai/x", "VANCE_API_BASE": "http://127.0.0.1:9"})
        assert r.returncode == 1, r.stdout + r.stderr  # WorkspaceError, as the tools give it
        assert "holds credentials" in r.stderr and "Traceback" not in r.stderr
        assert _no_process_made(vance_home)


def test_a_criteria_file_among_the_credentials_is_refused(vance_home, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    r = run_cli("benjy", "run", "write a file", "--workspace", str(ws), "--criteria", str(home / ".ssh" / "id_ed25519"),
                "--check", "true",
                env={"HOME": str(home), "VANCE_MODEL": "openai/x", "VANCE_API_BASE": "http://127.0.0.1:9"})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "holds credentials" in r.stderr and "OPENSSH" not in r.stdout + r.stderr
    assert _no_process_made(vance_home)
