"""`vance structure --batch IN --engine ray`: on a local Ray instance the test starts
(tests/rayinstance.py: two CPUs, so two workers), against the fake server of tests/structure/test_batch.py.

The command runs in this process (run_cli) and finds Ray joined; its workers are Ray actors (their
own processes) that reach the fake server over HTTP with the test's VANCE_* variables.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import threading
from pathlib import Path

import pytest

from tests.helpers import json_lines
from tests.structure.test_batch import answer, batch, by_id, sent, served, user_text, write_jsonl  # noqa: F401 (fixture)
from tests.structure.test_batch_parquet import rows

pytest.importorskip("ray.data")
pq = pytest.importorskip("pyarrow.parquet")


def _records(n: int, slow: int | None = None) -> list:
    rows: list = [{"id": f"r{i}", "prompt": "SLOW one" if i == slow else f"record {i}"} for i in range(n)]
    rows[3:3] = [{"id": "empty", "prompt": " "}, {"prompt": "NEED a ticket"}, "{not json", {"id": 7, "prompt": "an integer id"}]
    return rows


def test_the_same_file_gives_the_same_lines_on_both_engines(ray_instance, served, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", _records(14))
    local = batch(tmp_path, source, "--out", str(tmp_path / "local.jsonl"))
    assert local.returncode == 6, local.stderr  # the bad records
    served.reset()
    result = batch(tmp_path, source, "--out", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--jobs", "4", "--json")
    assert result.returncode == 6, result.stderr
    on_ray, on_local = by_id(tmp_path / "ray.jsonl"), by_id(tmp_path / "local.jsonl")
    assert on_ray == on_local and len(on_ray) == 18
    assert on_ray["5"]["status"] == "need-more-input" and on_ray["6"]["errors"][0].startswith("line 6 is not valid JSON")
    assert sorted(sent(served)) == sorted([f"record {i}" for i in range(14)] + ["NEED a ticket", "an integer id"])
    events = json_lines(result.stdout)
    assert (events[0]["engine"], events[0]["workers"], events[0]["jobs"]) == ("ray", 2, 4)
    assert (events[-1]["done"], events[-1]["ok"], events[-1]["error"], events[-1]["exitCode"]) == (18, 15, 2, 6)
    served.reset()
    again = batch(tmp_path, source, "--out", str(tmp_path / "ray.jsonl"), "--engine", "ray")
    assert again.returncode == 6 and served.requests == [] and "18 done before" in again.stdout
    assert "ray" not in result.stderr.lower(), result.stderr  # Ray's own logs stay out of the command's output


def _pid_of_client(port: int, server_port: int) -> int | None:
    """The process holding the client end of a TCP connection to ``server_port`` from ``port``
    (Linux: /proc/net/tcp gives the socket's inode, /proc/*/fd who holds it)."""
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for row in fh.readlines()[1:]:
                cols = row.split()
                if int(cols[1].rsplit(":", 1)[1], 16) == port and int(cols[2].rsplit(":", 1)[1], 16) == server_port:
                    inode = cols[9]
    if inode is None:
        return None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]" for fd in os.listdir(f"/proc/{pid}/fd")):
                return int(pid)
        except OSError:
            continue
    return None


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="finds the worker through /proc (Linux)")
def test_a_worker_killed_mid_batch_loses_and_duplicates_no_record(ray_instance, served, tmp_path):
    arrived, released = threading.Event(), threading.Event()
    killed: dict = {}

    def responder(body):
        if body.get("messages") and "SLOW" in user_text(body) and not released.is_set():
            with served._lock:
                killed["peer"] = served.peers[next(i for i, b in enumerate(served.requests) if b is body)]
            arrived.set()
            released.wait(60)  # the worker that asked is killed meanwhile
        return answer(body)

    def killer():
        if not arrived.wait(90):
            return
        pid = _pid_of_client(killed["peer"][1], served.port)
        if pid is not None:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                killed.update(pid=pid, cmdline=fh.read().decode(errors="replace"))
            os.kill(pid, signal.SIGKILL)
        released.set()

    served.responder = responder
    source = write_jsonl(tmp_path / "in.jsonl", _records(20, slow=9))
    out_path = tmp_path / "out.parquet"  # Parquet: the lines go to out.parquet.partial.jsonl until the end
    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        result = batch(tmp_path, source, "--out", str(out_path), "--engine", "ray", "--jobs", "2")
    finally:
        released.set()
        thread.join(5)
    assert killed.get("pid") not in (None, os.getpid()), killed
    assert killed["cmdline"].startswith("ray::"), killed  # a Ray worker, in the middle of a chunk
    assert result.returncode == 6, result.stderr
    ids = pq.read_table(out_path, columns=["id"]).column("id").to_pylist()
    assert sorted(ids) == sorted(["empty", "5", "6", "7", *(f"r{i}" for i in range(20))])  # each record once
    assert rows(out_path)["r9"]["data"]["title"] == "SLOW one"
    assert not (tmp_path / "out.parquet.partial.jsonl").exists()
    assert sent(served).count("SLOW one") == 2  # asked again by the worker that took the chunk up


def test_a_worker_structures_its_chunk_and_says_when_the_model_keeps_failing(served, tmp_path, vance_home):
    """The worker class alone, in this process (no Ray): one client for all its chunks, the OUT
    lines of a chunk, and a last row saying the batch stopped when 8 records in a row failed."""
    import pyarrow

    from vance_cli.cli.common import structure_service
    from vance_cli.config.context import load_context
    from vance_cli.structure.batch import Record, prepare_batch
    from vance_cli.structure.batch_ray import RECORD, StructureWorker, record_of, record_text
    from vance_cli.structure.service import StructureRequest
    from tests.structure.test_batch import SCHEMA

    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\n")
    _, settings = load_context()
    made = []

    def make_service():
        made.append(1)
        return structure_service(settings)

    request = StructureRequest(prompt="", schema=SCHEMA, schemaMode="json", maxLoops=1)
    plan = asyncio.run(prepare_batch(structure_service(settings), request))
    asyncio.run(plan.model.aclose())
    worker = StructureWorker(make_service, dataclasses.replace(plan, model=None), {}, 1)  # one in flight: a fixed order

    def chunk(records):
        table = worker(pyarrow.table({RECORD: [record_text(r) for r in records]}))
        return [None if t is None else json.loads(t) for t in table.column("line").to_pylist()], table.column("stop").to_pylist()

    try:
        lines, stops = chunk([Record("a", prompt="one"), Record("b", error="the prompt is empty"), Record("c", prompt="x\ud800")])
        assert [(line["id"], line["status"]) for line in lines] == [("a", "ok"), ("b", "error"), ("c", "ok")]
        assert stops == [None] * 3 and lines[1]["errors"] == ["the prompt is empty"]
        lone = Record("\udcff", prompt="x\ud800", where="line 3")
        assert record_of(pyarrow.array([record_text(lone)]).to_pylist()[0]) == lone  # through Arrow unchanged
        served.responder = None
        for _ in range(8):
            served.enqueue_error(500)
        lines, stops = chunk([Record(f"f{i}", prompt=f"fail {i}") for i in range(12)])
        assert lines[-1] is None and stops[-1].startswith("stopped: the last 8 records failed in the model call")
        assert len(lines) == 9 and all(line["status"] == "error" for line in lines[:-1])
        assert made == [1]  # one service, one client, for every chunk
    finally:
        worker.close()
