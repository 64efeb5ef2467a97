"""OUT as Parquet (``--out results.parquet``, either engine): the same result lines, as columns.

Imported only for such an OUT (pyarrow: ``vance-cli[ray]``). A Parquet file is only readable
once it is complete, so the batch does not append to it: the lines go to ``partial_path(OUT)``
(``results.parquet.partial.jsonl``, a ``ResultLog`` like any JSONL OUT) as they finish, and when
the batch has been through every record, ``write`` turns that file into OUT (a temp file renamed
over it) and the partial file is removed. Resume is the JSONL one:

- a batch stopped early (Ctrl+C, a crash, the model kept failing) leaves the partial file and
  OUT as it was; the same command goes on from the partial file;
- a rerun over a complete OUT first reads it back into a partial file (``read_back``), so the
  done ids are skipped and transport failures tried again, as with JSONL.

Columns (one row per line): ``id``, ``status``, ``data`` (the object as JSON text), ``need``,
``refusal``, ``errors`` and ``notes`` (lists of text), ``errorType``, ``hint``, ``retry``,
``iterations``, ``schemaOrigin``, ``usage`` (a struct: calls, promptTokens, completionTokens,
totalTokens, cost); a field the line does not have is null. Parquet text is UTF-8: a lone
surrogate (a ``\\ud800`` escape in IN's JSON) is written as U+FFFD.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow
import pyarrow.parquet

from vance_cli.errors import StoreError
from vance_cli.store.atomic import atomic_write_chunks, atomic_write_via, write_error
from vance_cli.text import json_text

ROWS_PER_GROUP = 4096
USAGE = pyarrow.struct([
    ("calls", pyarrow.int64()), ("promptTokens", pyarrow.int64()), ("completionTokens", pyarrow.int64()),
    ("totalTokens", pyarrow.int64()), ("cost", pyarrow.float64()),
])
TEXT_FIELDS = ("need", "refusal", "errorType", "hint", "schemaOrigin")
SCHEMA = pyarrow.schema([
    ("id", pyarrow.string()), ("status", pyarrow.string()), ("data", pyarrow.string()),
    ("need", pyarrow.string()), ("errors", pyarrow.list_(pyarrow.string())), ("refusal", pyarrow.string()),
    ("errorType", pyarrow.string()), ("hint", pyarrow.string()), ("retry", pyarrow.bool_()),
    ("iterations", pyarrow.int64()), ("schemaOrigin", pyarrow.string()), ("notes", pyarrow.list_(pyarrow.string())),
    ("usage", USAGE),
])


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def partial_path(out: Path) -> Path:
    """Where the lines of a Parquet OUT go until the batch is through."""
    return out.with_name(out.name + ".partial.jsonl")


def _utf8(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def _text(value: Any) -> str | None:
    return None if value is None else _utf8(str(value))


def to_row(line: Mapping[str, Any]) -> dict[str, Any]:
    """One OUT line as a row of SCHEMA."""
    row: dict[str, Any] = {"id": _utf8(str(line["id"])), "status": str(line["status"])}
    row["data"] = _utf8(json.dumps(line["data"], ensure_ascii=False, default=str)) if "data" in line else None
    for name in TEXT_FIELDS:
        row[name] = _text(line.get(name))
    for name in ("errors", "notes"):
        row[name] = None if line.get(name) is None else [_utf8(str(item)) for item in line[name]]
    row["retry"] = line.get("retry")
    row["iterations"] = line.get("iterations")
    row["usage"] = line.get("usage")
    return row


def to_line(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row of SCHEMA as the OUT line it came from (the fields it has, in the line's order)."""
    line: dict[str, Any] = {"id": row["id"], "status": row["status"]}
    if row.get("data") is not None:
        line["data"] = json.loads(row["data"])
    for name in ("need", "errors", "refusal", "errorType", "hint", "retry", "iterations", "schemaOrigin", "notes", "usage"):
        if row.get(name) is not None:
            line[name] = row[name]
    return line


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                yield json.loads(raw)


def write(lines_path: Path, out: Path) -> None:
    """OUT made from the partial file's lines, whole: written to a temp file, fsynced, renamed."""

    def make(tmp: Path) -> None:
        with pyarrow.parquet.ParquetWriter(tmp, SCHEMA) as writer:
            group: list[dict[str, Any]] = []
            for line in _lines(lines_path):
                group.append(to_row(line))
                if len(group) == ROWS_PER_GROUP:
                    writer.write_table(pyarrow.Table.from_pylist(group, schema=SCHEMA))
                    group = []
            writer.write_table(pyarrow.Table.from_pylist(group, schema=SCHEMA))

    try:
        atomic_write_via(out, make, sync_folder=True)
    except OSError as exc:
        raise write_error(out, exc, "the output file") from exc


def read_back(out: Path, lines_path: Path) -> None:
    """A complete Parquet OUT back into a partial file of its lines (a rerun goes on from there)."""
    try:
        source = pyarrow.parquet.ParquetFile(out)
    except (OSError, pyarrow.ArrowException) as exc:
        raise StoreError(f"cannot read the output {out} as Parquet: {exc}",
                         hint="pass another file with --out (or remove this one to start over)") from exc
    if not {"id", "status"} <= set(source.schema_arrow.names):
        raise StoreError(f"the output {out} is a Parquet file vance did not write (no id and status columns)",
                         hint="pass another file with --out")

    def chunks() -> Iterator[bytes]:
        for batch in source.iter_batches(batch_size=ROWS_PER_GROUP):
            yield "".join(json_text(to_line(row), default=str) + "\n" for row in batch.to_pylist()).encode("utf-8")

    try:
        atomic_write_chunks(lines_path, chunks(), sync_folder=True)
    except OSError as exc:
        raise write_error(lines_path, exc, "the output file") from exc


def finish(lines_path: Path, out: Path) -> None:
    """The batch went through every record: OUT written from the partial file, which goes."""
    write(lines_path, out)
    try:
        os.unlink(lines_path)
    except FileNotFoundError:
        pass
