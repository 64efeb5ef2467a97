"""`vance structure --batch`: what an OUT that already exists may be (issue 20 review, findings 1, 2, 6).

OUT is appended to and resumed from, so a file that is not a result log must never be taken for
one: it is left exactly as it is and the batch stops before any call. Only a last line without its
newline (a write torn by a power cut) may be cut off.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import json_lines
from tests.structure.test_batch import SCHEMA, batch, by_id, sent, served, write_jsonl  # noqa: F401

RESULT = '{"id": "a", "status": "ok", "data": {"title": "alpha", "n": 5}}\n'


def test_out_is_an_existing_unrelated_file(served, tmp_path):
    """The review's repro: --out naming the batch's own (pretty-printed) schema file."""
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "alpha"}])
    notes = tmp_path / "schema.json"
    notes.write_text(json.dumps(json.loads(notes.read_text()), indent=2) + "\n")
    before = notes.read_bytes()
    r = batch(tmp_path, src, "--out", str(notes))
    assert "properties" in notes.read_text(), (r.returncode, notes.read_text()[:200])
    assert notes.read_bytes() == before
    assert r.returncode == 1 and served.requests == []
    message = r.stderr.strip().splitlines()
    assert str(notes) in r.stderr and "not a result line" in message[0] and "--out" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("text", [
    pytest.param(json.dumps(SCHEMA), id="one-json-line-without-newline"),
    pytest.param("meeting notes\nbuy milk\n", id="text-lines"),
    pytest.param("meeting notes", id="one-text-line-without-newline"),
    pytest.param("\0\0\0\0", id="only-zeros"),
    pytest.param(RESULT + "hello\n", id="a-foreign-last-line-with-its-newline"),
    pytest.param(RESULT + "{}\n\n", id="an-object-without-id-at-the-end"),
    pytest.param('{"id": "a", "prompt": "alpha"}\n', id="an-id-without-status"),
    pytest.param('{"id": "a", "status": "done"}\n', id="an-unknown-status"),
])
def test_an_out_that_is_not_a_result_log_is_an_error_and_left_alone(served, tmp_path, text):
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "alpha"}])
    out = tmp_path / "out.jsonl"
    out.write_bytes(text.encode())
    r = batch(tmp_path, src, "--out", str(out))
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert out.read_bytes() == text.encode() and served.requests == []
    assert str(out) in r.stderr and "--out" in r.stderr and "Traceback" not in r.stderr


def test_only_a_last_line_without_its_newline_is_cut_as_torn(served, tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "alpha"}, {"id": "b", "prompt": "beta"}])
    out = tmp_path / "out.jsonl"
    out.write_text(RESULT + '{"id": "b", "sta')
    r = batch(tmp_path, src, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert sent(served) == ["beta"] and "torn line" in r.stderr
    assert set(by_id(out)) == {"a", "b"} and out.read_text().startswith(RESULT)


def test_an_unrelated_partial_file_of_a_parquet_out_is_left_alone(served, tmp_path):
    pytest.importorskip("pyarrow.parquet")
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "alpha"}])
    out, partial = tmp_path / "out.parquet", tmp_path / "out.parquet.partial.jsonl"
    partial.write_text("my own notes\n")
    r = batch(tmp_path, src, "--out", str(out))
    assert r.returncode == 1 and str(partial) in r.stderr, r.stderr
    assert partial.read_text() == "my own notes\n" and not out.exists() and served.requests == []


def test_hardlinked_out_is_in(served, tmp_path):
    """The review's repro: OUT a hard link to IN was read as finished results (exit 0, nothing sent)."""
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "alpha"}, {"id": "b", "prompt": "beta"}])
    os.link(src, tmp_path / "out.jsonl")
    before = src.read_bytes()
    r = batch(tmp_path, src, "--out", str(tmp_path / "out.jsonl"))
    assert r.returncode != 0 or sent(served), r.stdout
    assert r.returncode == 2 and "is the input file" in r.stderr and served.requests == []
    assert src.read_bytes() == before


def test_a_copy_of_in_as_out_is_not_taken_for_results(served, tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "alpha"}, {"id": "b", "prompt": "beta"}])
    copy = tmp_path / "out.jsonl"
    copy.write_bytes(src.read_bytes())
    r = batch(tmp_path, src, "--out", str(copy))
    assert r.returncode == 1 and "line 1 of" in r.stderr and "not a result line" in r.stderr, r.stderr
    assert copy.read_bytes() == src.read_bytes() and served.requests == []


def test_stale_out_line_for_id_not_in_in(served, tmp_path):
    """The review's repro: an old error line for an id IN no longer has gave exit 6."""
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "alpha"}])
    out = write_jsonl(tmp_path / "out.jsonl", [{"id": "gone", "status": "error", "errors": ["x"]}])
    r = batch(tmp_path, src, "--out", str(out))
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert "1 line(s) in OUT for ids not in IN (not counted)" in r.stdout, r.stdout
    assert set(by_id(out)) == {"gone", "a"}  # the old line stays in OUT


def test_lines_for_ids_not_in_in_are_left_out_of_the_json_summary(served, tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "alpha"}, {"id": "b", "prompt": ""}])
    out = write_jsonl(tmp_path / "out.jsonl", [{"id": "gone", "status": "stale", "errors": ["x"]},
                                               {"id": "a", "status": "ok", "data": {"title": "alpha", "n": 5}}])
    r = batch(tmp_path, src, "--out", str(out), "--json")
    events = json_lines(r.stdout)
    start, summary = events[0], events[-1]
    assert start["done_before"] == 1 and start["notInInput"] == 1
    assert summary["overall"] == {"ok": 1, "need-more-input": 0, "stale": 0, "refused": 0, "error": 1}
    assert summary["notInInput"] == 1 and summary["exitCode"] == 6 and r.returncode == 6  # b is a bad record
