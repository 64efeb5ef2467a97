"""exec_run's sandbox: what bubblewrap confines, the auto/required/off modes, and life without bwrap."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
from pathlib import Path

import pytest

from tests.tools.exec_helpers import bwrap_works, path_without_bwrap, settings
from vance_cli.tools import exec_run
from vance_cli.tools.base import ToolContext, ToolResult
from vance_cli.tools.registry import builtin_registry

needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed or cannot create namespaces here")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".vance" / "recipes").mkdir(parents=True)
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    return root


async def run(ws: Path, command: str, *, extra: dict | None = None, **env: str) -> ToolResult:
    ctx = ToolContext(workspace=ws, settings=settings(**env), extra=extra or {})
    return await builtin_registry().get("exec_run").invoke(json.dumps({"command": command, "timeout": 20}), ctx)


@pytest.fixture
def no_bwrap(tmp_path, monkeypatch):
    """A PATH with every program but bwrap: the machine as it is without bubblewrap."""
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path / "bin-without-bwrap"))
    assert shutil.which("bwrap") is None


@pytest.fixture
def broken_bwrap(tmp_path, monkeypatch):
    """A bwrap that cannot create namespaces (as in some containers)."""
    folder = tmp_path / "bin-broken-bwrap"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


@pytest.fixture
def listener():
    """A TCP port on 127.0.0.1 that answers 'hello' (to see whether the network is reachable)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    stop = threading.Event()

    def serve():
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.sendall(b"hello\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join()
    srv.close()


# ----------------------------------------------------------------------------- modes without bwrap


async def test_auto_without_bwrap_runs_unconfined_and_says_so(ws: Path, no_bwrap):
    res = await run(ws, "echo ran > ran.txt; echo ok")
    assert res.ok
    assert res.content.splitlines()[0] == (
        "exit code: 0 [no sandbox (bubblewrap (bwrap) is not installed): the command ran with your user's full rights]"
    )
    assert res.data["sandbox"] == "none"
    assert (ws / "ran.txt").read_text() == "ran\n"


async def test_required_without_bwrap_refuses_and_runs_nothing(ws: Path, no_bwrap):
    res = await run(ws, "echo ran > ran.txt", VANCE_SANDBOX="required")
    assert not res.ok
    assert res.content == (
        'ERROR: exec_run refused: exec.sandbox is "required" but bubblewrap (bwrap) is not installed; '
        "the command did not run (the user can install bubblewrap, e.g. `apt-get install bubblewrap`, "
        'or set exec.sandbox = "auto" in config.toml)'
    )
    assert not (ws / "ran.txt").exists()


async def test_a_bwrap_that_cannot_sandbox_counts_as_none(ws: Path, broken_bwrap):
    res = await run(ws, "echo ok")
    assert res.ok and "no sandbox (bwrap: No permissions to creating new namespace)" in res.content
    res = await run(ws, "touch ran.txt", VANCE_SANDBOX="required")
    assert not res.ok and "No permissions" in res.content
    assert not (ws / "ran.txt").exists()


async def test_off_never_uses_bwrap(ws: Path):
    res = await run(ws, "touch .vance/made-by-command", VANCE_SANDBOX="off")
    assert res.ok and 'no sandbox (exec.sandbox is "off")' in res.content
    assert (ws / ".vance" / "made-by-command").exists()  # unconfined: nothing stops it


# ----------------------------------------------------------------------------- inside bwrap


@needs_bwrap
async def test_the_workspace_is_writable_its_control_folders_are_not(ws: Path):
    res = await run(
        ws,
        "echo a > a.txt && mkdir -p src && echo b > src/b.txt && echo ok-ws; "
        "echo x > .vance/recipes/arthur.yaml || echo vance-refused; "
        "echo x > .git/hooks/pre-commit || echo hook-refused; "
        "echo x >> .git/config || echo config-refused; "
        "echo obj > .git/packed-refs && echo git-data-ok",
    )
    out = res.content
    assert "ok-ws" in out and "vance-refused" in out and "hook-refused" in out and "config-refused" in out
    assert "git-data-ok" in out  # commits still work: only hooks and config are read-only
    assert (ws / "src" / "b.txt").read_text() == "b\n"
    assert not (ws / ".vance" / "recipes" / "arthur.yaml").exists()
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert (ws / ".git" / "config").read_text() == "[core]\n"


@needs_bwrap
async def test_outside_the_workspace_is_read_only_and_tmp_is_private(ws: Path):
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    if base is None:
        pytest.skip("no writable folder outside /tmp")
    outside = Path(tempfile.mkdtemp(dir=base, prefix="vance-sandbox-test-"))
    try:
        (outside / "readable.txt").write_text("visible\n")
        res = await run(
            ws,
            f"cat {outside}/readable.txt; touch {outside}/escaped || echo outside-refused; "
            "echo t > /tmp/private && cat /tmp/private",
        )
        assert "visible" in res.content and "outside-refused" in res.content
        assert not (outside / "escaped").exists()
        assert "t\n" in res.content
        assert not Path("/tmp/private").exists()
    finally:
        shutil.rmtree(outside)


@needs_bwrap
async def test_vance_home_and_credential_files_are_hidden(ws: Path, monkeypatch):
    # Outside /tmp: inside the sandbox /tmp is a fresh tmpfs, which would hide them anyway.
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    if base is None:
        pytest.skip("no writable folder outside /tmp")
    home = Path(tempfile.mkdtemp(dir=base, prefix="vance-sandbox-home-"))
    try:
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
        (home / ".netrc").write_text("machine x password hunter2\n")
        (home / ".gitconfig").write_text("[user]\nname = me\n")
        (home / ".vance").mkdir()
        (home / ".vance" / "config.toml").write_text('[model]\napi_key = "sk-in-config"\n')
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("VANCE_HOME", str(home / ".vance"))
        res = await run(ws, f"cat {home}/.ssh/id_ed25519 {home}/.netrc {home}/.vance/config.toml {home}/.gitconfig 2>&1")
        assert "PRIVATE KEY" not in res.content and "hunter2" not in res.content
        assert "sk-in-config" not in res.content
        assert "name = me" in res.content  # the rest of $HOME stays readable
    finally:
        shutil.rmtree(home)


def test_hidden_paths_that_hold_the_workspace_or_do_not_exist_are_left_alone(tmp_path: Path):
    ws = tmp_path / "inside-home" / "ws"
    ws.mkdir(parents=True)
    argv = exec_run._bwrap_argv("bwrap", ws, ws, False, [tmp_path / "inside-home", tmp_path / "missing"])
    assert str(tmp_path / "inside-home") not in argv[argv.index(str(ws)) + 2 :]
    assert str(tmp_path / "missing") not in argv


@needs_bwrap
async def test_network_is_off_unless_allowed(ws: Path, listener: int, vance_home):
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && head -1 <&3 || echo no-network"
    res = await run(ws, probe)
    assert "no-network" in res.content and "hello" not in res.content
    assert res.data["network"] is False

    res = await run(ws, probe, extra={"recipe_exec": {"network": True}})
    assert "hello" in res.content and "network on" in res.content.splitlines()[0]

    (vance_home / "config.toml").write_text("[exec]\nnetwork = true\n")
    res = await run(ws, probe)
    assert "hello" in res.content and res.data["network"] is True


@needs_bwrap
async def test_the_command_sees_no_parent_processes(ws: Path):
    res = await run(ws, "ls /proc | grep -c '^[0-9]'; echo ppid=$PPID")
    count = int(res.content.splitlines()[1])
    assert count <= 4  # bwrap's init, bash, ls, grep
    assert "ppid=1" in res.content


@needs_bwrap
async def test_programs_in_a_tmp_folder_on_path_stay_runnable_in_the_sandbox(ws: Path, tmp_path, monkeypatch):
    """/tmp is private in the sandbox, but a venv or tool folder under /tmp (a CI clone) still runs."""
    tools = Path(tempfile.mkdtemp(prefix="vance-tools-", dir="/tmp"))
    try:
        tool = tools / "say-hi"
        tool.write_text("#!/bin/sh\necho hi from a tmp tool\n")
        tool.chmod(0o755)
        (tools / "secret.txt").write_text("x")
        monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
        res = await run(ws, "say-hi && ls /tmp")
        assert res.ok and "sandbox" in res.content.splitlines()[0], res.content
        assert "hi from a tmp tool" in res.content
        res = await run(ws, f"echo changed > {tools}/secret.txt")
        assert not res.ok or (tools / "secret.txt").read_text() == "x"  # read-only inside
        assert (tools / "secret.txt").read_text() == "x"
    finally:
        shutil.rmtree(tools)
