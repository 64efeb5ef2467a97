"""`vance benjy batch --engine ray`: a local Ray instance started here (one for the module: Ray's
start-up is the slow part), the same batches as tests/cli/test_benjy_batch.py.

The command runs in this process (run_cli), so it finds Ray already joined and uses that instance
(ray_cluster.ray_session); its tasks run in Ray's worker processes, which reach the scripted server
over HTTP and get the test's VANCE_* variables with each task.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from tests.cli.test_benjy_batch import CHECK, GOALS, batch_brain, env, roots, snapshot, src, write_goals  # noqa: F401 (fixtures)
from tests.helpers import json_lines, run_cli

ray = pytest.importorskip("ray")

from vance_cli.cli.common import model_factory as REAL_FACTORY  # noqa: E402 (the one crashing_factory wraps)


def _results(stdout):
    """Per goal id: (status, attempts, tokens, the files of its workspace), from the --json summary."""
    final = json.loads(stdout.splitlines()[-1])
    assert final["type"] == "batch_finished"
    return {run["id"]: (run["status"], run["attempts"], run["tokens"], snapshot(Path(run["workspace"]))) for run in final["runs"]}


def test_the_same_batch_gives_the_same_results_on_both_engines(ray_instance, env, src, tmp_path):
    goals = write_goals(tmp_path)
    homes = {engine: tmp_path / f"home-{engine}" for engine in ("local", "ray")}
    out = {}
    for engine, home in homes.items():
        home.mkdir()
        r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--engine", engine, "--json",
                    env={**env, "VANCE_HOME": str(home)})
        assert r.returncode == 10, r.stderr  # the run with a question is BLOCKED on both, the others DONE
        out[engine] = _results(r.stdout)
    assert out["ray"] == out["local"]
    assert {gid: res[0] for gid, res in out["ray"].items()} == {"ask": "BLOCKED", "one": "DONE", "two": "DONE"}
    assert out["ray"]["one"][3]["item1.txt"] == b"item 1\n" and out["ray"]["ask"][3]["item1.txt"] == b"BAD\n"
    ray_home = homes["ray"]
    rows = roots({**env, "VANCE_HOME": str(ray_home)})
    assert len(rows) == 3
    # `vance benjy answer` reaches the run a Ray task left BLOCKED
    (ask,) = [row["id"] for row in rows if row["status"] == "BLOCKED"]
    a = run_cli("benjy", "answer", ask, "item 1 please: write fine", env={**env, "VANCE_HOME": str(ray_home)})
    assert a.returncode == 0, a.stderr


def test_a_killed_ray_worker_loses_and_duplicates_no_run(ray_instance, fake_openai, env, src, tmp_path, vance_home):
    brain = batch_brain()
    arrived, released = threading.Event(), threading.Event()

    def responder(body):
        text = json.dumps(body.get("messages"))
        if "SLOW" in text and body.get("tools") and not released.is_set():  # the slow run's worker, first call
            arrived.set()
            released.wait(60)
        return brain.reply_body(body)

    fake_openai.responder = responder
    goals = write_goals(tmp_path, [*GOALS[1:], {"id": "slow", "goal": "write the SLOW item file"}])
    killed: dict = {}

    def killer():
        if not arrived.wait(90):
            return
        (state,) = vance_home.glob("batches/*/batch.json")
        pid = json.loads(state.read_text())["runs"]["slow"]["processId"]
        holder = json.loads((vance_home / "processes" / f"{pid}.lock").read_text())
        killed.update(holder=holder["pid"], run=pid)
        os.kill(holder["pid"], signal.SIGKILL)  # the Ray worker driving the run, in the middle of it
        released.set()

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--engine", "ray", "--json", env=env)
    finally:
        released.set()
        thread.join(5)
    assert killed and killed["holder"] != os.getpid(), r.stderr
    assert r.returncode == 0, r.stderr
    final = json.loads(r.stdout.splitlines()[-1])
    assert {run["id"]: run["status"] for run in final["runs"]} == {"one": "DONE", "two": "DONE", "slow": "DONE"}
    # Ray ran the task again on a new worker; it took the run up from its file: the same process,
    # its one worker not spawned twice, its file written once
    slow = next(run for run in final["runs"] if run["id"] == "slow")
    assert slow["process_id"] == killed["run"] and slow["attempts"] == 1
    listed = roots(env)
    assert sorted(row["id"] for row in listed) == sorted(run["process_id"] for run in final["runs"])
    children = [row for row in json_lines(run_cli("ps", "--json", env=env).stdout) if row["parent"] == killed["run"]]
    assert len(children) == 1
    assert (Path(slow["workspace"]) / "item1.txt").read_text() == "item 1\n"


def test_a_ray_instance_already_joined_is_used_and_left_running(ray_instance):
    from vance_cli.ray_cluster import ray_session

    with ray_session("10.255.255.1:1") as joined:  # not dialled: this process has joined one already
        assert joined is ray and ray.is_initialized()
    assert ray.is_initialized()


def crashing_factory(name, settings):
    """The real model client, raising a bug for the goal "write one item file" (sent by value to Ray's workers)."""
    inner = REAL_FACTORY(name, settings)
    complete, stream = inner.complete, inner.stream

    def bad(request):
        return "write one item file" in json.dumps([str(m.content) for m in request.messages])

    async def crashing_complete(request):
        if bad(request):
            raise RuntimeError("a bug in the model client")
        return await complete(request)

    async def crashing_stream(request, on_delta):
        if bad(request):
            raise RuntimeError("a bug in the model client")
        return await stream(request, on_delta)

    inner.complete, inner.stream = crashing_complete, crashing_stream
    return inner


def test_an_internal_error_in_one_run_gives_the_same_failed_row_on_both_engines(ray_instance, env, src, tmp_path, monkeypatch):
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr("vance_cli.cli.common.model_factory", crashing_factory)
    goals = write_goals(tmp_path, GOALS[1:])  # one, two
    rows = {}
    for engine in ("local", "ray"):
        home = tmp_path / f"home-{engine}"
        home.mkdir()
        r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", "--engine", engine, "--json",
                    env={**env, "VANCE_HOME": str(home)})
        assert r.returncode == 1 and r.stdout, r.stderr
        final = json.loads(r.stdout.splitlines()[-1])
        rows[engine] = {run["id"]: (run["status"], run["reason"]) for run in final["runs"]}
    assert rows["local"] == rows["ray"]
    assert rows["ray"] == {"one": ("FAILED", "RuntimeError: a bug in the model client"), "two": ("DONE", None)}
