"""Issue 17 re-review, finding 4 (MED): a chat process file with a wrong-typed turn counter or summary
marker is a clear error on `chat --resume` and `chat --continue` ("process ID cannot be run: ...",
the check every resume makes: runtime/checks.py), never an internal error, and the file is kept.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli, write_script

RESPOND = {"tool_calls": [{"name": "respond", "arguments": {"message": "hi", "awaiting_user_input": True}}]}
CASES = {
    "turn-iterations-string": ("turn", {"open": True, "iterations": "x"}),
    "turn-max_tokens-string": ("turn", {"open": True, "max_tokens": "x"}),
    "summary-covers-string": ("summary", "x"),
    "summary-covers-infinity": ("summary", float("inf")),
    # beyond the reviewer's four
    "turn-open-a-list": ("turn", {"open": [1]}),
    "turn-awaiting_approval-a-number": ("turn", {"open": True, "awaiting_approval": 5}),
    "summary-covers-negative": ("summary", -3),
    "summary-covers-true": ("summary", True),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("how", ["--resume", "--continue"])
def test_a_corrupt_chat_process_file_is_a_clear_error(vance_home, tmp_path, name, how):
    # the reviewer's repro (test_r6_chat_corrupt_process.py)
    script = write_script(tmp_path / "b.json", [RESPOND] * 5)
    assert run_cli("chat", "-p", "hello", "--model", script).returncode == 0
    (pfile,) = (vance_home / "processes").glob("*.json")
    data = json.loads(pfile.read_text())
    kind, value = CASES[name]
    if kind == "turn":
        data["engine_params"]["turn"] = value
    else:
        data["history"].insert(0, {"role": "system", "content": "s", "meta": {"kind": "summary", "covers": value}})
    text = json.dumps(data)
    pfile.write_text(text)
    args = ("--resume", pfile.stem) if how == "--resume" else ("--continue",)
    r = run_cli("chat", "-p", "again", *args, "--model", script)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 1 and f"process {pfile.stem} cannot be run: " in r.stderr, (r.returncode, r.stderr)
    assert pfile.read_text() == text


def test_a_sound_summary_marker_still_resumes(vance_home, tmp_path):
    script = write_script(tmp_path / "b.json", [RESPOND] * 5)
    assert run_cli("chat", "-p", "hello", "--model", script).returncode == 0
    (pfile,) = (vance_home / "processes").glob("*.json")
    data = json.loads(pfile.read_text())
    data["history"].append({"role": "system", "content": "s", "meta": {"kind": "summary", "covers": 1}})
    data["engine_params"]["turn"] = {"open": False, "iterations": 2, "max_tokens": None}
    pfile.write_text(json.dumps(data))
    r = run_cli("chat", "-p", "again", "--resume", pfile.stem, "--model", script)
    assert r.returncode == 0, r.stderr
