"""A misbehaving MCP server (tests/mcp/hostile_server.py) through the real CLI (chat -p): a turn
always ends with an answer, and the person's rules apply (the review of issue 19)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import run_cli, subprocess_env

HOSTILE = str(Path(__file__).with_name("hostile_server.py"))
RECIPE = "engine: ford\ntools:\n  allowed: [respond]\n  add: ['mcp:h/*']\nsystemPrompt: use tools\n"


def server_block(extra: str = "") -> str:
    return f'[mcp.servers.h]\ncommand = "{sys.executable}"\nargs = ["{HOSTILE}"]\ntimeout = 20\n{extra}'


@pytest.fixture
def env(fake_openai, vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "hr.yaml").write_text(RECIPE)
    (vance_home / "config.toml").write_text(server_block())
    return {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}


def _tool_results(server) -> list[str]:
    return [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("tool", ["badtype", "remote"])
def test_a_call_of_a_tool_with_a_bad_schema_is_answered_and_the_chat_goes_on(tool, fake_openai, env):
    fake_openai.enqueue(tool_calls=[(f"mcp__h__{tool}", {"x": 1})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    r = run_cli("chat", "--recipe", "hr", "-p", "go", env=env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.startswith("done")
    offered = {t["function"]["name"] for t in fake_openai.requests[0]["tools"]}
    assert f"mcp__h__{tool}" not in offered and "mcp__h__deep" in offered
    assert f"mcp:h/{tool} left out" in r.stderr  # the warning, on stderr as the journal's
    (result,) = _tool_results(fake_openai)
    assert result.startswith("ERROR:")
    fake_openai.enqueue(tool_calls=[("respond", {"message": "again"})])
    again = run_cli("chat", "--continue", "-p", "again", env=env)
    assert again.returncode == 0 and again.stdout.startswith("again"), again.stderr
    assert _tool_results(fake_openai)[0] == result  # the same chat went on


@pytest.mark.parametrize("trusted", [False, True])
def test_a_deny_rule_stops_a_tool_that_claims_read_only(trusted, fake_openai, env, vance_home):
    (vance_home / "config.toml").write_text(
        '[permissions]\ndeny = ["mcp__h__liar"]\n' + server_block("trust_read_only = true\n" if trusted else "")
    )
    fake_openai.enqueue(tool_calls=[("mcp__h__liar", {})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    r = run_cli("chat", "--recipe", "hr", "-p", "go", env=env)
    assert r.returncode == 0, r.stderr
    assert not Path("notes.txt").exists()  # the liar writes it; the rule must stop it
    (result,) = _tool_results(fake_openai)[:1]
    assert result.startswith("DENIED") and "mcp__h__liar" in result


def test_a_read_only_claim_is_not_trusted_unless_the_config_says_so(fake_openai, env, vance_home):
    fake_openai.enqueue(tool_calls=[("mcp__h__liar", {})])
    r = run_cli("chat", "--recipe", "hr", "-p", "go", env=env)
    assert r.returncode == 10 and "needs your approval: mcp__h__liar" in r.stderr, r.stderr
    assert not Path("notes.txt").exists()
    # trusted: it runs unasked (its claim), unless an ask rule says otherwise
    (vance_home / "config.toml").write_text('[permissions]\nask = ["mcp__h__liar"]\n' + server_block("trust_read_only = true\n"))
    fake_openai.enqueue(tool_calls=[("mcp__h__liar", {})])
    r = run_cli("chat", "--recipe", "hr", "-p", "go", env=env)
    assert r.returncode == 10 and "needs your approval: mcp__h__liar" in r.stderr, r.stderr
    (vance_home / "config.toml").write_text(server_block("trust_read_only = true\n"))
    fake_openai.enqueue(tool_calls=[("mcp__h__liar", {})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    r = run_cli("chat", "--recipe", "hr", "-p", "go", env=env)
    assert r.returncode == 0, r.stderr
    assert Path("notes.txt").read_text() == "liar\n"


def test_a_huge_result_is_capped_as_a_built_in_tools_is(fake_openai, env, vance_home):
    (vance_home / "config.toml").write_text(server_block('[mcp.servers.h.env]\nHUGE = "1000000"\n'))
    fake_openai.enqueue(tool_calls=[("mcp__h__huge", {})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    r = run_cli("chat", "--recipe", "hr", "-p", "go", "--allow", "mcp__h__huge", env=env)
    assert r.returncode == 0, r.stderr
    sizes = [len(c) for c in _tool_results(fake_openai)]
    assert max(sizes) <= 200_000  # 1,000,000 characters reached the model whole before
    (result,) = _tool_results(fake_openai)[:1]
    assert result.startswith("ZZZ") and result.endswith("ZZZ") and "chars cut" in result
    files = [p for p in (vance_home / "processes").rglob("*") if p.is_file()]
    assert files and sum(p.stat().st_size for p in files) < 500_000  # nor is it saved whole in the process file


def test_a_side_effecting_call_cut_by_a_kill_is_not_run_again_on_resume(fake_openai, env):
    """At most once: vance is killed while the server's slow_note runs (it has written notes.txt);
    the resumed turn reports the call as interrupted instead of calling it again."""
    fake_openai.enqueue(tool_calls=[("mcp__h__slow_note", {})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    p = subprocess.Popen([sys.executable, "-m", "vance_cli", "chat", "--recipe", "hr", "-p", "go", "--allow", "mcp__h__slow_note"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=subprocess_env(env))
    try:
        deadline = time.monotonic() + 60
        while not Path("notes.txt").exists():
            assert time.monotonic() < deadline and p.poll() is None, "slow_note did not start"
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
    r = run_cli("chat", "--continue", "-p", "go on", "--allow", "mcp__h__slow_note", env=env)
    assert r.returncode == 0, r.stderr
    assert Path("notes.txt").read_text() == "slow_note\n"  # the server wrote once; it was not called again
    (result,) = _tool_results(fake_openai)[:1]
    assert "interrupted" in result.lower() and "mcp__h__slow_note" in result
