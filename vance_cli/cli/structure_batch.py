"""`vance structure --batch IN`: many records, one schema plan, one model client, N in flight.

The work is ``structure/batch.py`` (records in, one record, the local engine); this module reads
the flags, shows progress and ends with the exit code. Output contract:

- OUT (``--out``, default IN's name + ``.out.jsonl``) gets one JSON line per record as it finishes;
  rerun with the same OUT to go on after a crash or Ctrl+C (done ids are skipped).
- On a terminal a progress bar on stderr; without one, nothing until the summary. The summary
  (one line) on stdout. ``--json``: JSON lines on stdout instead, ``start``, ``progress`` (at
  most every PROGRESS_EVERY seconds) and ``summary``.
- Exit 0 when every record in OUT is ok or need-more-input, EXIT_BATCH_FAILED (6) when any ended
  in error, stale or refused (OUT's lines for ids IN no longer has are kept, not counted); 1 when the batch could not run or stopped early (the model kept
  failing), 2 for bad flags, 130 on Ctrl+C, 143 on SIGTERM, 129 on SIGHUP (the results so far are
  kept and fsynced).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import typer

from vance_cli.errors import VanceError

EXIT_BATCH_FAILED = 6
PROGRESS_EVERY = 0.5  # seconds between --json progress events


def check_batch_flags(source: str, jobs: int | None, field: str | None) -> None:
    """--batch, --jobs and --field as given (usage errors, before anything is read)."""
    from vance_cli.cli.common import require_text
    from vance_cli.errors import UsageError
    from vance_cli.llm.profile import MAX_CONCURRENCY

    require_text(source, "--batch")
    if not source.strip():
        raise UsageError("--batch is empty", hint="pass a JSONL file, a CSV file or a folder of text files")
    if jobs is not None and not 1 <= jobs <= MAX_CONCURRENCY:
        raise UsageError(f"--jobs must be between 1 and {MAX_CONCURRENCY}, got {jobs}", hint=f"use --jobs 1..{MAX_CONCURRENCY}")
    if field is not None:
        require_text(field, "--field")
        if not field.strip():
            raise UsageError("--field is empty", hint="name the JSONL field or CSV column that holds the text, e.g. --field text")


def check_engine_flags(engine: str | None, ray_address: str | None) -> str:
    """--engine and --ray-address as given: the engine's name. For ray, Ray Data is imported
    here, so a missing install is said before anything is read or started."""
    from vance_cli.cli.common import require_text
    from vance_cli.errors import UsageError
    from vance_cli.ray_cluster import BATCH_ENGINES

    if engine is not None:
        require_text(engine, "--engine")
    name = (engine or "local").strip()
    if name not in BATCH_ENGINES:
        raise UsageError(f"unknown engine {name!r}", hint="pass --engine local or --engine ray")
    if ray_address is not None:
        require_text(ray_address, "--ray-address")
        if name != "ray":
            raise UsageError("--ray-address is for --engine ray", hint="add --engine ray, or drop --ray-address")
    if name == "ray":
        from vance_cli.ray_cluster import import_ray_data

        import_ray_data()
    return name


def out_path_for(source: str, out: str | None) -> Path:
    """OUT: --out, or IN's name + .out.jsonl; never IN itself (by its path, a symbolic link or a
    hard link: the same file on disk)."""
    from vance_cli.errors import UsageError
    from vance_cli.structure.batch import default_out

    path = Path(source).expanduser()
    out_path = Path(out).expanduser() if out else default_out(path)
    try:
        same = os.path.samefile(out_path, path)
    except OSError:  # one of them does not exist (yet)
        same = False
    if same:
        raise UsageError(f"--out {out_path} is the input file", hint="write the results to another file")
    return out_path


def run_batch(
    *,
    source: str,
    out_path: Path,
    service: Any,
    schema: Any,
    mode: str,
    max_loops: int,
    model: str | None,
    jobs: int | None,
    field: str | None,
    json_out: bool,
    engine: str = "local",
    ray_address: str | None = None,
    make_service: Callable[[], Any] | None = None,
) -> None:
    """The body of `vance structure --batch`: flags checked (``check_batch_flags``,
    ``check_engine_flags``), the schema loaded (``structure_cmd.load_schema_arg``); exits
    EXIT_BATCH_FAILED when a record failed. ``engine`` "ray": ``make_service`` makes the
    service again in each Ray worker (it is sent to them)."""
    from vance_cli.structure.batch import DEFAULT_FIELD, Tally, scan_input
    from vance_cli.structure.service import StructureRequest

    path = Path(source).expanduser()
    use_field = field.strip() if field else DEFAULT_FIELD
    out = Out(out_path)
    ids = scan_input(path, use_field, exclude=out.files)  # a repeated id stops here, before any call
    out.open(ids)
    display = JsonEvents() if json_out else Display()
    tally = Tally(total=len(ids))
    stopped_by: list[signal.Signals] = []
    try:
        if engine == "ray":
            request = StructureRequest(prompt="", schema=schema, schemaMode=mode, maxLoops=max_loops, model=model)
            _drive_ray(service, make_service, request, path, out, use_field, tally, jobs, display, ray_address, stopped_by)
        else:
            asyncio.run(_drive(service, schema, mode, max_loops, model, path, out, use_field, tally, jobs, display,
                               stopped_by))
    except (KeyboardInterrupt, asyncio.CancelledError):
        signum = stopped_by[0] if stopped_by else signal.SIGINT
        raise BatchInterrupted(tally.done, out.log, signum) from None
    out.finish()
    if tally.failed_overall:
        raise typer.Exit(EXIT_BATCH_FAILED)


class Out:
    """OUT, and the file its lines go to as they finish (``log``): OUT itself, or for a Parquet
    OUT (a name ending in .parquet) its partial file, turned into OUT at the end
    (``structure/batch_parquet.py``, which needs pyarrow)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._parquet: Any = None
        if path.suffix.lower() == ".parquet":
            from vance_cli.cli.common import needs_sdk

            with needs_sdk("pyarrow", "a Parquet OUT needs pyarrow, which is not installed",
                           hint="install it with: pip install 'vance-cli[ray]', or write JSONL (an OUT not ending in .parquet)"):
                from vance_cli.structure import batch_parquet
            self._parquet = batch_parquet
        self.log = self._parquet.partial_path(path) if self._parquet else path
        self.files = (path, self.log)  # left out of a folder IN that holds them
        self.ids: Any = None  # IN's ids (``open``): OUT's lines for other ids are not counted

    def open(self, ids: Any = None) -> None:
        """Before the lines go to ``log``: ``ids``, IN's (``batch.scan_input``). A complete Parquet
        OUT with no partial file is read back into one (a rerun goes on from it)."""
        self.ids = ids
        if self._parquet is not None and not self.log.exists() and self.path.exists():
            self._parquet.read_back(self.path, self.log)

    def result_log(self, **options: Any) -> Any:
        """The ``ResultLog`` the lines go to: lines of other files (not an object with an id and
        a known status) are refused, transport failures of an earlier run tried again, lines for
        ids not in IN kept but not counted (``elsewhere``)."""
        from vance_cli.store.jsonl import ResultLog
        from vance_cli.structure.batch import STATUSES, keep_line

        return ResultLog(self.log, keep=keep_line, count="status", known=STATUSES, among=self.ids, **options)

    def finish(self) -> None:
        """The batch went through every record: a Parquet OUT is written from its partial file."""
        if self._parquet is not None:
            self._parquet.finish(self.log, self.path)


class BatchInterrupted(VanceError):
    """Ctrl+C, SIGTERM or SIGHUP stopped the batch; what is in OUT stays (exit 128 + the signal)."""

    def __init__(self, done: int, out_path: Path, signum: int) -> None:
        name = "Ctrl+C" if signum == signal.SIGINT else signal.Signals(signum).name
        super().__init__(
            f"interrupted by {name} after {done} record(s) in this run; the results so far are in {out_path}",
            hint="run the same command again to go on",
        )
        self.exit_code = 128 + int(signum)


async def _drive(service, value, mode, max_loops, model, path, out, field, tally, jobs, display, stopped_by):
    from vance_cli.llm.profile import concurrency_for
    from vance_cli.structure.batch import prepare_batch, read_records, run_local
    from vance_cli.structure.service import StructureRequest

    loop, task = asyncio.get_running_loop(), asyncio.current_task()

    def stop(signum: signal.Signals) -> None:  # SIGTERM, SIGHUP: end like Ctrl+C, OUT synced
        stopped_by.append(signum)
        task.cancel()

    for signum in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop, signum)
    request = StructureRequest(prompt="", schema=value, schemaMode=mode, maxLoops=max_loops, model=model)
    plan = await prepare_batch(service, request)
    try:
        use_jobs = jobs or concurrency_for(plan.model.capabilities, getattr(plan.model, "api_base", None))
        with out.result_log(auto_sync=False) as log:
            tally.started = time.monotonic()
            tally.before = dict(log.counted)
            tally.elsewhere = log.elsewhere
            display.start(path, out.path, tally, use_jobs, plan, log)
            try:
                await run_local(service, plan, read_records(path, field, exclude=out.files), log, jobs=use_jobs,
                                tally=tally, on_line=display.line)
            except BaseException as exc:
                display.stop(tally, out.path, exc)
                raise
            display.stop(tally, out.path, None)
    finally:
        await plan.model.aclose()


def _drive_ray(service, make_service, request, path, out, field, tally, jobs, display, ray_address, stopped_by):
    """The batch on Ray (``structure/batch_ray.py``): the plan made here once (a text-mode schema
    built once), Ray joined or started (``ray_cluster.ray_session``), OUT written here as the
    workers' chunks come back. SIGTERM and SIGHUP end it as Ctrl+C does."""
    from vance_cli.ray_cluster import ray_session

    plan, use_jobs = asyncio.run(_ray_plan(service, request, jobs))
    with ray_session(ray_address), _signals_stop(stopped_by):
        from vance_cli.structure.batch_ray import RayBatch

        with out.result_log() as log:
            job = RayBatch(path, field, log, jobs=use_jobs, exclude=out.files)
            tally.skipped = job.skipped
            tally.started = time.monotonic()
            tally.before = dict(log.counted)
            tally.elsewhere = log.elsewhere
            display.start(path, out.path, tally, use_jobs, plan, log, workers=job.workers)
            try:
                job.run(make_service, plan, tally, on_line=display.line)
            except BaseException as exc:
                display.stop(tally, out.path, exc)
                raise
            display.stop(tally, out.path, None)


async def _ray_plan(service, request, jobs):
    """(the plan, --jobs or the model family's default); the driver's own client is closed again
    (each Ray worker makes its own)."""
    from vance_cli.llm.profile import concurrency_for
    from vance_cli.structure.batch import prepare_batch

    plan = await prepare_batch(service, request)
    try:
        return plan, jobs or concurrency_for(plan.model.capabilities, getattr(plan.model, "api_base", None))
    finally:
        await plan.model.aclose()


@contextlib.contextmanager
def _signals_stop(stopped_by: list[signal.Signals]) -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt in the driver, as Ctrl+C does (``stopped_by``
    says which); the handlers before are put back after."""

    def stop(signum: int, _frame: Any) -> None:
        stopped_by.append(signal.Signals(signum))
        raise KeyboardInterrupt

    saved = {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _summary(tally: Any, out_path: Path) -> str:
    c = tally.counts
    parts = [f"{c['ok']} ok", f"{c['need-more-input']} need-more-input", f"{c['stale']} stale"]
    if c["refused"]:
        parts.append(f"{c['refused']} refused")
    parts.append(f"{c['error']} error")
    text = f"structured {tally.done} record(s) into {out_path} in {time.monotonic() - tally.started:.1f}s: " + ", ".join(parts)
    if tally.skipped:
        text += f"; {tally.skipped} done before (skipped)"
    if tally.elsewhere:
        text += f"; {tally.elsewhere} line(s) in OUT for ids not in IN (not counted)"
    text += f"; {tally.tokens:,} tokens, ${tally.cost:.4f}"
    return text


class Display:
    """A rich progress bar on stderr when it is a terminal; the summary line on stdout at the end."""

    def __init__(self) -> None:
        self._progress: Any = None
        self._task: Any = None

    def start(self, path: Path, out_path: Path, tally: Any, jobs: int, plan: Any, log: Any, workers: int | None = None) -> None:
        from vance_cli.terminal import err

        if log.repaired:
            err(f"note: {log.path} ended in a torn line (a crash mid-write); it was cut off (its record is structured again)")
        if log.dropped:
            err(f"note: {log.dropped} record(s) that failed in transport last time are tried again")
        if not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=16),
            TextColumn(
                "{task.completed}/{task.fields[total_text]} [green]{task.fields[ok]} ok[/] {task.fields[need]} need "
                "[yellow]{task.fields[stale]} stale[/] [red]{task.fields[error]} err[/] "
                "{task.fields[tokens]} tok ${task.fields[cost]} {task.fields[rate]}/s"
            ),
            TimeElapsedColumn(),
            TextColumn("left {task.fields[eta]}"),
            console=Console(stderr=True),
            transient=False,
        )
        todo = None if tally.total is None else tally.total
        self._task = self._progress.add_task(f"×{jobs}" if workers is None else f"ray ×{jobs} on {workers}", total=todo, completed=tally.skipped, **self._fields(tally))
        self._progress.start()

    @staticmethod
    def _fields(tally: Any) -> dict[str, Any]:
        data = tally.as_dict()
        eta = data["eta"]
        return {
            "total_text": "?" if tally.total is None else str(tally.total),
            "ok": data["ok"], "need": data["need"], "stale": data["stale"] + data["refused"], "error": data["error"],
            "tokens": f"{data['tokens']:,}", "cost": f"{data['cost']:.4f}", "rate": f"{data['rate']:.1f}",
            "eta": "?" if eta is None else time.strftime("%H:%M:%S", time.gmtime(min(eta, 359999))),
        }

    def line(self, line: Mapping[str, Any], tally: Any) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=tally.skipped + tally.done, **self._fields(tally))

    def stop(self, tally: Any, out_path: Path, exc: BaseException | None) -> None:
        from vance_cli.terminal import err

        if self._progress is not None:
            self._progress.update(self._task, completed=tally.skipped + tally.done, **self._fields(tally))
            self._progress.stop()
        if exc is not None and not isinstance(exc, Exception):  # Ctrl+C, SIGTERM: BatchInterrupted says so
            return
        sys.stdout.write(_summary(tally, out_path) + "\n")
        sys.stdout.flush()
        failed = tally.failed_overall
        if failed and exc is None:
            err(f"{failed} record(s) in {out_path} ended in error, stale or refused (their lines say why); exit {EXIT_BATCH_FAILED}")


class JsonEvents:
    """``--json``: ``start``, ``progress`` (at most every PROGRESS_EVERY s) and ``summary`` events on stdout."""

    def __init__(self) -> None:
        self._last = 0.0

    def start(self, path: Path, out_path: Path, tally: Any, jobs: int, plan: Any, log: Any, workers: int | None = None) -> None:
        from vance_cli.terminal import emit_json

        emit_json({
            "event": "start", "in": str(path), "out": str(out_path), "total": tally.total, "done_before": len(log.done) - log.elsewhere,
            "jobs": jobs, "engine": "local" if workers is None else "ray", "workers": workers, "model": plan.model_name, "schemaOrigin": plan.origin,
            "repaired": log.repaired, "retried": log.dropped, "notInInput": log.elsewhere,
        })
        self._last = time.monotonic()

    def line(self, line: Mapping[str, Any], tally: Any) -> None:
        now = time.monotonic()
        if now - self._last >= PROGRESS_EVERY:
            self._last = now
            from vance_cli.terminal import emit_json

            emit_json({"event": "progress", **tally.as_dict(now)})

    def stop(self, tally: Any, out_path: Path, exc: BaseException | None) -> None:
        from vance_cli.terminal import emit_json

        if exc is not None and not isinstance(exc, Exception):  # Ctrl+C, SIGTERM: the error object follows
            return
        event = {"event": "summary", "out": str(out_path), **tally.as_dict(), "overall": tally.overall(),
                 "notInInput": tally.elsewhere}
        if exc is not None:
            event["stopped"] = str(getattr(exc, "message", None) or type(exc).__name__)
        else:
            event["exitCode"] = EXIT_BATCH_FAILED if tally.failed_overall else 0
        emit_json(event)
