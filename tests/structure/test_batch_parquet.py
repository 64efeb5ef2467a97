"""`vance structure --batch IN --out OUT.parquet`: the result lines as a Parquet file, resumable as JSONL.

Through the local engine (the Ray engine writes OUT the same way: tests/structure/test_batch_ray.py
kills a worker with a Parquet OUT). The lines go to OUT.partial.jsonl while the batch runs; OUT is
written whole at the end; a rerun reads a complete OUT back and goes on from it.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.helpers import run_cli
from tests.structure.test_batch import answer, batch, by_id, sent, served, write_jsonl  # noqa: F401 (fixture)

pq = pytest.importorskip("pyarrow.parquet")


def rows(path) -> dict[str, dict]:
    from vance_cli.structure.batch_parquet import to_line

    table = pq.read_table(path)
    lines = [to_line(row) for row in table.to_pylist()]
    ids = [line["id"] for line in lines]
    assert len(ids) == len(set(ids)), f"an id twice in {path}: {ids}"
    return {line["id"]: line for line in lines}


def test_parquet_out_holds_the_lines_of_a_jsonl_out(served, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "fix the login ü"}, {"prompt": "NEED more"},
                                                 {"id": "e", "prompt": ""}, "[1]", {"id": 9, "prompt": "nine"}])
    assert batch(tmp_path, source, "--out", str(tmp_path / "out.jsonl")).returncode == 6
    out = tmp_path / "res" / "out.parquet"
    result = batch(tmp_path, source, "--out", str(out))
    assert result.returncode == 6, result.stderr
    assert rows(out) == by_id(tmp_path / "out.jsonl")
    assert not (tmp_path / "res" / "out.parquet.partial.jsonl").exists()
    table = pq.read_table(out)
    assert table.column_names[:3] == ["id", "status", "data"]
    data = dict(zip(table.column("id").to_pylist(), table.column("data").to_pylist()))  # in finishing order
    assert json.loads(data["a"]) == {"title": "fix the login ü", "n": 15}
    assert f"into {out}" in result.stdout


def test_a_rerun_reads_a_complete_parquet_back_and_retries_transport_failures(served, tmp_path, vance_home):
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\n")
    source = write_jsonl(tmp_path / "in.jsonl", [{"id": f"r{i}", "prompt": f"record {i}"} for i in range(4)])
    out = tmp_path / "out.parquet"
    served.enqueue_error(503)
    assert batch(tmp_path, source, "--out", str(out), "--jobs", "1").returncode == 6
    assert rows(out)["r0"]["retry"] is True
    served.reset()
    again = batch(tmp_path, source, "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert sent(served) == ["record 0"] and "3 done before" in again.stdout
    assert set(rows(out)) == {"r0", "r1", "r2", "r3"} and rows(out)["r0"]["status"] == "ok"
    served.reset()
    assert batch(tmp_path, source, "--out", str(out)).returncode == 0 and served.requests == []
    assert len(pq.read_table(out)) == 4


def test_a_stopped_batch_keeps_its_partial_file_and_leaves_out_alone(served, tmp_path, vance_home):
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\n")
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": f"record {i}"} for i in range(12)])
    out, partial = tmp_path / "out.parquet", tmp_path / "out.parquet.partial.jsonl"
    for _ in range(8):
        served.enqueue_error(500)
    stopped = batch(tmp_path, source, "--out", str(out), "--jobs", "1")
    assert stopped.returncode == 1 and "stopped: the last 8 records failed" in stopped.stderr
    assert not out.exists() and len(by_id(partial)) == 8
    served.reset()
    finished = batch(tmp_path, source, "--out", str(out))
    assert finished.returncode == 0, finished.stderr
    assert len(rows(out)) == 12 and not partial.exists() and len(served.requests) == 12


def test_rows_give_back_every_kind_of_line():
    from vance_cli.structure.batch import error_line
    from vance_cli.structure.batch_parquet import SCHEMA, to_line, to_row

    import pyarrow

    usage = {"calls": 1, "promptTokens": 7, "completionTokens": 3, "totalTokens": 10, "cost": 0.25}
    lines = [
        {"id": "a", "status": "ok", "data": {"title": "x", "n": [1, {"b": None}]}, "iterations": 1, "schemaOrigin": "inline",
         "notes": ["cut off, asked again"], "usage": usage},
        {"id": "b", "status": "need-more-input", "need": "which one?", "iterations": 1, "schemaOrigin": "registry", "usage": usage},
        {"id": "c", "status": "stale", "errors": ["$.n: not an integer"], "iterations": 3, "schemaOrigin": "inline", "usage": usage},
        {"id": "d", "status": "refused", "refusal": "no", "iterations": 1, "schemaOrigin": "inline", "usage": usage},
        error_line("e", "HTTP 503", kind="ModelError", origin="inline", hint="try later", retry=True),
        error_line("f", "the prompt is empty", kind="BadRecord", origin="inferred"),
    ]
    table = pyarrow.Table.from_pylist([to_row(line) for line in lines], schema=SCHEMA)
    back = [to_line(row) for row in table.to_pylist()]
    assert back == lines
    assert [list(line) for line in back] == [list(line) for line in lines]  # the keys in the line's order
    lone = to_row({"id": "x\ud800", "status": "ok", "data": {"t": "y\udcff"}, "usage": usage})
    assert lone["id"] == "x\ufffd" and json.loads(lone["data"]) == {"t": "y\ufffd"}


def test_without_pyarrow_a_parquet_out_says_how_to_install_it(served, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    monkeypatch.delitem(sys.modules, "vance_cli.structure.batch_parquet", raising=False)
    import vance_cli.structure

    monkeypatch.delattr(vance_cli.structure, "batch_parquet", raising=False)
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "x"}])
    result = batch(tmp_path, source, "--out", str(tmp_path / "out.parquet"))
    assert result.returncode == 1 and "a Parquet OUT needs pyarrow" in result.stderr and "vance-cli[ray]" in result.stderr
    assert served.requests == [] and not (tmp_path / "out.parquet").exists()
