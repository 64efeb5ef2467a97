"""`vance doctor`: one line per check, a fix for each failure, exit 1 when any fails, --json for scripts."""

from __future__ import annotations

import json
import os

from tests.helpers import run_cli


def _checks(stdout: str) -> dict[str, dict]:
    report = json.loads(stdout)
    return {c["name"]: c for c in report["checks"]} | {"_ok": report["ok"]}


def test_offline_in_a_clean_home_without_a_model_fails_with_the_fix():
    r = run_cli("doctor", "--offline")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL  model" in r.stdout and "no model configured" in r.stdout
    assert "fix: set a default model with VANCE_MODEL" in r.stdout
    for passing in ("python", "settings", "scopes", "state folder", "recipes", "schemas"):
        assert f"ok    {passing}" in r.stdout, passing
    assert "Traceback" not in r.stdout + r.stderr


def test_offline_with_a_model_and_its_key_passes_and_never_prints_the_key():
    secret = "sk-ant-very-secret-123"
    r = run_cli("doctor", "--offline", env={"VANCE_MODEL": "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY": secret})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ANTHROPIC_API_KEY is set (not shown)" in r.stdout
    assert secret not in r.stdout + r.stderr
    assert "skip  endpoint" in r.stdout
    assert "all checks passed" in r.stdout


def test_missing_provider_key_is_a_failure_naming_the_variable():
    r = run_cli("doctor", "--offline", "--json", env={"VANCE_MODEL": "gemini/gemini-2.5-flash"})
    assert r.returncode == 1
    checks = _checks(r.stdout)
    assert checks["_ok"] is False
    assert checks["api key"]["outcome"] == "fail"
    assert checks["api key"]["fix"].startswith("export GEMINI_API_KEY=")


def test_json_is_one_object_with_every_check():
    r = run_cli("doctor", "--offline", "--json", env={"VANCE_MODEL": "ollama/llama3.1"})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    checks = _checks(r.stdout)
    assert checks["_ok"] is True
    assert checks["api key"]["detail"] == "ollama needs no key"
    assert checks["capabilities"]["detail"].startswith("family ollama: tool calls yes")
    assert checks["endpoint"]["outcome"] == "skip"
    assert {"python", "model", "scopes", "state folder", "process files", "recipes", "schemas"} <= set(checks)


def test_endpoint_check_makes_one_tiny_call(fake_openai):
    fake_openai.enqueue(tool_calls=[("respond", {"message": "ok"})])
    env = {"VANCE_MODEL": "openai/local-model", "VANCE_API_BASE": fake_openai.url}
    r = run_cli("doctor", "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    checks = _checks(r.stdout)
    assert checks["endpoint"]["outcome"] == "ok"
    assert "answered with a tool call" in checks["endpoint"]["detail"]
    assert len(fake_openai.requests) == 1
    body = fake_openai.requests[0]
    assert body["max_tokens"] == 16
    assert [t["function"]["name"] for t in body["tools"]] == ["respond"]


def test_unreachable_endpoint_fails_with_the_transport_hint(vance_home):
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\nbase_delay = 0.0\n")
    env = {"VANCE_MODEL": "openai/local-model", "VANCE_API_BASE": "http://127.0.0.1:9/v1"}
    r = run_cli("doctor", env=env)
    assert r.returncode == 1
    assert "FAIL  endpoint" in r.stdout and "fix:" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_broken_recipe_unreadable_process_and_unwritable_state_are_reported(vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "broken.yaml").write_text("name: broken\nengine: nosuch\n")
    processes = vance_home / "processes"
    processes.mkdir()
    (processes / "20260101-000000-abcdef.json").write_text("{not json")
    r = run_cli("doctor", "--offline", "--json", env={"VANCE_MODEL": "ollama/llama3.1"})
    checks = _checks(r.stdout)
    assert r.returncode == 1
    assert checks["recipes"]["outcome"] == "fail" and "broken" in checks["recipes"]["detail"]
    assert checks["process files"]["outcome"] == "warn" and "1 unreadable" in checks["process files"]["detail"]
    if os.geteuid() != 0:  # root writes through any mode bits
        processes.chmod(0o500)
        try:
            r = run_cli("doctor", "--offline", "--json", env={"VANCE_MODEL": "ollama/llama3.1"})
            assert _checks(r.stdout)["state folder"]["outcome"] == "fail"
        finally:
            processes.chmod(0o700)


def test_unwritable_state_folder_fails(vance_home, tmp_path):
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x")
    r = run_cli("doctor", "--offline", "--json", env={"VANCE_MODEL": "ollama/llama3.1", "VANCE_HOME": str(blocker)})
    checks = _checks(r.stdout)
    assert r.returncode == 1
    assert checks["state folder"]["outcome"] == "fail"
    assert "VANCE_HOME" in checks["state folder"]["fix"]


def test_trust_and_sandbox_are_reported(tmp_path):
    import shutil

    project = tmp_path / "cloned"
    (project / ".vance").mkdir(parents=True)
    (project / ".vance" / "config.toml").write_text('[model]\napi_base = "http://127.0.0.1:9/v1"\n')
    env = {"VANCE_MODEL": "ollama/llama3.1"}
    checks = _checks(run_cli("doctor", "--offline", "--json", env=env, cwd=project).stdout)
    assert checks["trust"]["outcome"] == "warn" and "api_base" in checks["trust"]["detail"]
    assert checks["trust"]["fix"].startswith("if you trust what it sets: vance trust ")
    assert run_cli("trust", str(project), env=env).returncode == 0
    checks = _checks(run_cli("doctor", "--offline", "--json", env=env, cwd=project).stdout)
    assert checks["trust"]["outcome"] == "ok" and "is trusted" in checks["trust"]["detail"]
    sandbox = checks["sandbox"]
    assert sandbox["outcome"] in ("ok", "warn")
    if shutil.which("bwrap") is None:
        assert sandbox["outcome"] == "warn" and "not installed" in sandbox["detail"]
    # No bwrap on PATH (the interpreter is started by its full path) and the sandbox required.
    no_bwrap = {**env, "PATH": str(tmp_path / "empty-bin"), "VANCE_SANDBOX": "required"}
    checks = _checks(run_cli("doctor", "--offline", "--json", env=no_bwrap).stdout)
    assert checks["sandbox"]["outcome"] == "fail" and "bubblewrap" in checks["sandbox"]["fix"]


def test_the_demo_models_need_no_key():
    # Found by review: `demo:chat` was taken for an OpenAI model and failed for OPENAI_API_KEY.
    r = run_cli("doctor", "--offline", "--json", env={"VANCE_MODEL": "demo:chat", "OPENAI_API_KEY": ""})
    checks = _checks(r.stdout)
    assert checks["api key"]["outcome"] == "ok" and "needs no key" in checks["api key"]["detail"]


def test_a_password_or_query_in_api_base_is_never_printed(vance_home):
    # Found by review: doctor printed http://user:hunter2@host/v1; so did model errors.
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\nbase_delay = 0.0\n")
    base = "http://user:hunter2@127.0.0.1:9/v1?key=sekrit"
    r = run_cli("doctor", env={"VANCE_MODEL": "openai/local-model", "VANCE_API_BASE": base})
    assert r.returncode == 1
    assert "hunter2" not in r.stdout + r.stderr and "sekrit" not in r.stdout + r.stderr
    assert "http://***@127.0.0.1:9/v1?…" in r.stdout
    chat = run_cli("chat", "-p", "hi", env={"VANCE_MODEL": "openai/local-model", "VANCE_API_BASE": base})
    assert chat.returncode != 0 and "127.0.0.1:9" in chat.stderr
    assert "hunter2" not in chat.stdout + chat.stderr and "sekrit" not in chat.stdout + chat.stderr


def test_an_unreachable_endpoint_is_one_call_not_seconds_of_retries(vance_home):
    import time

    t0 = time.monotonic()
    r = run_cli("doctor", env={"VANCE_MODEL": "openai/local-model", "VANCE_API_BASE": "http://127.0.0.1:9/v1"})
    assert r.returncode == 1 and "FAIL  endpoint" in r.stdout
    assert "retrying" not in r.stderr.lower()  # the default budget would announce 3 retries
    assert time.monotonic() - t0 < 30


def test_the_capabilities_override_shown_is_valid_toml(vance_home):
    import tomllib

    name = "ollama/tinyllama"
    (vance_home / "config.toml").write_text(f'[models."{name}".capabilities]\ntools = false\n')
    r = run_cli("doctor", "--offline", "--json", env={"VANCE_MODEL": name})
    caps = _checks(r.stdout)["capabilities"]
    assert caps["outcome"] == "warn" and "chat engines need tool calls" in caps["detail"]
    snippet = caps["fix"].split(":\n", 1)[1]  # what the person would paste
    assert tomllib.loads(snippet) == {"models": {name: {"capabilities": {"tools": True}}}}
