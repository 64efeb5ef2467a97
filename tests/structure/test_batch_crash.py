"""kill -9 in the middle of `vance structure --batch`, then the same command again: nothing lost, nothing twice.

Each case kills a batch of N records at a random point: at a named crash point (a record's line
made but not appended, or appended but not fsynced; ``VANCE_TEST_CRASH_AT``, the n-th record
with n random) or with a real SIGKILL from outside at a random moment while it runs. Then it
reruns the command and checks, with the requests the server saw:

- OUT holds exactly one line per record, every one ok (nothing lost, nothing written twice);
- the rerun asked the model about exactly the records OUT did not hold after the kill (nothing
  that was done is extracted again).

The random choices are printed (``-s``) with their seed, so a failure can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import Preloaded, json_lines, run_cli, subprocess_env
from tests.structure.test_batch import SCHEMA, answer, user_text

N = 40
SEED = int(os.environ.get("VANCE_BATCH_CRASH_SEED", "0")) or random.randrange(1, 10**6)


def _setup(root: Path, url: str) -> tuple[dict, Path, Path]:
    root.mkdir(parents=True)
    (root / "home").mkdir()
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    source = root / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"r{i}", "prompt": f"record {i}"}) + "\n" for i in range(N)))
    env = {"VANCE_HOME": str(root / "home"), "VANCE_MODEL": "openai/test-model", "VANCE_API_BASE": url,
           "VANCE_API_KEY": "test", "NO_COLOR": "1"}
    return env, source, root / "out.jsonl"


def _args(root: Path, source: Path, out: Path) -> list[str]:
    return ["structure", "--batch", str(source), "--schema", str(root / "schema.json"), "--out", str(out), "--jobs", "4"]


def _ids(out: Path) -> list[str]:
    return [line["id"] for line in json_lines(out.read_text())] if out.exists() else []


def _check_rerun(server, root: Path, env: dict, source: Path, out: Path, case: str) -> None:
    survived = _ids(out)
    assert len(survived) == len(set(survived)), f"{case}: an id twice after the kill"
    server.reset()
    # Its own key: a request of the killed process a busy server records only now is not the rerun's.
    rerun = run_cli(*_args(root, source, out), env={**env, "VANCE_API_KEY": "rerun"})
    assert rerun.returncode == 0, f"{case}: {rerun.stderr}"
    asked = sorted(
        user_text(body)
        for body, headers in zip(server.requests, server.request_headers, strict=True)
        if body.get("messages") and headers.get("authorization") == "Bearer rerun"
    )
    missing = sorted(f"record {i}" for i in range(N) if f"r{i}" not in set(survived))
    assert asked == missing, f"{case}: the rerun asked {asked}, OUT lacked {missing}; its stderr: {rerun.stderr}"
    final = json_lines(out.read_text())
    assert sorted(line["id"] for line in final) == sorted(f"r{i}" for i in range(N)), case
    assert all(line["status"] == "ok" and line["data"]["title"] == f"record {line['id'][1:]}" for line in final), case


@pytest.fixture
def preloaded():
    with Preloaded() as forks:
        yield forks


def test_killed_at_crash_points_then_rerun(fake_openai, tmp_path, preloaded):
    fake_openai.responder = answer
    rng = random.Random(SEED)
    for number, point in enumerate(["batch.answered", "batch.appended", rng.choice(["batch.answered", "batch.appended"])]):
        n = rng.randrange(1, N)
        case = f"seed {SEED}: {point}:{n}"
        print(case)
        root = tmp_path / f"case{number}"
        env, source, out = _setup(root, fake_openai.url)
        fake_openai.reset()
        killed = preloaded.run(*_args(root, source, out), env={**env, "VANCE_TEST_CRASH_AT": f"{point}:{n}"}, cwd=root)
        assert killed.returncode == -signal.SIGKILL, f"{case}: {killed.returncode} {killed.stderr}"
        written = _ids(out)
        # answered:n dies before the n-th line is written, appended:n right after it
        assert len(written) == (n - 1 if point == "batch.answered" else n), case
        assert len(fake_openai.requests) >= len(written), case
        _check_rerun(fake_openai, root, env, source, out, case)


def test_killed_from_outside_at_a_random_moment_then_rerun(fake_openai, tmp_path):
    def slow(body):
        time.sleep(0.02)
        return answer(body)

    fake_openai.responder = slow
    rng = random.Random(SEED + 1)
    # kill once this many lines are in OUT, plus a random pause: at least half the records (and
    # 100 ms of the server's time) are still to do then, so the kill lands inside the batch
    wait_for = rng.randrange(1, N // 2)
    pause = rng.uniform(0, 0.01)
    case = f"seed {SEED}: SIGKILL after {wait_for} lines + {pause:.3f}s"
    print(case)
    env, source, out = _setup(tmp_path / "ext", fake_openai.url)
    child = subprocess.Popen([sys.executable, "-m", "vance_cli", *_args(tmp_path / "ext", source, out)],
                             env=subprocess_env(env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(_ids(out)) < wait_for and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(pause)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(10)
    assert child.returncode == -signal.SIGKILL, f"{case}: the batch ended before the kill"
    _check_rerun(fake_openai, tmp_path / "ext", env, source, out, case)
