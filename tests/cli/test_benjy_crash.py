"""kill -9 anywhere: `vance benjy run` SIGKILLed at named points, each resumed with `vance benjy resume` to DONE.

The run: two items over the real HTTP transport with a stateless scripted server; item 2 fails its
check once, so the route call and a retry worker are on the path. Each case kills the run at one
point (VANCE_TEST_CRASH_AT, vance_cli/crashpoints.py) — every phase of the Benjy loop, a
worker's turn, the spawn and the delivery of a worker's reply — then resumes it and checks that
no item was lost or done twice and that the journal and the todos agree with the queue.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.engines.benjy_brain import Brain
from tests.helpers import Preloaded, run_cli
from vance_cli.crashpoints import POINTS
from vance_cli.engines.benjy.state import load_state
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import Status

CHECK_PY = "import glob, sys\nbad = [f for f in sorted(glob.glob('item*.txt')) if 'BAD' in open(f).read()]\nprint('bad files:', bad) if bad else print('ok')\nsys.exit(1 if bad else 0)\n"

# (point, n): the n-th time the run passes the point. A clean run passes save.benjy 7 times
# (one save per DO, which holds IDLE and the worker in flight, one before each check, DONE),
# save.ford 18, the spawn points 3, the controller 5, the check 3 and each delivery point 3
# (a worker's turn: open, tool call recorded, started, result, reply = saves 1..5 of each worker).
CASES = [
    ("save.benjy", 1),  # interpreted and DO #1 recorded: the worker's id is on disk, its file is not
    ("save.benjy", 2),
    ("save.benjy", 3),
    ("save.benjy", 4),  # around item 2's failed check and its route
    ("save.benjy", 5),
    ("save.benjy", 6),
    ("save.benjy", 7),  # DONE written, todos cleared
    ("save.ford", 1),  # a worker's turn opened
    ("save.ford", 2),  # its tool call recorded, not run
    ("save.ford", 3),  # its tool result saved
    ("benjy.before_spawn", 1),  # the worker's id saved, its file not written
    ("benjy.before_spawn", 3),  # the retry worker of item 2
    ("benjy.after_spawn", 2),
    ("benjy.before_check", 2),
    ("benjy.after_controller", 1),  # interpret answered, nothing saved
    ("benjy.after_controller", 3),  # the route call of item 2
    ("benjy.after_controller", 5),  # reflect
    ("save.ford", 4),  # a worker's last save: it replied, nothing is delivered yet
    ("deliver.taken_in", 1),  # Benjy saved the reply as taken in, the worker is not closed
    ("deliver.taken_in", 3),
    ("deliver.child_marked", 2),
]


def _files(n: int, prompt: str) -> list[tuple[str, str]]:
    return [(f"item{n}.txt", "BAD\n" if n == 2 and "did not pass" not in prompt else f"item {n}\n")]


def _kill(preloaded: Preloaded, root: Path, url: str, point: str, n: int) -> tuple[dict, subprocess.CompletedProcess]:
    """Start the run in its own process and let it SIGKILL itself at the n-th pass of ``point``."""
    home, ws, cwd = root / "home", root / "ws", root / "cwd"
    for folder in (home, ws, cwd):
        folder.mkdir(parents=True)
    (ws / "check.py").write_text(CHECK_PY)
    env = {"VANCE_HOME": str(home), "VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": url}
    killed = preloaded.run(
        "benjy",
        "run",
        "write the item files",
        "--workspace",
        str(ws),
        "--check",
        f"{sys.executable} check.py",
        env={**env, "VANCE_TEST_CRASH_AT": f"{point}:{n}"},
        cwd=cwd,
    )
    return env, killed


def _resume(root: Path, name: str, env: dict, killed: subprocess.CompletedProcess) -> str | None:
    """Resume the killed run to DONE and verify it; None when it holds, else what went wrong."""
    if killed.returncode != -9:
        return f"{name}: the run was not killed there (exit {killed.returncode}): {killed.stderr[-300:]}"
    pid = re.search(r"benjy run (\S+)", killed.stderr).group(1)
    resumed = run_cli("benjy", "resume", pid, env=env, cwd=root / "cwd")
    if resumed.returncode != 0:
        return f"{name}: resume exited {resumed.returncode}: {resumed.stderr[-500:]}"
    return _verify(name, root / "home", root / "ws", pid, resumed.stdout)


def _verify(name: str, home: Path, ws: Path, pid: str, stdout: str) -> str | None:
    store = ProcessStore(home / "processes")
    processes = {p.id: p for p in store.list()[0]}
    root = processes[pid]
    state = load_state(root)
    problems = []
    if root.status != Status.DONE:
        problems.append(f"root is {root.status.value}")
    if [(i.status, i.attempts) for i in state.items] != [("done", 1), ("done", 2)]:
        problems.append(f"items {[(i.status, i.attempts) for i in state.items]}")
    kids = [p for p in processes.values() if p.parent == pid]
    per_item = {n: sum(1 for k in kids if (k.title or "").startswith(f"#{n} ")) for n in (1, 2)}
    if per_item != {1: 1, 2: 2}:  # a worker per attempt: none lost, none spawned twice
        problems.append(f"workers per item {per_item}")
    if state.counters.workerSpawns != 3:
        problems.append(f"workerSpawns {state.counters.workerSpawns}")
    for k in kids:
        if k.status != Status.DONE or (k.delivery.to if k.delivery else None) != pid:
            problems.append(f"worker {k.id} is {k.status.value}, delivery {k.delivery}")
    journal = [m.content or "" for m in root.history if m.meta.get("kind") == "journal"]

    def count(prefix: str) -> int:
        return sum(1 for j in journal for block in j.split("\n\n") if block.startswith(prefix))

    expected = {
        "**GOAL:**": 1,
        "**INTERPRET:**": 1,
        "**DO #1:** worker": 1,
        "**DO #2:** worker": 2,
        "**REPLY #1:**": 1,
        "**REPLY #2:**": 2,
        "**CHECK #2:** failed": 1,
        "**CLOSE #1:** done": 1,
        "**CLOSE #2:** done": 1,
        "**REFLECT:** achieved": 1,
        "**DONE:**": 1,
    }
    got = {k: count(k) for k in expected}
    if got != expected:
        problems.append(f"journal records {got}")
    # every worker a DO record names exists, and every delivered reply came from one
    named = set(re.findall(r"worker `([^`]+)`", "\n".join(journal)))
    if named != {k.id for k in kids}:
        problems.append(f"journal names workers {sorted(named)}, files {sorted(k.id for k in kids)}")
    if sum(1 for m in root.history if m.meta.get("kind") == "synthesis") != 1:
        problems.append("not exactly one final synthesis")
    if root.todos != [] or root.inbox != [] or state.queue != [] or state.inFlight is not None:
        problems.append(f"todos {root.todos}, inbox {root.inbox}, queue {state.queue}, in flight {state.inFlight}")
    texts = [(ws / f"item{n}.txt").read_text() if (ws / f"item{n}.txt").is_file() else None for n in (1, 2)]
    if texts != ["item 1\n", "item 2\n"]:
        problems.append(f"workspace files {texts}")
    if "#2 [done] write item2.txt (2 attempts)" not in stdout:
        problems.append("the resumed run did not print the report")
    if [p for p in (home / "processes").iterdir() if p.name.endswith(".tmp")]:
        problems.append("temp files left behind")
    return f"{name}: " + "; ".join(problems) if problems else None


def test_every_crash_point_is_covered_by_a_case():
    # deliver.parent_saved is the delivery to a parent that does not record its workers (a chat
    # hub); a Benjy run never passes it. tests/runtime/test_scheduler.py crashes there by hand.
    # The batch.* points are passed by the batches only: `vance benjy batch`
    # (tests/cli/test_benjy_batch.py) and `vance structure --batch` (tests/structure/test_batch_crash.py).
    batch = {p for p in POINTS if p.startswith("batch.")}
    assert batch == {"batch.ids_saved", "batch.workspace_ready", "batch.answered", "batch.appended"}
    # The store's history-log points need a long chat: tests/store/test_history_log.py.
    assert {point for point, _ in CASES} == set(POINTS) - {"deliver.parent_saved", "store.log_written", "store.log_appended"} - batch
    assert len(CASES) >= 20


def test_killed_anywhere_resumes_to_done_without_losing_or_repeating_an_item(fake_openai, tmp_path):
    fake_openai.responder = Brain(items=2, worker_files=_files).reply_body
    # Two streams of work at once: runs are killed one after another in their own processes (forked
    # from one that imported vance_cli already: a kill point is reached without paying Python's
    # start-up), while this process resumes each killed run (a normal command: run_cli).
    with Preloaded() as preloaded, ThreadPoolExecutor(max_workers=1) as pool:
        killing = [
            pool.submit(_kill, preloaded, tmp_path / f"case{i}", fake_openai.url, *case) for i, case in enumerate(CASES)
        ]
        results = [
            _resume(tmp_path / f"case{i}", f"{point}:{n}", *job.result())
            for i, ((point, n), job) in enumerate(zip(CASES, killing, strict=True))
        ]
    failures = [r for r in results if r]
    assert not failures, "\n".join(failures)
    assert os.environ.get("VANCE_TEST_CRASH_AT") is None  # the suite itself never crashes
