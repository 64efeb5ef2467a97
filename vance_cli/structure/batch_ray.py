"""The Ray engine of `vance structure --batch IN --engine ray` (issue 20): the batch on a Ray cluster.

Imported only for ``--engine ray`` (after ``ray_cluster.import_ray_data``: it imports Ray Data and
pyarrow at the top). The pieces of ``structure/batch.py``, spread over Ray Data:

- **IN as a Ray dataset.** ``RecordsDatasource``: one read task per ``Chunk`` of IN
  (``plan_chunks``, on the driver: it cuts IN at record boundaries and leaves out the ids OUT
  holds). A read task reads its chunk with ``read_chunk``, so the records, their ids and the
  bad-record errors are those of the local engine. Records travel as JSON text (ASCII: any
  string, lone surrogates included, goes through Arrow unchanged).
- **Records mapped in batches over Ray workers.** ``StructureWorker`` is the callable class of
  ``map_batches`` on an actor pool: its ``__init__`` makes the service and the plan's model client
  once per worker; each call runs ``run_local`` (the local engine: ``structure_record``, ``per``
  records in flight, the failures-in-a-row stop) over one chunk and returns its OUT lines.
- **OUT on the driver.** ``RayBatch.run`` appends each line to the ``ResultLog`` as the chunks
  come back, so resume, the torn-tail repair and the summary are the local engine's.

A worker killed mid-chunk loses nothing and duplicates nothing: its lines are only returned with
the whole chunk, Ray Data starts a new worker and runs the chunk again there (the model is asked
again for the records of that chunk, at most ``per`` of them answered before). Records in flight
when the driver stops (Ctrl+C, a crash) have no line in OUT and are done by a rerun.

Concurrency: ``--jobs`` is the records in flight across the cluster, as locally: ``spread`` makes
``min(jobs, CPUs)`` workers (one CPU each) with ``jobs / workers`` in flight in each. A 429's
slow-down holds the calls of the worker that got it (the local engine's gate is per client).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import logging
import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow
import ray
import ray.data
from ray.data.block import BlockMetadata

from vance_cli.errors import VanceError
from vance_cli.ray_cluster import task_env, task_environ
from vance_cli.store.jsonl import IdSet
from vance_cli.structure.batch import (
    STOP_HINT,
    BatchStopped,
    Chunk,
    Record,
    Streak,
    Tally,
    failures_in_a_row,
    plan_chunks,
    read_chunk,
    run_local,
)

if TYPE_CHECKING:
    from vance_cli.store.jsonl import ResultLog
    from vance_cli.structure.service import StructurePlan, StructureService

RECORD, LINE, STOP = "record", "line", "stop"  # the dataset's columns


def spread(jobs: int, cpus: float) -> tuple[int, int]:
    """(workers, records in flight in each) for ``jobs`` in flight on a cluster of ``cpus``."""
    workers = max(1, min(jobs, int(cpus)))
    return workers, math.ceil(jobs / workers)


def chunk_size(per: int) -> int:
    """Records per chunk (one read task, one worker call): a few rounds of ``per`` in flight, so a
    worker is rarely idle at a chunk's tail and a killed one costs little."""
    return max(8, 4 * per)


def record_text(record: Record) -> str:
    return json.dumps([record.id, record.prompt, record.error, record.where])


def record_of(text: str) -> Record:
    record_id, prompt, error, where = json.loads(text)
    return Record(record_id, prompt=prompt, error=error, where=where)


def _metadata(rows: int) -> BlockMetadata:
    """A read task's metadata; Ray before 2.50 also wanted a schema here."""
    fields = {f.name for f in dataclasses.fields(BlockMetadata)}
    extra = {"schema": None} if "schema" in fields else {}
    return BlockMetadata(num_rows=rows, size_bytes=None, input_files=None, exec_stats=None, **extra)


def _read(path: Path, field: str, chunk: Chunk) -> Iterator[pyarrow.Table]:
    rows = [record_text(record) for record in read_chunk(path, field, chunk)]
    if rows:
        yield pyarrow.table({RECORD: pyarrow.array(rows, pyarrow.string())})


class RecordsDatasource(ray.data.Datasource):
    """IN as a Ray dataset of records (column ``record``), one read task per chunk."""

    def __init__(self, path: Path, field: str, chunks: list[Chunk]) -> None:
        self._path, self._field, self._chunks = Path(path), field, chunks

    def get_name(self) -> str:
        return "StructureRecords"

    def estimate_inmemory_data_size(self) -> int | None:
        return None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None, data_context: Any = None) -> list:
        return [
            ray.data.ReadTask(functools.partial(_read, self._path, self._field, chunk), _metadata(chunk.count - len(chunk.skip)))
            for chunk in self._chunks
        ]


class _Lines:
    """What ``run_local`` writes to, inside a worker: the lines of one chunk, in memory."""

    def __init__(self) -> None:
        self.done = IdSet()
        self.lines: list[dict[str, Any]] = []
        self.due = False

    def append(self, line: Mapping[str, Any]) -> None:
        self.lines.append(dict(line))

    def sync(self) -> None:
        pass

    async def sync_in_thread(self) -> None:  # pragma: no cover - never due
        pass


class StructureWorker:
    """One Ray worker of the batch (an actor of ``map_batches``): the command's ``VANCE_*``
    variables, the service and the plan's model client, made once; each call structures one chunk."""

    def __init__(self, make_service: Callable[[], StructureService], plan: StructurePlan, env: Mapping[str, str], per: int) -> None:
        self._environ = contextlib.ExitStack()  # a Ray Data actor serves this batch only: kept for its life
        self._environ.enter_context(task_environ(env))
        self._loop = asyncio.new_event_loop()  # one loop for the worker's life: the client's connections live on it
        self._service = make_service()
        self._plan = self._service.with_model(plan)
        self._per = per

    def __call__(self, batch: pyarrow.Table) -> pyarrow.Table:
        records = [record_of(text) for text in batch.column(RECORD).to_pylist()]
        sink = _Lines()
        stopped = None
        try:
            self._loop.run_until_complete(run_local(self._service, self._plan, records, sink, jobs=self._per))  # type: ignore[arg-type]
        except BatchStopped as exc:
            stopped = exc.message
        lines: list[str | None] = [json.dumps(line, default=str) for line in sink.lines]
        stops: list[str | None] = [None] * len(lines)
        if stopped is not None:  # a last row that says so: the driver stops the batch
            lines.append(None)
            stops.append(stopped)
        return pyarrow.table({LINE: pyarrow.array(lines, pyarrow.string()), STOP: pyarrow.array(stops, pyarrow.string())})

    def close(self) -> None:
        """The client and the loop closed, the worker's own variables back (Ray ends an actor
        without it; a worker used outside Ray calls it)."""
        try:
            self._loop.run_until_complete(self._plan.model.aclose())
        finally:
            self._loop.close()
            self._environ.close()


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Ray Data's progress lines and hints off while the batch runs (the command shows its own)."""
    logger = logging.getLogger("ray.data")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        logger.setLevel(level)


def _ray_failures(blocks: Iterator[pyarrow.Table]) -> Iterator[pyarrow.Table]:
    """``blocks``, with a failure of Ray's (workers that cannot start, a lost node) as a VanceError."""
    while True:
        try:
            block = next(blocks)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001 - whatever Ray raises: its first line, the chain for VANCE_DEBUG=1
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise VanceError(
                f"the batch failed on Ray: {type(exc).__name__}: {first}",
                hint="the results so far are in OUT; check the cluster (`ray status`), then run the same command again",
            ) from exc
        yield block


class RayBatch:
    """The batch on Ray: IN planned against ``log`` (what is done), then ``run``."""

    def __init__(self, path: Path, field: str, log: ResultLog, *, jobs: int, exclude: Any = None) -> None:
        self.path, self.field, self.log, self.jobs = Path(path), field, log, jobs
        self.workers, self.per = spread(jobs, ray.cluster_resources().get("CPU", 1))
        self.chunks, self.skipped = plan_chunks(self.path, field, log.done, chunk_size(self.per), exclude=exclude)

    def run(
        self,
        make_service: Callable[[], StructureService],
        plan: StructurePlan,
        tally: Tally,
        on_line: Callable[[Mapping[str, Any], Tally], None] | None = None,
    ) -> Tally:
        """Every chunk through the workers; each line appended to the log as its chunk comes back,
        then ``on_line(line, tally)``. Raises BatchStopped as ``run_local`` does."""
        tally.skipped = self.skipped
        if not self.chunks:
            return tally
        with _quiet():
            return self._run(make_service, plan, tally, on_line)

    def _run(self, make_service, plan, tally, on_line) -> Tally:
        portable = dataclasses.replace(plan, model=None)  # each worker makes its own client
        dataset = ray.data.read_datasource(
            RecordsDatasource(self.path, self.field, self.chunks),
            override_num_blocks=len(self.chunks),
            num_cpus=0,  # reading a chunk is light: the workers hold the CPUs
            concurrency=self.workers + 1,
        ).map_batches(
            StructureWorker,
            fn_constructor_args=(make_service, portable, task_env(), self.per),
            batch_size=None,  # one call per chunk: its lines come back together, or not at all
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=self.workers),
            num_cpus=1,
        )
        dataset.context.enable_progress_bars = False
        streak = Streak(failures_in_a_row(self.jobs))
        with contextlib.closing(iter(dataset.iter_batches(batch_size=None, batch_format="pyarrow", prefetch_batches=0))) as blocks:
            for block in _ray_failures(blocks):
                for text, stopped in zip(block.column(LINE).to_pylist(), block.column(STOP).to_pylist(), strict=True):
                    if text is None:
                        raise BatchStopped(stopped, hint=STOP_HINT)
                    line = json.loads(text)
                    self.log.append(line)
                    tally.add(line)
                    if on_line is not None:
                        on_line(line, tally)
                    streak.see(line)
        return tally
