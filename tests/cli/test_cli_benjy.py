"""`vance benjy` end to end: the real CLI in a subprocess, the real HTTP transport, a scripted server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.engines.benjy_brain import Brain
from tests.helpers import REPO, json_lines, run_cli

CHECK_PY = "import glob, sys\nbad = [f for f in sorted(glob.glob('item*.txt')) if 'BAD' in open(f).read()]\nprint('bad files:', bad) if bad else print('ok')\nsys.exit(1 if bad else 0)\n"
CHECK = f"{sys.executable} check.py"


@pytest.fixture
def env(fake_openai):
    return {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}


@pytest.fixture
def ws(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "check.py").write_text(CHECK_PY)
    return folder


def _worker_prompts(fake):
    """The first user message of every worker request that started a worker's turn."""
    out = []
    for body in fake.requests:
        if body.get("tools") and body["messages"][-1]["role"] == "user":
            out.append(body)
    return out


def test_a_coding_goal_runs_to_done_over_http(fake_openai, env, ws):
    fake_openai.responder = Brain(items=2).reply_body
    r = run_cli("benjy", "run", "write two item files", "--workspace", str(ws), "--check", CHECK, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# Benjy report\n") and "#2 [done] write item2.txt" in r.stdout
    assert "· CHECK #1: passed (exit 0)" in r.stderr and "┌ todos · 0/2 done" in r.stderr
    assert "· file_write" in r.stderr  # the workers' tool lines, indented
    assert (ws / "item1.txt").read_text() == "item 1\n" and (ws / "item2.txt").read_text() == "item 2\n"
    # controller calls went out with their schema; workers with their tools
    formats = [b["response_format"]["json_schema"]["name"] for b in fake_openai.requests if b.get("response_format")]
    assert formats[0] == "benjy_interpret" and "benjy_reflect" in formats
    pid = r.stderr.split("benjy run ", 1)[1].split()[0]
    rows = json_lines(run_cli("ps", "--json", env=env).stdout)
    assert [(row["depth"], row["status"]) for row in rows if row["id"] == pid] == [(0, "DONE")]
    assert sorted(row["depth"] for row in rows) == [0, 1, 1]


def test_a_failing_first_attempt_is_retried_with_the_error(fake_openai, env, ws):
    attempts: dict[int, int] = {}

    def files(n, prompt):
        attempts[n] = attempts.get(n, 0) + 1
        return [(f"item{n}.txt", "BAD\n" if attempts[n] == 1 else f"item {n}\n")]

    fake_openai.responder = Brain(items=1, worker_files=files).reply_body
    r = run_cli("benjy", "run", "write the item file", "--workspace", str(ws), "--check", CHECK, env=env)
    assert r.returncode == 0, r.stderr
    assert "CHECK #1: failed (exit 1) → ROUTE" in r.stderr and "ROUTE (check_failed #1): retry #1" in r.stderr
    first, retry = _worker_prompts(fake_openai)
    assert "The previous attempt did not pass" not in first["messages"][-1]["content"]
    assert "bad files: ['item1.txt']" in retry["messages"][-1]["content"]
    assert [m["role"] for m in retry["messages"]] == ["system", "user"]  # a fresh worker, no old history
    assert "#1 [done] write item1.txt (2 attempts)" in r.stdout


def test_a_question_is_answered_with_vance_benjy_answer(fake_openai, env, ws):
    routes: list[str] = []

    def route(prompt):
        routes.append(prompt)
        if len(routes) == 1:
            return {
                "op": "ask_parent",
                "question": "Which content should item1.txt have?",
                "reason": "the check keeps failing",
            }
        return {"op": "retry", "item": 1, "reason": "the person answered"}

    state = {"answered": False}
    brain = Brain(
        items=1,
        overrides={"ROUTE": route},
        worker_files=lambda n, p: [(f"item{n}.txt", "fine\n" if "item 1 please" in p else "BAD\n")],
    )
    fake_openai.responder = brain.reply_body
    r = run_cli("benjy", "run", "write the item file", "--workspace", str(ws), "--check", CHECK, env=env)
    assert r.returncode == 10, r.stderr
    pid = r.stderr.split("benjy run ", 1)[1].split()[0]
    assert "Which content should item1.txt have?" in r.stderr
    assert f'vance benjy answer {pid} "YOUR ANSWER"' in r.stderr
    # the BLOCKED run's report on stdout, as DONE's (issue 18): the question, the items, the counters
    assert r.stdout.startswith("# Benjy report · BLOCKED\n")
    assert "## Question\nWhich content should item1.txt have?" in r.stdout
    assert "#1 [in_progress] write item1.txt" in r.stdout and "## Counters" in r.stdout
    status = json.loads(run_cli("benjy", "status", pid, "--json", env=env).stdout)
    assert status["status"] == "BLOCKED" and status["pendingQuestion"]["reason"] == "ask_parent"
    human = run_cli("benjy", "status", pid, env=env).stdout
    assert "question:" in human and "Which content" in human
    state["answered"] = True
    a = run_cli("benjy", "answer", pid, "item 1 please: write fine", env=env)
    assert a.returncode == 0, a.stderr
    assert "Answer (verbatim):\nitem 1 please: write fine" in routes[1]
    assert a.stdout.startswith("# Benjy report") and (ws / "item1.txt").read_text() == "fine\n"


def test_json_output_is_the_event_stream(fake_openai, env, ws):
    fake_openai.responder = Brain(items=1).reply_body
    r = run_cli("benjy", "run", "one file", "--workspace", str(ws), "--check", CHECK, "--json", env=env)
    assert r.returncode == 0, r.stderr
    events = json_lines(r.stdout)
    kinds = {e["type"] for e in events}
    assert {"journal", "todos_updated", "status_changed", "message", "tool_started"} <= kinds
    root = events[0]["process_id"]
    assert events[-1]["type"] in ("todos_updated", "status_changed") and any(
        e["type"] == "message" and e["process_id"] == root and e["text"].startswith("# Benjy report") for e in events
    )


def test_without_a_workspace_a_temporary_one_is_made_and_shown(fake_openai, env):
    fake_openai.responder = Brain(items=1).reply_body
    r = run_cli("benjy", "run", "one file", "--keep-workspace", env=env)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if x.startswith("workspace "))
    assert line.endswith("(a new temporary folder, kept after DONE)")
    folder = line.split()[1]
    assert os.path.isfile(os.path.join(folder, "item1.txt"))


def test_a_temporary_workspace_is_disposed_of_at_done_and_the_run_says_where(fake_openai, env):
    # spec §7: temporary RootDirs are disposed of when the creator closes (issue 18)
    fake_openai.responder = Brain(items=1).reply_body
    r = run_cli("benjy", "run", "one file", env=env)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if x.startswith("workspace "))
    assert line.endswith("(a new temporary folder, removed at DONE; --keep-workspace keeps it)")
    folder = line.split()[1]
    assert f"the temporary workspace {folder} was removed at DONE" in r.stderr
    assert not os.path.exists(folder)
    assert r.stdout.startswith("# Benjy report") and "#1 [done]" in r.stdout


def test_a_named_or_given_workspace_is_never_disposed_of(fake_openai, env, ws):
    fake_openai.responder = Brain(items=1).reply_body
    r = run_cli("benjy", "run", "one file", "--workspace", str(ws), "--check", CHECK, env=env)
    assert r.returncode == 0, r.stderr
    assert (ws / "item1.txt").is_file() and "was removed" not in r.stderr


def test_an_analysis_goal_still_runs_the_check_and_a_failing_check_is_not_done(fake_openai, env, ws):
    # issue 18, first contact: INTERPRET called a coding goal "analysis", the chain had no CHECK,
    # the workers wrote nothing and the run ended DONE with exit 0. The check is ground truth.
    (ws / "check.py").write_text("import sys\nimport fizzbuzz\nsys.exit(0)\n")
    brain = Brain(items=1, task_type="analysis", worker_files=lambda n, p: [("notes.md", "I would write fizzbuzz.py\n")])
    fake_openai.responder = brain.reply_body
    r = run_cli("benjy", "run", "write fizzbuzz.py", "--workspace", str(ws), "--check", CHECK, env=env)
    assert r.returncode == 10, r.stderr
    assert "CHECK #1: failed (exit 1)" in r.stderr
    assert "No module named 'fizzbuzz'" in r.stdout  # the report says what the facts say
    assert r.stdout.startswith("# Benjy report · BLOCKED") and "DONE" not in r.stderr.split("BLOCKED ·")[-1].split("\n")[0]


def test_a_named_target_is_a_folder_of_the_scope(fake_openai, env, vance_home):
    fake_openai.responder = Brain(items=1).reply_body
    r = run_cli("benjy", "run", "one file", "--target", "demo", env=env)
    assert r.returncode == 0, r.stderr
    assert (vance_home / "workspaces" / "demo" / "item1.txt").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workspace", "x", "--target", "y"], "--workspace and --target exclude each other"),
        (["--workspace", "no-such-folder"], "is not an existing folder"),
        (["--criteria", "missing.md"], "criteria file"),
        (["--recipe", "arthur"], "runs the arthur engine, not benjy"),
    ],
)
def test_bad_arguments_create_nothing(env, args, message, vance_home):
    r = run_cli("benjy", "run", "goal", *args, env=env)
    assert r.returncode == 2 and message in r.stderr
    assert json_lines(run_cli("ps", "--json", env=env).stdout) == []


def test_ctrl_c_saves_the_run_and_resume_finishes_it(fake_openai, env, ws):
    fake_openai.enqueue(text="{}", delay=30)  # the interpret call is still waiting when Ctrl+C comes
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vance_cli", "benjy", "run", "one file", "--workspace", str(ws)],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 30
    while not fake_openai.requests and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    pid = stderr.split("benjy run ", 1)[1].split()[0]
    assert f"vance benjy resume {pid}" in stderr
    assert json.loads(run_cli("benjy", "status", pid, "--json", env=env).stdout)["status"] == "SUSPENDED"
    fake_openai.responder = Brain(items=1).reply_body
    r = run_cli("benjy", "resume", pid, env=env)
    assert r.returncode == 0, r.stderr
    assert (ws / "item1.txt").is_file() and r.stdout.startswith("# Benjy report")


def test_watch_needs_a_terminal(env):
    r = run_cli("benjy", "watch", "20260101-000000-abcdef", env=env)
    assert r.returncode == 2 and "needs a terminal" in r.stderr and "vance benjy status" in r.stderr


def test_a_blocked_run_ends_its_json_stream_with_the_report(fake_openai, env, ws):
    brain = Brain(items=1, overrides={"ROUTE": lambda p: {"op": "ask_parent", "question": "Which content?", "reason": "unclear"}},
                  worker_files=lambda n, p: [(f"item{n}.txt", "BAD\n")])
    fake_openai.responder = brain.reply_body
    r = run_cli("benjy", "run", "write the item file", "--workspace", str(ws), "--check", CHECK, "--json", env=env)
    assert r.returncode == 10, r.stderr
    last = json_lines(r.stdout)[-1]
    assert last["type"] == "report" and last["status"] == "BLOCKED"
    assert last["text"].startswith("# Benjy report · BLOCKED") and "## Question\nWhich content?" in last["text"]
