"""`vance chat -p` with `@path` (issue 16): the same attachment as the console (one function,
runtime/session.py ChatSession.attach): the file's text reaches the model; a path the file tools
refuse exits 2, sends nothing and creates no process."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import run_cli


def _env(fake_openai) -> dict:
    return {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}


def _last_user(body: dict) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


def _processes(home: Path) -> list[str]:
    found = [p for p in home.rglob("*.json") if "processes" in p.parts]
    return [p.name for p in found]


def test_chat_p_attaches_a_workspace_file(fake_openai, vance_home):
    Path("notes.md").write_text("# notes\nthe deadline is friday\n")
    fake_openai.enqueue(tool_calls=[("respond", {"message": "friday", "awaiting_user_input": True})])
    r = run_cli("chat", "-p", "when is the deadline? see @notes.md.", env=_env(fake_openai))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "friday\n"
    assert "attached notes.md (31 bytes)" in r.stderr
    sent = _last_user(fake_openai.requests[0])
    assert sent == ('when is the deadline? see @notes.md.\n\n<attached file="notes.md" bytes="31">\n'
                    "# notes\nthe deadline is friday\n</attached>")
    assert len(_processes(vance_home)) == 1  # (what the refusals below must not leave)


def test_chat_p_refuses_a_path_outside_the_workspace_before_anything_exists(fake_openai, vance_home):
    (Path.cwd().parent / "secret.txt").write_text("s3cret")
    r = run_cli("chat", "-p", "read @../secret.txt", env=_env(fake_openai))
    assert r.returncode == 2, r.stderr
    assert "@../secret.txt cannot be attached: path '../secret.txt' contains '..'" in r.stderr
    assert "fix:" in r.stderr and "Traceback" not in r.stderr
    assert fake_openai.requests == [] and _processes(vance_home) == []


def test_chat_p_refuses_a_secret_of_the_deny_list(fake_openai, vance_home):
    work = Path.cwd()
    (work / ".ssh").mkdir()
    (work / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    r = run_cli("chat", "-p", "what is @.ssh/id_ed25519", env={**_env(fake_openai), "HOME": str(work)})
    assert r.returncode == 2, r.stderr
    assert "hidden from the tools: it holds credentials" in r.stderr
    assert fake_openai.requests == [] and _processes(vance_home) == []
    assert os.environ.get("HOME") != str(work)  # run_cli gave the environment back


def test_plain_attaches_and_a_refused_line_is_not_sent(fake_openai):
    Path("notes.md").write_text("friday\n")
    (Path.cwd().parent / "secret.txt").write_text("s3cret")
    r = run_cli("chat", "--plain", input="read @../secret.txt\nsee @notes.md\n", env=_env(fake_openai))
    assert r.returncode == 0, r.stderr
    assert "@../secret.txt cannot be attached" in r.stderr
    assert len(fake_openai.requests) == 1  # the refused line was not sent
    assert _last_user(fake_openai.requests[0]).endswith('<attached file="notes.md" bytes="7">\nfriday\n</attached>')
