"""Batch structure (issue 20): many records through one StructureService plan, N at a time.

The pieces, each usable alone (a Ray engine maps the middle one over its own dataset and writer):

- **Records in.** ``read_records(source)`` streams ``Record``s from IN, a JSONL file, a CSV file or a
  folder of text files (``input_kind``), never loading it whole; ``record_from_row`` makes one
  from a mapping (a JSONL object, a CSV row, a Ray dataset row). A record that cannot be
  structured (not UTF-8, bad JSON, no text, empty, longer than ``MAX_RECORD_BYTES``) carries its
  ``error`` instead of a prompt: it becomes a result line with that error, never a stop.
  ``scan_input`` is the cheap first pass: the record count, and an error for a repeated id.
- **One record.** ``prepare_batch(service, request)`` works out the plan once (the schema checked
  once, one model client); ``structure_record(service, plan, record)`` is one result line (a
  dict: ``id``, ``status``, ``data``/``need``/``errors``/``refusal``, ``iterations``,
  ``schemaOrigin``, ``usage``). It never raises for a record's own failure: a model call that
  fails for good is a line with status ``error`` (``retry: true`` for a transport failure, which
  ``keep_line`` drops on resume so a rerun tries that record again).
- **The local engine.** ``run_local`` keeps ``jobs`` records in flight (asyncio) over the one
  client, appends each line to a ``store.jsonl.ResultLog`` as it finishes, skips ids the log
  already holds (resume), and stops early when the model keeps failing (``BatchStopped``).

Ids: a JSONL object's or CSV row's ``id`` (a string or an integer); without one, the line number
(JSONL) or the row number (CSV, the first row after the header is 1); in a folder, the file's
path relative to it. An id that comes twice is an error before anything is sent (``scan_input``).
"""

from __future__ import annotations

import asyncio
import csv
import io
import itertools
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vance_cli.crashpoints import crashpoint
from vance_cli.errors import TransportError, VanceError
from vance_cli.store.jsonl import IdSet

if TYPE_CHECKING:
    from vance_cli.store.jsonl import ResultLog
    from vance_cli.structure.service import StructurePlan, StructureRequest, StructureService

InputKind = Literal["jsonl", "csv", "folder"]
DEFAULT_FIELD = "prompt"
MAX_RECORD_BYTES = 1 << 20  # one record's text: 1 MiB (a JSONL line, a CSV field, a file)
STATUSES = ("ok", "need-more-input", "stale", "refused", "error")
STOP_HINT = "fix the model or the server, then run the same command again: the records done so far are kept"


class BadInput(VanceError):
    """IN cannot be read as records at all (missing, a CSV without the column, a repeated id)."""


class BatchStopped(VanceError):
    """The model kept failing: the batch stopped early; a rerun with the same OUT goes on."""


@dataclass(frozen=True)
class Record:
    """One input record: its id, and its text or why it has none (``error``)."""

    id: str
    prompt: str | None = None
    error: str | None = None
    where: str = ""  # "line 7", "row 3", the file's path: for messages only


# --------------------------------------------------------------------------- records in


def input_kind(path: Path) -> InputKind:
    """A folder is a folder of text files, a ``.csv`` file CSV, any other file JSONL."""
    if path.is_dir():
        return "folder"
    return "csv" if path.suffix.lower() == ".csv" else "jsonl"


def default_out(path: Path) -> Path:
    """IN's name with ``.out.jsonl`` added, next to it (``notes.jsonl`` → ``notes.jsonl.out.jsonl``,
    the folder ``tickets/`` → ``tickets.out.jsonl``)."""
    path = Path(os.path.normpath(path))
    return path.with_name(path.name + ".out.jsonl")


def _id_of(value: Any) -> str | None:
    """An id as text: a string or an integer; None for anything else (or nothing)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def record_from_row(row: Mapping[str, Any], field: str, fallback_id: str, where: str = "") -> Record:
    """A record from one mapping (a JSONL object, a CSV row, a dataset row): the text in ``field``,
    the id in ``id`` (``fallback_id`` when there is none)."""
    raw_id = row.get("id")
    record_id = _id_of(raw_id)
    if record_id is None:
        if raw_id not in (None, ""):
            return Record(fallback_id, error=f"the id {json.dumps(raw_id, default=str)[:80]} is not a string or an integer", where=where)
        record_id = fallback_id
    if field not in row:
        return Record(record_id, error=f"no {field!r} field in this record (name the text's field with --field)", where=where)
    text = row[field]
    if not isinstance(text, str):
        return Record(record_id, error=f"the {field!r} field is not text ({type(text).__name__})", where=where)
    if not text.strip():
        return Record(record_id, error="the prompt is empty", where=where)
    if len(text) > MAX_RECORD_BYTES:
        return Record(record_id, error=f"the text is longer than {MAX_RECORD_BYTES:,} characters", where=where)
    return Record(record_id, prompt=text, where=where)


def _open_error(path: Path, exc: OSError) -> BadInput:
    return BadInput(f"cannot read {path}: {exc.strerror or exc}", hint="check the path and its permissions")


def _jsonl_lines(path: Path, offset: int = 0, number: int = 0) -> Iterator[tuple[int, int, bytes | None]]:
    """(line number, byte offset, the line; None when longer than MAX_RECORD_BYTES), blank lines
    left out, from byte ``offset`` (the ``number`` lines before it counted). A long line is
    skipped a piece at a time, never held whole."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below; a generator's with-block would hide the open error
    except OSError as exc:
        raise _open_error(path, exc) from exc
    with fh:
        if offset:
            fh.seek(offset)
        while True:
            start = offset
            raw = fh.readline(MAX_RECORD_BYTES + 1)
            if not raw:
                return
            number += 1
            offset += len(raw)
            if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
                while True:
                    more = fh.readline(MAX_RECORD_BYTES)
                    offset += len(more)
                    if not more or more.endswith(b"\n"):
                        break
                yield number, start, None
                continue
            if raw.strip():
                yield number, start, raw


def _jsonl_records(path: Path, field: str, offset: int = 0, number: int = 0) -> Iterator[tuple[int, int, Record]]:
    """(line number, byte offset, record) from byte ``offset`` on (see ``_jsonl_lines``)."""
    for number, start, raw in _jsonl_lines(path, offset, number):
        at, where = str(number), f"line {number}"
        if raw is None:
            yield number, start, Record(at, error=f"line {number} is longer than {MAX_RECORD_BYTES:,} bytes", where=where)
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield number, start, Record(at, error=f"line {number} is not UTF-8 text", where=where)
            continue
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:
            yield number, start, Record(at, error=f"line {number} is not valid JSON: {getattr(exc, 'msg', exc)}", where=where)
            continue
        if not isinstance(obj, dict):
            yield number, start, Record(at, error=f"line {number} is not a JSON object", where=where)
            continue
        yield number, start, record_from_row(obj, field, at, where)


class _CsvText:
    """The lines of a CSV file from a byte offset, as the csv module reads them (universal
    newlines, not translated; UTF-8 with bad bytes kept as surrogates), and the byte offset of
    the first line not handed out yet (``offset``): where the next row starts."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        try:
            self._raw = open(path, "rb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise _open_error(path, exc) from exc
        if offset:
            self._raw.seek(offset)
        self._text = io.TextIOWrapper(self._raw, encoding="utf-8", errors="surrogateescape", newline="")
        self.offset = offset

    def __iter__(self) -> Iterator[str]:
        for line in self._text:
            self.offset += len(line.encode("utf-8", "surrogateescape"))  # the exact bytes it came from
            yield line

    def close(self) -> None:
        self._text.close()


def _csv_header(path: Path, field: str) -> tuple[list[str], int] | None:
    """The header row and the byte offset after it; None for an empty file."""
    text = _CsvText(path)
    try:
        reader = csv.reader(text)
        try:
            header = next(reader)
        except StopIteration:
            return None
        except csv.Error as exc:
            raise BadInput(f"{path}: the header row is not CSV: {exc}", hint="pass a CSV file with a header row") from exc
        end = text.offset
    finally:
        text.close()
    header = [name.strip().lstrip("\ufeff") if i == 0 else name.strip() for i, name in enumerate(header)]
    if field not in header:
        shown = ", ".join(repr(h) for h in header[:12])
        raise BadInput(
            f"{path} has no column {field!r} (columns: {shown})",
            hint="name the column that holds the text with --field",
        )
    return header, end


def _csv_records(path: Path, field: str, offset: int | None = None, number: int = 0) -> Iterator[tuple[int, int, Record]]:
    """(row number, byte offset, record) of the rows after the header, or from byte ``offset``
    on (a row's start; the ``number`` rows before it counted)."""
    if csv.field_size_limit() < MAX_RECORD_BYTES:
        csv.field_size_limit(MAX_RECORD_BYTES)  # a longer field is one bad row, not a stop
    found = _csv_header(path, field)
    if found is None:
        return
    header, body = found
    text = _CsvText(path, body if offset is None else offset)
    try:
        reader = csv.reader(text)
        while True:
            start = text.offset
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                number += 1
                yield number, start, Record(str(number), error=f"row {number} is not CSV: {exc}", where=f"row {number}")
                continue
            if not row:
                continue  # a blank line
            number += 1
            values = dict(zip(header, row, strict=False))
            if any(_has_surrogate(v) for v in values.values()):
                yield number, start, Record(str(number), error=f"row {number} is not UTF-8 text", where=f"row {number}")
                continue
            yield number, start, record_from_row(values, field, str(number), f"row {number}")
    finally:
        text.close()


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _folder_files(root: Path, exclude: Path | Iterable[Path] | None) -> Iterator[tuple[str, Path]]:
    """(id, path) of every file under ``root``, sorted, hidden files and folders left out, and
    the files in ``exclude`` (OUT, when it lies inside IN)."""
    if isinstance(exclude, Path):
        exclude = (exclude,)
    skip = {path.resolve() for path in exclude or ()}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(folder) / name
            if skip and path.resolve() in skip:
                continue
            yield path.relative_to(root).as_posix(), path


def _file_record(record_id: str, path: Path) -> Record:
    """The record of one file of a folder."""
    try:
        size = path.stat().st_size
        if size > MAX_RECORD_BYTES:
            return Record(record_id, error=f"the file is larger than {MAX_RECORD_BYTES:,} bytes ({size:,})")
        data = path.read_bytes()
    except OSError as exc:
        return Record(record_id, error=f"cannot read the file: {exc.strerror or exc}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Record(record_id, error="the file is not UTF-8 text")
    if not text.strip():
        return Record(record_id, error="the file is empty")
    return Record(record_id, prompt=text)


def _must_exist(path: Path) -> None:
    if not path.exists():
        raise BadInput(f"{path} does not exist", hint="pass a JSONL file, a CSV file or a folder of text files to --batch")


def read_records(path: Path, field: str = DEFAULT_FIELD, *, exclude: Path | Iterable[Path] | None = None) -> Iterator[Record]:
    """The records of IN, streamed in file order; ``exclude``: files a folder walk leaves out
    (OUT, when it lies inside IN). Raises BadInput when IN cannot be opened at all."""
    path = Path(path)
    _must_exist(path)
    kind = input_kind(path)
    if kind == "folder":
        return (_file_record(record_id, file) for record_id, file in _folder_files(path, exclude))
    located = _jsonl_records(path, field) if kind == "jsonl" else _csv_records(path, field)
    return (record for _, _, record in located)


def scan_input(path: Path, field: str = DEFAULT_FIELD, *, exclude: Path | Iterable[Path] | None = None) -> IdSet:
    """The cheap first pass over IN: the ids of its records (``len`` is their count; OUT's lines
    for other ids are not counted, ``ResultLog(among=...)``). A repeated id is a BadInput naming
    it (before anything is sent: a second result for the same id could not be told apart on
    resume). A folder is only listed, its files are not read."""
    path = Path(path)
    _must_exist(path)
    seen = IdSet()  # 16 bytes an id: the pass stays flat in memory however long IN is
    if input_kind(path) == "folder":
        for record_id, _ in _folder_files(path, exclude):
            seen.add(record_id)
        return seen
    for record in read_records(path, field, exclude=exclude):
        seen.add(record.id)
    repeated = seen.repeated()
    if repeated:  # rare: read IN again to name the first id that comes twice, and where
        again: set[str] = set()
        for record in read_records(path, field, exclude=exclude):
            if IdSet.digest(record.id) in repeated:
                if record.id in again:
                    raise BadInput(
                        f"{path}: the id {record.id!r} comes twice (again at {record.where})",
                        hint="give every record its own id, or leave the ids out (then the line or row number is the id)",
                    )
                again.add(record.id)
    return seen


@dataclass(frozen=True)
class Chunk:
    """A stretch of IN that ``read_chunk`` reads on its own (one read task of the Ray engine):
    ``count`` records from byte ``offset``, the ``number`` lines (JSONL) or rows (CSV) before it
    counted; in a folder, the ids of its files. ``skip``: ids in it that OUT already holds."""

    offset: int = 0
    number: int = 0
    count: int = 0
    files: tuple[str, ...] = ()
    skip: frozenset[str] = frozenset()


def plan_chunks(
    path: Path, field: str, done: IdSet, size: int, *, exclude: Path | Iterable[Path] | None = None,
) -> tuple[list[Chunk], int]:
    """IN cut into chunks of at most ``size`` records each that are not in ``done`` (a chunk
    starts at such a record and holds at most ``size`` done ones too), and how many of IN's
    records are in ``done`` (skipped). Reads IN once; a folder is only listed."""
    path = Path(path)
    _must_exist(path)
    chunks: list[Chunk] = []
    skipped = 0
    if input_kind(path) == "folder":
        todo: list[str] = []
        for record_id, _ in _folder_files(path, exclude):
            if record_id in done:
                skipped += 1
                continue
            todo.append(record_id)
            if len(todo) == size:
                chunks.append(Chunk(count=size, files=tuple(todo)))
                todo = []
        if todo:
            chunks.append(Chunk(count=len(todo), files=tuple(todo)))
        return chunks, skipped
    located = _jsonl_records(path, field) if input_kind(path) == "jsonl" else _csv_records(path, field)
    start: tuple[int, int] | None = None  # (offset, number before) of the chunk being cut
    count = fresh = 0
    skip: set[str] = set()
    for number, offset, record in located:
        seen = record.id in done
        skipped += seen
        if start is None:
            if seen:
                continue
            start, count, fresh, skip = (offset, number - 1), 0, 0, set()
        count += 1
        if seen:
            skip.add(record.id)
        else:
            fresh += 1
        if fresh == size or len(skip) == size:
            chunks.append(Chunk(offset=start[0], number=start[1], count=count, skip=frozenset(skip)))
            start = None
    if start is not None:
        chunks.append(Chunk(offset=start[0], number=start[1], count=count, skip=frozenset(skip)))
    return chunks, skipped


def read_chunk(path: Path, field: str, chunk: Chunk) -> Iterator[Record]:
    """The records of one chunk (``plan_chunks``) not in its ``skip``: the same records, ids and
    errors ``read_records`` gives for that stretch of IN."""
    path = Path(path)
    if input_kind(path) == "folder":
        yield from (_file_record(record_id, path / record_id) for record_id in chunk.files)
        return
    located = (_jsonl_records(path, field, chunk.offset, chunk.number) if input_kind(path) == "jsonl"
               else _csv_records(path, field, chunk.offset, chunk.number))
    for _, _, record in itertools.islice(located, chunk.count):
        if record.id not in chunk.skip:
            yield record


# --------------------------------------------------------------------------- one record


async def prepare_batch(service: StructureService, request: StructureRequest) -> StructurePlan:
    """The plan every record of a batch shares (``StructureService.prepare``): the schema checked
    (text mode: built) once, one model client. A text-mode builder that ends the call (it needs
    more input, gives no valid schema, refuses) ends the batch before any record: BadInput."""
    plan = await service.prepare(request)
    if plan.ended is not None:
        ended = plan.ended
        why = ended.need or ended.refusal or "; ".join(ended.errors) or ended.status
        raise BadInput(
            f"the schema builder gave no schema for the batch ({ended.status}): {why}",
            hint="describe the fields more precisely, or pass a schema file (vance schemas infer shows the builder's answer)",
        )
    return plan


def _usage_dict(usage: Any = None) -> dict[str, Any]:
    if usage is None:
        return {"calls": 0, "promptTokens": 0, "completionTokens": 0, "totalTokens": 0, "cost": 0.0}
    return usage.model_dump()


def result_line(record_id: str, result: Any) -> dict[str, Any]:
    """A StructureResult as one OUT line: the id, the status and what goes with it, iterations,
    schemaOrigin, notes (when any), the record's usage (tokens and cost)."""
    line: dict[str, Any] = {"id": record_id, "status": result.status}
    if result.status == "ok":
        line["data"] = result.data
    elif result.status == "need-more-input":
        line["need"] = result.need
    elif result.status == "stale":
        line["errors"] = list(result.errors)
    elif result.status == "refused":
        line["refusal"] = result.refusal
    line["iterations"] = result.iterations
    line["schemaOrigin"] = result.schemaOrigin
    if result.notes:
        line["notes"] = list(result.notes)
    line["usage"] = _usage_dict(result.usage)
    return line


def error_line(record_id: str, message: str, *, kind: str, origin: str, hint: str | None = None, retry: bool = False) -> dict[str, Any]:
    """The OUT line of a record that ended in error. ``retry``: a transport failure a rerun tries again."""
    line: dict[str, Any] = {"id": record_id, "status": "error", "errors": [message], "errorType": kind}
    if hint:
        line["hint"] = hint
    if retry:
        line["retry"] = True
    line.update(iterations=0, schemaOrigin=origin, usage=_usage_dict())
    return line


def keep_line(line: Mapping[str, Any]) -> bool:
    """Whether an OUT line counts as done on resume: all but transport failures (``retry``)."""
    return not (line.get("status") == "error" and line.get("retry") is True)


async def structure_record(service: StructureService, plan: StructurePlan, record: Record) -> dict[str, Any]:
    """One record under ``plan``: its OUT line. Never raises for the record's own failure (bad
    input, a model call that failed for good, a bug on this record); cancellation goes through."""
    if record.error is not None:
        return error_line(record.id, record.error, kind="BadRecord", origin=plan.origin)
    try:
        result = await service.run_plan(plan, record.prompt or "")
    except TransportError as exc:
        return error_line(record.id, exc.message, kind=type(exc).__name__, origin=plan.origin, hint=exc.hint, retry=True)
    except VanceError as exc:
        return error_line(record.id, exc.message, kind=type(exc).__name__, origin=plan.origin, hint=exc.hint)
    except Exception as exc:  # noqa: BLE001 - a bug on one record is that record's error, not the batch's end
        return error_line(record.id, f"internal error: {type(exc).__name__}: {exc}", kind="InternalError", origin=plan.origin)
    return result_line(record.id, result)


# --------------------------------------------------------------------------- the local engine


@dataclass
class Tally:
    """What a batch has done so far (the progress display, the summary, ``--json`` events)."""

    total: int | None = None  # records in IN (None: not counted)
    skipped: int = 0  # done by an earlier run (in OUT already)
    done: int = 0  # finished in this run
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    tokens: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)
    before: dict[str, int] = field(default_factory=dict)  # statuses of OUT's lines for IN's ids when this run began
    elsewhere: int = 0  # OUT's lines for ids not in IN (kept, not counted)

    def overall(self) -> dict[str, int]:
        """Statuses of OUT's lines for IN's ids: those of earlier runs and this one's."""
        merged = dict(self.before)
        for status, n in self.counts.items():
            merged[status] = merged.get(status, 0) + n
        return merged

    @property
    def failed_overall(self) -> int:
        """OUT's lines for IN's ids without a usable answer (error, stale, refused), earlier runs included."""
        merged = self.overall()
        return sum(merged.get(status, 0) for status in ("error", "stale", "refused"))

    def add(self, line: Mapping[str, Any]) -> None:
        self.done += 1
        status = str(line.get("status"))
        self.counts[status] = self.counts.get(status, 0) + 1
        usage = line.get("usage") or {}
        self.tokens += int(usage.get("totalTokens") or 0)
        self.cost += float(usage.get("cost") or 0.0)

    @property
    def failed(self) -> int:
        """Records without a usable answer: error, stale, refused."""
        return self.counts["error"] + self.counts["stale"] + self.counts["refused"]

    def rate(self, now: float | None = None) -> float:
        """Records per second finished in this run."""
        elapsed = (now if now is not None else time.monotonic()) - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def left(self) -> int | None:
        return None if self.total is None else max(0, self.total - self.skipped - self.done)

    def eta(self, now: float | None = None) -> float | None:
        """Seconds left at the current rate (None: unknown)."""
        left, rate = self.left(), self.rate(now)
        return None if left is None or rate <= 0 else left / rate

    def as_dict(self, now: float | None = None) -> dict[str, Any]:
        now = now if now is not None else time.monotonic()
        eta = self.eta(now)
        return {
            "total": self.total, "skipped": self.skipped, "done": self.done,
            "ok": self.counts["ok"], "need": self.counts["need-more-input"], "stale": self.counts["stale"],
            "refused": self.counts["refused"], "error": self.counts["error"],
            "tokens": self.tokens, "cost": round(self.cost, 6),
            "rate": round(self.rate(now), 3), "elapsed": round(now - self.started, 3),
            "eta": None if eta is None else round(eta, 1),
        }


def failures_in_a_row(jobs: int) -> int:
    """How many records in a row may fail in the model call before the batch stops."""
    return max(8, 2 * jobs)


class Streak:
    """Records in a row whose model call failed (a bad record neither counts nor breaks the
    streak); ``see`` raises BatchStopped when ``limit`` did (``failures_in_a_row``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.failed = 0

    def see(self, line: Mapping[str, Any]) -> None:
        if line["status"] == "error" and line.get("errorType") not in ("BadRecord", "InternalError"):
            self.failed += 1
            if self.failed >= self.limit:
                raise BatchStopped(
                    f"stopped: the last {self.failed} records failed in the model call; last error: {line['errors'][0]}",
                    hint=STOP_HINT,
                )
        elif line["status"] != "error":
            self.failed = 0


async def run_local(
    service: StructureService,
    plan: StructurePlan,
    records: Iterable[Record],
    log: ResultLog,
    *,
    jobs: int,
    tally: Tally | None = None,
    on_line: Callable[[Mapping[str, Any], Tally], None] | None = None,
) -> Tally:
    """Structure every record not in ``log.done`` yet, ``jobs`` at a time over the plan's one
    client; each line is appended to ``log`` as it finishes, then ``on_line(line, tally)``. The
    log is fsynced once per group of lines, in a thread (open it with ``auto_sync=False``).

    Raises BatchStopped when ``failures_in_a_row(jobs)`` records in a row failed in the model call
    (the server is down, the key is wrong): the records in flight are cancelled and have no line,
    so a rerun with the same log does them. A StoreError from the log (the disk is full) ends it too.
    """
    tally = tally if tally is not None else Tally()
    streak = Streak(failures_in_a_row(jobs))

    def todo() -> Iterator[Record]:
        for record in records:
            if record.id in log.done:
                tally.skipped += 1
                continue
            yield record

    pending = todo()
    group = asyncio.TaskGroup()

    async def worker() -> None:
        for record in pending:  # one iterator shared by every worker: each record is taken once
            line = await structure_record(service, plan, record)
            crashpoint("batch.answered")
            log.append(line)
            crashpoint("batch.appended")
            if log.due:  # one fsync per group of lines, off the event loop
                group.create_task(log.sync_in_thread())
            tally.add(line)
            if on_line is not None:
                on_line(line, tally)
            streak.see(line)

    try:
        async with group:
            for _ in range(max(1, jobs)):
                group.create_task(worker())
    except* BatchStopped as stopped:
        raise stopped.exceptions[0] from None
    except* VanceError as failed:  # the log could not be written
        raise failed.exceptions[0] from None
    finally:
        log.sync()
    return tally
