"""`vance benjy batch` on the local engine: the real CLI, the real HTTP transport, a scripted server.

The Ray engine runs the same batches in tests/cli/test_benjy_batch_ray.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.engines.benjy_brain import Brain
from tests.helpers import CRASH_ENV, REPO, json_lines, run_cli, vance

CHECK_PY = "import glob, sys\nbad = [f for f in sorted(glob.glob('item*.txt')) if 'BAD' in open(f).read()]\nprint('bad files:', bad) if bad else print('ok')\nsys.exit(1 if bad else 0)\n"
CHECK = f"{sys.executable} check.py"
ASK = "ask me first"  # in a goal: its worker writes a bad file until the person answers
ANSWER = "item 1 please: write fine"


def batch_brain() -> Brain:
    """Stateless, per goal: a goal with ASK fails its check and its route asks the person; the answer fixes it."""

    def route(prompt: str) -> dict:
        if "Answer (verbatim)" in prompt:
            return {"op": "retry", "item": 1, "reason": "the person answered"}
        return {"op": "ask_parent", "question": "Which content should item1.txt have?", "reason": "the check fails"}

    def files(n: int, prompt: str) -> list[tuple[str, str]]:
        if ASK in prompt and "item 1 please" not in prompt:
            return [(f"item{n}.txt", "BAD\n")]
        return [(f"item{n}.txt", "fine\n" if ASK in prompt else f"item {n}\n")]

    return Brain(items=1, overrides={"ROUTE": route}, worker_files=files)


GOALS = [
    {"id": "ask", "goal": f"write the item file, {ASK}"},  # first: with --jobs 1 the others wait for it
    {"id": "one", "goal": "write one item file"},
    {"id": "two", "goal": "write another item file", "check": CHECK},
]


def write_goals(folder, goals=GOALS, name="goals.jsonl"):
    path = folder / name
    path.write_text("".join(json.dumps(g) + "\n" for g in goals))
    return path


@pytest.fixture
def env(fake_openai):
    fake_openai.responder = batch_brain().reply_body
    return {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}


@pytest.fixture
def src(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "check.py").write_text(CHECK_PY)
    (folder / "README.txt").write_text("the person's folder\n")
    return folder


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def batch_dir(vance_home):
    (folder,) = (vance_home / "batches").iterdir()
    return folder


def roots(env):
    return [row for row in json_lines(run_cli("ps", "--json", env=env).stdout) if row["depth"] == 0]


def test_a_batch_runs_every_goal_in_its_own_copy_and_a_question_blocks_only_its_run(fake_openai, env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path)
    before = snapshot(src)
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "--workspace", str(src), "--jobs", "1", "--yes", env=env)
    # one run waits for an answer: not a failure, but said (exit 10, as `benjy run`)
    assert r.returncode == 10, r.stderr
    table = r.stdout.splitlines()
    assert table[0].split() == ["ID", "STATUS", "ATTEMPTS", "TOKENS", "PROCESS"]
    rows = {line.split()[0]: line.split() for line in table[1:4]}
    assert [rows[g][1] for g in ("ask", "one", "two")] == ["BLOCKED", "DONE", "DONE"]
    assert rows["one"][2] == "1" and int(rows["one"][3]) > 0  # one worker attempt; tokens counted
    ask_pid = rows["ask"][4]
    assert "ask (process " in r.stdout and "Which content should item1.txt have?" in r.stdout
    assert f'answer with: vance benjy answer {ask_pid} "YOUR ANSWER"' in r.stdout
    # each run worked in its own copy of the source; the person's folder is untouched
    assert snapshot(src) == before
    runs = batch_dir(vance_home) / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["ask", "one", "two"]
    assert (runs / "one" / "item1.txt").read_text() == "item 1\n" and (runs / "one" / "README.txt").is_file()
    assert (runs / "ask" / "item1.txt").read_text() == "BAD\n"
    # every run is an ordinary Benjy run: ps lists three, each approved once by the batch
    listed = {row["id"]: row["status"] for row in roots(env)}
    assert listed == {rows[g][4]: s for g, s in (("ask", "BLOCKED"), ("one", "DONE"), ("two", "DONE"))}
    process = json.loads((vance_home / "processes" / f"{ask_pid}.json").read_text())
    assert process["engine_params"]["approvedRun"] == {"by": "--yes (vance benjy batch)", "tools": ["file_write"], "check": CHECK}
    assert process["workspace"] == str(runs / "ask")

    # a rerun before the answer drives the BLOCKED run again: it stays BLOCKED, without a model call
    sent = len(fake_openai.requests)
    waiting = run_cli("benjy", "batch", str(goals), "--check", CHECK, "--workspace", str(src), env=env)
    assert waiting.returncode == 10 and len(fake_openai.requests) == sent, waiting.stderr
    assert "ask: BLOCKED" in waiting.stderr and "one: DONE before" in waiting.stderr

    # `vance benjy answer` reaches the blocked run as for any run
    a = run_cli("benjy", "answer", ask_pid, ANSWER, env=env)
    assert a.returncode == 0, a.stderr
    assert (runs / "ask" / "item1.txt").read_text() == "fine\n"

    # the rerun drives nothing that is DONE and asks for no approval (it makes no new run)
    sent = len(fake_openai.requests)
    again = run_cli("benjy", "batch", str(goals), "--check", CHECK, "--workspace", str(src), env=env)
    assert again.returncode == 0, again.stderr
    assert [line.split()[1] for line in again.stdout.splitlines()[1:4]] == ["DONE", "DONE", "DONE"]
    assert "ask: DONE before" in again.stderr and len(fake_openai.requests) == sent
    assert len(roots(env)) == 3


def test_json_events_and_the_final_summary(env, src, tmp_path):
    goals = write_goals(tmp_path, GOALS[1:])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--json", env=env)
    assert r.returncode == 0, r.stderr
    events = json_lines(r.stdout)
    kinds = [e["type"] for e in events]
    assert kinds.count("run_created") == 2 and kinds.count("run_started") == 2 and kinds.count("run_finished") == 2
    assert kinds[-1] == "batch_finished" and kinds.index("batch_started") < kinds.index("run_started")
    final = events[-1]
    assert final["exit_code"] == 0
    assert [(run["id"], run["status"], run["attempts"]) for run in final["runs"]] == [("one", "DONE", 1), ("two", "DONE", 1)]
    assert all(run["process_id"] and run["tokens"] > 0 and run["workspace"] for run in final["runs"])


def test_headless_without_yes_is_refused_and_makes_nothing(env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path)
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), env=env)
    assert r.returncode == 2
    assert "needs your approval of its checks and tools (3 new runs)" in r.stderr and "pass --yes" in r.stderr
    assert roots(env) == [] and list(vance_home.glob("batches/*/runs")) == [] and list(vance_home.glob("batches/*/batch.json")) == []


def test_on_a_terminal_the_batch_asks_once_and_a_no_starts_nothing(env, src, tmp_path, monkeypatch, capsys):
    from vance_cli.cli import benjy_cmd
    from vance_cli.config.context import load_context
    from vance_cli.errors import VanceError
    from vance_cli.runtime.benjy_batch import BenjyBatch, Defaults, read_goals
    from vance_cli.runtime.runner import Runtime

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    goals = write_goals(tmp_path, [{"goal": "g", "check": "pytest -q", "allowExec": True}, {"goal": "h"}])
    runtime = Runtime(*load_context())
    plan = BenjyBatch(runtime, goals, read_goals(goals, Defaults(source=src), runtime)).plan()

    class Tty:
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    asked = []
    monkeypatch.setattr("builtins.input", lambda *prompt: asked.append(prompt) or "y")
    assert benjy_cmd._approve_batch(plan, False, "goals.jsonl") == "you (vance benjy batch, once for the batch)"
    shown = capsys.readouterr().err
    assert "2 new runs" in shown and "check     pytest -q   (given: the line's or --check" in shown and "check     none" in shown
    assert "tools     respond, file_read, file_list, file_write, exec_run" in shown and str(src) in shown and len(asked) == 1
    assert shown.endswith("approve them once for the whole batch? [y/N] > ")
    monkeypatch.setattr("builtins.input", lambda *prompt: "n")
    with pytest.raises(VanceError, match="not approved: no run was started"):
        benjy_cmd._approve_batch(plan, False, "goals.jsonl")


def test_a_git_source_gets_a_detached_worktree_per_run_and_its_tree_is_untouched(env, src, tmp_path, vance_home):
    def git(*args):
        return subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    (src / "notes.txt").write_text("not committed\n")
    branches, status = git("branch", "--list"), git("status", "--porcelain")
    goals = write_goals(tmp_path, GOALS[1:])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert r.returncode == 0, r.stderr
    assert "has uncommitted changes or untracked files; the runs' worktrees start at its last commit" in r.stderr
    runs = batch_dir(vance_home) / "runs"
    listed = git("worktree", "list")
    for gid in ("one", "two"):
        assert str(runs / gid) in listed and "(worktree)" in r.stderr
        assert (runs / gid / "item1.txt").read_text() == "item 1\n"
        assert not (runs / gid / "notes.txt").exists()  # HEAD only
    assert git("branch", "--list") == branches and git("status", "--porcelain") == status
    assert not (src / "item1.txt").exists()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"goal": "a"}', "not json"], "goals.jsonl line 2: not JSON"),
        (['{"goal": "a", "chekc": "x"}'], "unknown field 'chekc'; did you mean 'check'?"),
        (['{"id": "x", "goal": "a"}', '{"id": "x", "goal": "b"}'], "line 2: id 'x' is also on line 1"),
        (['{"id": "x"}'], 'line 1: no goal: every line needs "goal"'),
        (['{"goal": "a", "id": "../up"}'], 'line 1: invalid id "../up"'),
        (['{"goal": "a", "workspace": "nowhere"}'], "line 1: workspace"),
        (["", "  "], "has no goals"),
    ],
)
def test_a_bad_goals_file_names_the_line_and_makes_nothing(env, tmp_path, vance_home, lines, message):
    goals = tmp_path / "goals.jsonl"
    goals.write_text("\n".join(lines) + "\n")
    r = run_cli("benjy", "batch", str(goals), "--yes", env=env)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert list(vance_home.glob("batches/*/batch.json")) == [] and roots(env) == []


def test_a_goal_changed_under_its_id_is_refused_on_the_rerun(env, src, tmp_path):
    goals = write_goals(tmp_path, GOALS[1:2])
    assert run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env).returncode == 0
    write_goals(tmp_path, [{"id": "one", "goal": "something else"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert r.returncode == 2 and "goal 'one' (line 1 of goals.jsonl, with the flags it takes) changed since the batch made its run" in r.stderr
    write_goals(tmp_path, GOALS[1:2])  # the line back, but another check for it: its run was made with the first
    r = run_cli("benjy", "batch", str(goals), "--check", "true", "-w", str(src), "--yes", env=env)
    assert r.returncode == 2 and "rerun with the same line and flags" in r.stderr


def test_engine_ray_without_ray_says_how_to_install_it_and_makes_nothing(env, src, tmp_path, vance_home, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    goals = write_goals(tmp_path)
    r = run_cli("benjy", "batch", str(goals), "--engine", "ray", "--yes", env=env)
    assert r.returncode == 2 and "--engine ray needs Ray" in r.stderr and "pip install 'vance-cli[ray]'" in r.stderr
    assert not (vance_home / "batches").exists()
    bad = run_cli("benjy", "batch", str(goals), "--ray-address", "x:1", "--yes", env=env)
    assert bad.returncode == 2 and "--ray-address is for --engine ray" in bad.stderr


@pytest.mark.parametrize("point", ["batch.ids_saved", "batch.workspace_ready", "save.benjy:6"])
def test_a_batch_killed_anywhere_resumes_without_losing_or_doubling_a_run(env, src, tmp_path, vance_home, point):
    goals = write_goals(tmp_path, GOALS[1:])
    args = ("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--jobs", "1")
    killed = vance(*args, env={**env, "VANCE_HOME": str(vance_home), CRASH_ENV: point}, cwd=tmp_path)
    assert killed.returncode == -9, killed.stderr
    state = json.loads((batch_dir(vance_home) / "batch.json").read_text())
    planned = {gid: run["processId"] for gid, run in state["runs"].items()}
    assert sorted(planned) == ["one", "two"]  # the ids are on disk before anything else
    r = run_cli("benjy", "batch", *args[2:], env=env)
    assert r.returncode == 0, r.stderr
    listed = roots(env)
    assert sorted(row["id"] for row in listed) == sorted(planned.values())  # the same runs, none twice
    assert all(row["status"] == "DONE" for row in listed)
    runs = batch_dir(vance_home) / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["one", "two"]  # no half copy left behind
    assert all((runs / gid / "item1.txt").read_text() == "item 1\n" for gid in planned)


PROBE = (
    "import sys\n"
    "from vance_cli.cli.main import run\n"
    "code = 0\n"
    "try:\n    run(sys.argv[1:])\nexcept SystemExit as exc:\n    code = exc.code\n"
    "sys.stderr.write(f'EXIT={code}\\n')\n"
    "sys.stderr.write('RAY=' + str('ray' in sys.modules) + '\\n')\n"
)


def test_the_local_engine_never_imports_ray(env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path, GOALS[1:2])
    r = subprocess.run(
        [sys.executable, "-c", PROBE, "benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO), **env, "VANCE_HOME": str(vance_home)},
        timeout=60,
    )
    assert "EXIT=0" in r.stderr and "RAY=False" in r.stderr, r.stderr


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_stops_the_batch_saved_and_the_rerun_finishes_it(fake_openai, env, src, tmp_path, vance_home, signum, code):
    brain, arrived, released = batch_brain(), threading.Event(), threading.Event()

    def responder(body):
        if body.get("tools"):  # the first worker call waits: Ctrl+C comes while the runs are in flight
            arrived.set()
            released.wait(30)
        return brain.reply_body(body)

    fake_openai.responder = responder
    goals = write_goals(tmp_path, GOALS[1:])
    args = ("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes")
    proc = subprocess.Popen(
        [sys.executable, "-m", "vance_cli", *args],
        env={**os.environ, "PYTHONPATH": str(REPO), **env, "VANCE_HOME": str(vance_home)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    try:
        assert arrived.wait(30)
        time.sleep(0.2)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        released.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr  # 128 + the signal, as the README says
    assert f"every run is saved. Continue the batch with the same command: vance benjy batch {goals} ..." in stderr
    assert "vance chat" not in stderr  # not a chat's hint
    assert "STOPPED" in stdout and "continue with: vance benjy resume" in stdout  # the table of what it reached
    assert {row["status"] for row in roots(env)} <= {"SUSPENDED", "IDLE", "READY"}
    r = run_cli(*args, env=env)
    assert r.returncode == 0, r.stderr
    assert len(roots(env)) == 2 and all(row["status"] == "DONE" for row in roots(env))


def test_the_ray_helper_passes_vance_variables_and_puts_the_workers_back(monkeypatch):
    from vance_cli.ray_cluster import resolve_address, task_env, task_environ

    monkeypatch.setenv("VANCE_MODEL", "openai/worker-own")
    monkeypatch.setenv("VANCE_TRANSPORT", "litellm")
    sent = task_env({"VANCE_MODEL": "openai/driver", "VANCE_HOME": "/h", "OPENAI_API_KEY": "k", "PATH": "/bin"})
    assert sent == {"VANCE_MODEL": "openai/driver", "VANCE_HOME": "/h"}  # no provider key, nothing else
    with task_environ(sent):
        assert os.environ["VANCE_MODEL"] == "openai/driver" and os.environ["VANCE_HOME"] == "/h"
        assert "VANCE_TRANSPORT" not in os.environ  # exactly the driver's VANCE_* variables
    assert os.environ["VANCE_MODEL"] == "openai/worker-own" and os.environ["VANCE_TRANSPORT"] == "litellm"
    assert os.environ.get("VANCE_HOME") != "/h"
    assert resolve_address("a:1", {"RAY_ADDRESS": "b:2"}) == "a:1"
    assert resolve_address(None, {"RAY_ADDRESS": " b:2 "}) == "b:2"
    assert resolve_address(" ", {}) is None


def test_a_worktree_left_by_a_kill_is_removed_from_its_repository_before_it_is_made_again(src, tmp_path):
    from vance_cli.runtime.benjy_batch import git_top, make_workspace

    def git(*args):
        return subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    dest = tmp_path / "batch" / "runs" / "a"
    first, kind, warning = make_workspace(src, dest, top=git_top(src))
    assert (first, kind, warning) == (dest, "worktree", None) and (dest / "check.py").is_file()
    (dest / "half-done.txt").write_text("left by the killed preparation\n")
    again, kind, _ = make_workspace(src, dest, top=git_top(src))
    assert again == dest and kind == "worktree" and not (dest / "half-done.txt").exists()
    assert git("worktree", "list").count(str(dest)) == 1 and len(git("worktree", "list").splitlines()) == 2


def test_an_internal_error_in_one_run_fails_that_run_only(env, src, tmp_path, monkeypatch):
    from vance_cli.runtime import benjy_service

    real_run = benjy_service.BenjyService.run
    crashed = []

    async def run(self, pid):
        process = self.runtime.store.load(pid)
        if "one" in json.dumps([m.content for m in process.inbox]) and not crashed:
            crashed.append(pid)
            raise RuntimeError("a bug in one run")
        return await real_run(self, pid)

    monkeypatch.setattr(benjy_service.BenjyService, "run", run)
    goals = write_goals(tmp_path, GOALS[1:])  # one, two
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--jobs", "2", env=env)
    assert r.returncode == 1, r.stderr
    rows = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines()[1:3]}
    assert rows == {"one": "FAILED", "two": "DONE"}, r.stdout  # the other run finished; the table is there
    assert f"one (process {crashed[0]}) FAILED: RuntimeError: a bug in one run" in r.stdout
    assert "internal error" not in r.stderr and "ExceptionGroup" not in r.stderr
    again = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), env=env)  # the rerun takes it up
    assert again.returncode == 0 and "one: DONE" in again.stderr, again.stderr


@pytest.mark.timeout(60)  # before the fix: 20 Ray retries of ~41 s each (13.7 minutes)
def test_an_unreachable_ray_address_fails_within_seconds_before_the_approval_and_makes_nothing(env, src, tmp_path, vance_home):
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()  # the Ray tests' own instance runs in their module only
    import socket

    with socket.socket() as probe:  # a port nothing listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    goals = write_goals(tmp_path, GOALS[1:])
    started = time.monotonic()
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--engine", "ray",
                "--ray-address", f"127.0.0.1:{port}", env=env)
    elapsed = time.monotonic() - started
    assert r.returncode == 1 and f"cannot reach the Ray cluster at 127.0.0.1:{port}" in r.stderr, r.stderr
    assert elapsed < 15 and not ray.is_initialized(), elapsed
    assert "approved with --yes" not in r.stderr  # joined (or not) before the approval
    assert list(vance_home.glob("batches/*/runs")) == [] and list(vance_home.glob("batches/*/batch.json")) == []


def test_the_ids_are_saved_once_and_each_workspace_is_made_when_its_run_starts(env, src, tmp_path, monkeypatch):
    from vance_cli.runtime import benjy_batch

    writes = []
    real_write = benjy_batch.atomic_write_json
    monkeypatch.setattr(benjy_batch, "atomic_write_json", lambda path, data: writes.append(path) or real_write(path, data))
    goals = write_goals(tmp_path, GOALS[1:] + [{"id": "three", "goal": "write a third item file"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--jobs", "1", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert len(writes) == 1  # batch.json once for the three runs (it was rewritten after every workspace: N² bytes)
    order = [(e["type"], e.get("id")) for e in json_lines(r.stdout) if e["type"] in ("run_created", "run_finished")]
    assert order == [(kind, gid) for gid in ("one", "two", "three") for kind in ("run_created", "run_finished")]


HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from vance_cli.store.lock import process_lock\n"
    "with process_lock(Path(sys.argv[1]), sys.argv[2]):\n"
    "    print('held', flush=True); time.sleep(60)\n"
)


def test_a_run_another_vance_is_driving_is_busy_not_failed(env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path, GOALS[:2])  # ask (BLOCKED), one
    first = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert first.returncode == 10, first.stderr
    ask = next(row["id"] for row in roots(env) if row["status"] == "BLOCKED")
    path = vance_home / "processes" / f"{ask}.json"  # what `vance benjy answer` in another terminal saves
    data = json.loads(path.read_text())
    data["status"] = "RUNNING"
    path.write_text(json.dumps(data))
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(vance_home / "processes" / f"{ask}.lock"), ask],
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout.readline().strip() == "held"
        r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), env=env)
    finally:
        holder.kill()
        holder.wait()
    assert "FAILED" not in r.stdout, "a run busy in another vance is called FAILED"
    assert r.returncode == 10, r.stdout  # none failed; one waits on something outside the batch
    assert [line.split()[:2] for line in r.stdout.splitlines()[1:3]] == [["ask", "BUSY"], ["one", "DONE"]]
    assert f"ask (process {ask}) is being driven by another vance: process {ask} is in use by vance pid {holder.pid} " in r.stdout, r.stdout
    assert f"watch it with: vance benjy watch {ask} (rerun the batch when it is done)" in r.stdout


def test_a_run_that_stops_short_without_an_interrupt_is_an_error_not_an_interrupt(env, src, tmp_path, monkeypatch):
    from vance_cli.runtime import benjy_service

    real_run = benjy_service.BenjyService.run

    async def run(self, pid):
        process = self.runtime.store.load(pid)
        if "write one item file" in json.dumps([m.content for m in process.inbox]):
            return benjy_service.RunResult(process)  # returns with the run READY, nothing interrupted
        return await real_run(self, pid)

    monkeypatch.setattr(benjy_service.BenjyService, "run", run)
    goals = write_goals(tmp_path, GOALS[1:])  # one (stops short), two
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert [line.split()[:2] for line in r.stdout.splitlines()[1:3]] == [["one", "STOPPED"], ["two", "DONE"]]
    assert r.returncode == 1, r.stderr  # 130 means interrupted: nothing was


def test_without_an_address_the_ray_session_is_a_new_local_instance_not_a_running_cluster(monkeypatch):
    """ray.init() with no address joins a cluster `ray start` left running (whose workers lack the
    command's provider keys); address="local" always starts a new instance, as the docs say."""
    import types

    from vance_cli.ray_cluster import JOIN_TRIES, ray_session

    calls = []
    fake = types.SimpleNamespace(
        __version__="2.60.0", is_initialized=lambda: False, shutdown=lambda: calls.append("shutdown"),
        init=lambda **kw: calls.append(kw),
    )
    monkeypatch.setitem(sys.modules, "ray", fake)  # only what ray_session passes to Ray is looked at
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    for key in JOIN_TRIES:
        monkeypatch.delenv(key, raising=False)
    with ray_session(None) as joined:
        assert joined is fake
    assert calls[0]["address"] == "local" and calls[1:] == ["shutdown"]
    assert not any(key in os.environ for key in JOIN_TRIES)  # a local start reads it as seconds: left alone
