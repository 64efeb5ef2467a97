"""The issue's finish line: `vance chat -p` against an OpenAI-compatible server, over both transports."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_chat_p_against_an_openai_compatible_server(fake_openai, transport):
    fake_openai.enqueue(text="I think the answer is 4.")  # misbehaves first: free text
    fake_openai.enqueue(tool_calls=[("respond", {"message": "2 + 2 = 4", "awaiting_user_input": True})])
    env = {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url, "VANCE_TRANSPORT": transport}
    r = run_cli("chat", "-p", "what is 2+2?", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "2 + 2 = 4\n"
    assert len(fake_openai.requests) == 2
    first, second = fake_openai.requests
    assert first["model"] == "some-model"
    assert [t["function"]["name"] for t in first["tools"]] == [
        "respond",
        "file_read",
        "file_list",
        "process_spawn",
        "process_status",
        "process_steer",
    ]
    assert second["messages"][-1]["content"].startswith("VALIDATION CHECK: your previous response had no tool call.")


def test_chat_p_reports_a_server_that_keeps_failing(fake_openai, vance_home):
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 2\nbase_delay = 0.0\nmax_delay = 0.0\n")
    for _ in range(2):
        fake_openai.enqueue_error(503)
    env = {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}
    r = run_cli("chat", "-p", "hello", env=env)
    assert r.returncode == 1
    assert "503" in r.stderr and "Traceback" not in r.stderr
    ps = run_cli("ps", "--json")
    assert '"status": "FAILED"' in ps.stdout


def test_real_provider_calls_are_forbidden_in_tests():
    env = {"VANCE_MODEL": "openai/gpt-4o-mini", "OPENAI_API_KEY": "sk-test"}
    r = run_cli("chat", "-p", "hello", env=env)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert "model requests are switched off (VANCE_ALLOW_MODEL_REQUESTS=0)" in r.stderr
