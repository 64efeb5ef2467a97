"""The MCP client over streamable HTTP: the toy server served by the SDK (uvicorn, starlette: what
`mcp` itself depends on) on 127.0.0.1, configured as ``[mcp.servers.NAME] url = ...`` with a header,
used through the real CLI: `vance mcp list` starts it and lists its tools, and a chat's model calls
them (tests/fakeserver.py plays the model)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import run_cli

pytest.importorskip("mcp")

TOY = str(Path(__file__).with_name("toy_server.py"))
RECIPE = "engine: ford\ntools:\n  allowed: [respond]\n  add: ['mcp:web/*']\nsystemPrompt: use tools\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def toy_url(tmp_path):
    """The toy server over streamable HTTP; its URL once it accepts connections."""
    port = _free_port()
    log = (tmp_path / "toy-http.log").open("w")
    proc = subprocess.Popen([sys.executable, TOY, "--http", str(port)], stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, (tmp_path / "toy-http.log").read_text()
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the toy server did not listen within 30 s")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


def test_a_streamable_http_server_is_listed_and_its_tools_reach_the_model(fake_openai, vance_home, toy_url):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "mcpr.yaml").write_text(RECIPE)
    (vance_home / "config.toml").write_text(
        f'[mcp.servers.web]\nurl = "{toy_url}"\nheaders = {{ Authorization = "Bearer s3cret" }}\ntimeout = 10\n'
        "trust_read_only = true\n"
    )
    listed = run_cli("mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert f"web (user, http): {toy_url}" in listed.stdout
    assert "mcp__web__lookup (read-only)" in listed.stdout and "mcp__web__note" in listed.stdout

    fake_openai.enqueue(tool_calls=[("mcp__web__lookup", {"country": "France"})])
    fake_openai.enqueue(tool_calls=[("mcp__web__header", {"name": "Authorization"})])
    fake_openai.enqueue(tool_calls=[("mcp__web__stats", {"values": [2, 3]})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "Paris, and I was let in"})])
    env = {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}
    r = run_cli("chat", "--recipe", "mcpr", "-p", "capital of France?", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Paris, and I was let in")
    results = [m["content"] for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0] == "Paris"
    assert results[1] == "Bearer s3cret"  # the configured header went with the call
    assert '"count": 2' in results[2] and '"sum": 5' in results[2]
