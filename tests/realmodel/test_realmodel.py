"""Vance on a real model, through the real `vance` CLI: a chat turn, an extraction, a Benjy run.

Marked `realmodel`: skipped unless VANCE_REALMODEL_URL names a running server (see conftest.py).
Each asserts a contract that holds whatever the model's quality, not that a small model is
clever: the turn ends waiting for the person with a message that is the model's, not Vance's
own correction text or a tool call written out; a constrained extraction of a plain sentence is
exactly right; a Benjy run that says DONE has a passing check.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(1800)]

VANCE = str(Path(sys.executable).parent / "vance")


def run_vance(realmodel, args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VANCE_") or k == "VANCE_HOME"}
    env.update(VANCE_MODEL=realmodel.vance_model, VANCE_API_BASE=realmodel.api_base, NO_COLOR="1")
    return subprocess.run([VANCE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_chat_turn_ends_blocked_with_the_models_own_message(realmodel, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("The meeting with Dana is on Thursday at 15:00 in room B12.\n")
    r = run_vance(realmodel, ["chat", "-p", "Hello! Who are you, in one sentence?", "--json"], ws, 900)
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    messages = [e["text"] for e in events if e["type"] == "message"]
    assert messages, f"no message delivered: {r.stderr[-500:]}"
    text = messages[-1]
    assert text.strip()
    # Vance's correction prompt echoed back is not the model's answer, nor is a tool call as text.
    assert "VALIDATION CHECK" not in text and "did not end your turn with a tool call" not in text, text
    assert not re.search(r'"name"\s*:\s*"respond"|<tool_call>', text), text
    pid = events[0]["process_id"]
    shown = json.loads(run_vance(realmodel, ["show", pid, "--json"], ws, 60).stdout)
    assert shown["status"] == "BLOCKED"


def test_structure_extracts_a_flat_record_exactly(realmodel, tmp_path):
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "city": {"type": "string"}},
        "required": ["name", "age", "city"],
        "additionalProperties": False,
    }
    r = run_vance(
        realmodel,
        ["structure", "Ann Lee is 34 years old and lives in Lyon.", "--schema", json.dumps(schema), "--json"],
        tmp_path,
        600,
    )
    result = json.loads(r.stdout)
    assert (r.returncode, result["status"]) == (0, "ok"), result
    assert result["data"] == {"name": "Ann Lee", "age": 34, "city": "Lyon"}


def test_benjy_run_ends_and_done_means_the_check_passes(realmodel, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    check = ws / "check_hello.py"
    check.write_text(
        "import sys, os\nsys.path.insert(0, os.getcwd())\nfrom hello import hello\n"
        "assert hello() == 'hello', hello()\nprint('ok')\n"
    )
    goal = "Create hello.py with a function hello() that returns the string 'hello'."
    r = run_vance(
        realmodel,
        ["benjy", "run", goal, "--workspace", str(ws), "--check", f"{sys.executable} check_hello.py", "--plain"],
        ws,
        1500,
    )
    # DONE (0) or BLOCKED with a question (10); never a crash or a failed run.
    assert r.returncode in (0, 10), r.stderr[-2000:]
    passes = subprocess.run([sys.executable, "check_hello.py"], cwd=ws, capture_output=True).returncode == 0
    if r.returncode == 0:
        assert passes, "the run said DONE, but the check fails"
