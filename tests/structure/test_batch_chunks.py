"""IN cut into chunks (the Ray engine's read tasks) gives exactly the records the local reader gives.

``plan_chunks`` cuts IN at record boundaries, leaving out ids OUT already holds; ``read_chunk``
reads one chunk on its own from its byte offset. Whatever the chunk size and whichever ids are
done, the chunks read one after another are ``read_records`` without the done ids: the same ids
(line and row numbers included), texts and bad-record errors. No Ray needed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.structure.test_batch import tickets_folder
from vance_cli.store.jsonl import IdSet
from vance_cli.structure.batch import MAX_RECORD_BYTES, plan_chunks, read_chunk, read_records


def _jsonl(path: Path) -> Path:
    path.write_bytes(
        b"".join(json.dumps(row).encode() + b"\n" for row in [
            {"id": "a", "prompt": "fix the login"},
            {"id": 70, "prompt": "export crashes"},
            {"prompt": "no id: line 3"},
            {"id": "e", "prompt": "   "},
            [1, 2],
        ])
        + b"{not json\n\n\n"  # a bad line, then two blank lines (counted, no record)
        + b'{"id": "latin", "prompt": "caf\xe9"}\n'
        + json.dumps({"id": "long", "prompt": "x" * MAX_RECORD_BYTES}).encode() + b"\n"
        + json.dumps({"prompt": "lone \ud800 surrogate"}).encode() + b"\n"
        + b"".join(json.dumps({"prompt": f"record {i}"}).encode() + b"\n" for i in range(9))
        + b'{"prompt": "the last line has no newline"}'
    )
    return path


def _csv(path: Path) -> Path:
    path.write_bytes(
        b"\xef\xbb\xbfid,text,other\r\n"  # a BOM and CRLF line ends
        b'n1,"first, with a comma",x\r\n'
        + "n1b,naïve — ✓ 🙂,x\r\n".encode()  # characters of two, three and four bytes
        + b'n2,"two\nlines",y\r\n'
        b"\r\n"  # a blank line: no row
        b"n3,,z\r"  # an old Mac line end
        b"n4,caf\xe9,w\n"  # not UTF-8
        b',"quoted ""inner"" text",v\n'  # no id: its row number
        b'n6,"an unclosed quote\n'
        b"goes on\n"
        b'n7,ok",\n'
        b"n8,plain\x00nul,u\n"
        + b"n9," + b"y" * (MAX_RECORD_BYTES + 1) + b",t\n"  # a field longer than the csv module takes
        + b"".join(f"m{i},row {i},.\n".encode() for i in range(7))
    )
    return path


def _folder(path: Path) -> Path:
    tickets_folder(path)
    for i in range(9):
        (path / f"n{i}.txt").write_text(f"note {i}")
    return path


@pytest.mark.parametrize("make, field", [(_jsonl, "prompt"), (_csv, "text"), (_folder, "prompt")], ids=["jsonl", "csv", "folder"])
def test_chunks_read_alone_give_the_records_of_the_local_reader(tmp_path, make, field):
    source = make(tmp_path / ("in" if make is _folder else f"in.{make.__name__[1:]}"))
    records = list(read_records(source, field))
    assert len({r.id for r in records}) == len(records) > 12
    assert any(r.error for r in records) and any(r.prompt for r in records)
    rng = random.Random(20)
    for size in (1, 2, 3, 5, 100):
        for share in (0.0, 0.3, 0.9, 1.0):
            done = IdSet()
            done_ids = {r.id for r in records if rng.random() < share}
            for record_id in done_ids:
                done.add(record_id)
            chunks, skipped = plan_chunks(source, field, done, size)
            assert skipped == len(done_ids)
            read = [record for chunk in chunks for record in read_chunk(source, field, chunk)]
            assert read == [r for r in records if r.id not in done_ids], (size, share)
            for chunk in chunks:
                fresh = chunk.count - len(chunk.skip)
                assert 1 <= fresh <= size and len(chunk.skip) <= size


def test_a_csv_row_spanning_lines_and_a_bad_row_keep_their_numbers(tmp_path):
    records = {r.id: r for r in read_records(_csv(tmp_path / "in.csv"), "text")}
    assert records["n2"].prompt == "two\nlines" and records["n3"].error == "the prompt is empty"
    assert records["5"].error == "row 5 is not UTF-8 text" and records["6"].prompt == 'quoted "inner" text'
    assert records["n6"].prompt == "an unclosed quote\ngoes on\nn7,ok" and records["n8"].prompt == "plain\x00nul"
    assert records["9"].error.startswith("row 9 is not CSV: field larger than field limit")
    assert records["m0"].where == "row 10"
