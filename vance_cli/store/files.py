"""The process store: one JSON file per process under a scope's ``processes/`` folder.

Every write is atomic (vance_cli.store.atomic); one writer at a time holds ``<id>.lock``
(vance_cli.store.lock). A file that cannot be read is reported and never written over: it stays
exactly as it was for the user to fix or move away.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from vance_cli.errors import CorruptProcessFile, ProcessNotFound, StoreError, UsageError
from vance_cli.store import history_log
from vance_cli.store.atomic import atomic_write_bytes, is_temp_file, state_folder, write_error
from vance_cli.store.lock import current_holder, process_lock
from vance_cli.store.process import SCHEMA_VERSION, SCHEMA_VERSION_NO_LOG, Process
from vance_cli.text import json_depth, safe_data


class _Located(Protocol):
    """Where the process files live (config.scopes.Scopes is one): the store knows no more of it."""

    def processes_dir(self) -> Path: ...

# Ids are file names: keep them to characters that cannot climb out of the folder.
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_CORRUPT_HINT = "it was kept untouched; fix or move it away"


class Unreadable(Exception):
    """Why a process file could not be read (its message is the reason, for a person)."""


def validation_reason(exc: ValidationError) -> str:
    """A pydantic error in one line: the first three places and what is wrong there."""
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


# pydantic's serializer stops at 255 levels: a process file nested deeper could be read but never
# saved again (every resume would fail at its first save). Such a file is unreadable, with the reason.
MAX_PROCESS_DEPTH = 200


def _free_form_depth(data: dict[str, Any], *, history: bool = True) -> int:
    """The nesting depth of the parts of a process file that may hold any JSON (engine_params,
    recipe, meta, a message's meta and extras, a call's extra); the typed parts cannot nest. Only
    those are walked: a long history costs a few dict lookups per message (``history=False``:
    none, for a listing that does not read the history)."""
    best = 0
    for key, value in data.items():
        if key == "history" and isinstance(value, list):
            if not history:
                continue
            for message in value:
                if not isinstance(message, dict):
                    continue
                for part in ("meta", "extras"):
                    if isinstance(message.get(part), dict) and message[part]:
                        best = max(best, 2 + json_depth(message[part]))
                calls = message.get("tool_calls")
                if isinstance(calls, list):
                    for call in calls:
                        if isinstance(call, dict) and isinstance(call.get("extra"), dict) and call["extra"]:
                            best = max(best, 4 + json_depth(call["extra"]))
        elif isinstance(value, (dict, list)):
            best = max(best, 1 + json_depth(value))
    return best


def read_process_data(path: Path, *, history: bool = True) -> dict[str, Any]:
    """The JSON object of a process file, checked for what every reader needs (UTF-8, JSON, an
    object, not nested deeper than it can be saved again, not written by a newer vance); not yet
    a Process. ``history=False``: the history's depth is not walked (store/listing.py). Raises
    Unreadable with the reason."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise Unreadable(f"cannot read it: {exc.strerror}") from exc
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise Unreadable(f"not UTF-8 text (byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise Unreadable(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise Unreadable(f"invalid JSON: {exc}") from exc
    except RecursionError as exc:
        raise Unreadable("invalid JSON: nested too deeply") from exc
    if not isinstance(data, dict):
        raise Unreadable(f"expected a JSON object, found {type(data).__name__}")
    depth = _free_form_depth(data, history=history)
    if depth > MAX_PROCESS_DEPTH:
        raise Unreadable(f"its content nests {depth} levels deep; at most {MAX_PROCESS_DEPTH} can be saved again")
    version = data.get("schema_version", SCHEMA_VERSION)
    if (
        isinstance(version, int)
        and not isinstance(version, bool)
        and version > SCHEMA_VERSION
    ):
        raise Unreadable(
            f"written by a newer vance (schema_version {version}; this vance reads up to {SCHEMA_VERSION}); upgrade vance"
        )
    return data


def _read_process(path: Path) -> Process:
    data, logged = _read_with_log(path)
    try:
        process = Process.model_validate(data)
    except ValidationError as exc:
        raise Unreadable(validation_reason(exc)) from exc
    except RecursionError as exc:
        raise Unreadable("its content is nested too deeply") from exc
    if process.id != path.stem:
        raise Unreadable(f"its id {process.id!r} does not match the file name")
    if logged is not None:
        name, count, size = logged
        process._history_log = history_log.HistoryLog(name, count, size, process.history, process.history[count - 1])
    return process


def _read_with_log(path: Path) -> tuple[dict[str, Any], tuple[str, int, int] | None]:
    """The process file's JSON with the whole history (the log's messages first), and the log's
    (file, messages, bytes) when it has one."""
    for retry in (False, True):
        data = read_process_data(path)
        ref = data.pop(history_log.KEY, None)
        if ref is None:
            return data, None
        try:
            messages, name, count, size = history_log.read(path, ref)
            break
        except FileNotFoundError as exc:
            if retry:
                raise Unreadable(str(exc)) from None
            # a save moved the history to a new log between the two reads: read the file again
        except history_log.LogError as exc:
            raise Unreadable(str(exc)) from None
    tail = data.get("history", [])
    if not isinstance(tail, list):
        raise Unreadable(f"history: must be a list after its log, found {type(tail).__name__}")
    depth = _free_form_depth({"history": messages})
    if depth > MAX_PROCESS_DEPTH:
        raise Unreadable(f"its content nests {depth} levels deep; at most {MAX_PROCESS_DEPTH} can be saved again")
    data["history"] = messages + tail
    return data, (name, count, size)


FUTURE_SLACK = 86_400.0


def is_future_dated(process: Process, now: float | None = None) -> bool:
    """``updated`` lies more than a day after ``now``: --continue must not pick it."""
    return process.updated > (time.time() if now is None else now) + FUTURE_SLACK


def _serialize(process: Process, log: history_log.HistoryLog | None = None) -> bytes:
    """The process file: the process (the history from the end of its ``log``, which it names)."""
    head = process if log is None else process.model_copy(update={"history": process.history[log.messages:]})
    # pydantic's serializer runs in Rust; json.dumps with indent falls back to the pure-Python
    # encoder and cost ~1.5 ms per save of a normal chat (bench/bench_turn.py). Its bytes are
    # written as they are (model_dump_json would decode them to text, to be encoded again).
    try:
        data = Process.__pydantic_serializer__.to_json(head, indent=2)
    except PydanticSerializationError as exc:
        if "depth" in str(exc):
            raise _too_deep_to_save(process) from None
        # A lone surrogate somewhere outside the history's text (which is cleaned as it enters):
        # written as U+FFFD rather than leaving a process that can never be saved again.
        try:
            data = json.dumps(safe_data(head.model_dump(mode="json")), indent=2, ensure_ascii=False).encode("utf-8")
        except (ValueError, RecursionError):
            raise _too_deep_to_save(process) from None
    if log is not None:  # the note of the log, as the last key of the object
        data = data[: data.rindex(b"}")].rstrip() + b',\n  "' + history_log.KEY.encode() + b'": ' + json.dumps(log.ref()).encode() + b"\n}"
    return data + b"\n"


def _too_deep_to_save(process: Process) -> StoreError:
    return StoreError(
        f"process {process.id} holds data nested more than {MAX_PROCESS_DEPTH} levels deep; it cannot be saved",
        hint="the last saved state is kept; start a new chat (or `vance ps` to pick another process)",
    )


class ProcessStore:
    """The processes/ folder of one scope (created on the first write)."""

    def __init__(self, root: Path, base: Path | None = None) -> None:
        self.root = Path(root)
        # the scope folder above root: no part from it down to root may be a link (state_folder)
        self.base = Path(base) if base is not None else self.root

    @classmethod
    def for_scopes(cls, scopes: _Located) -> ProcessStore:
        root = scopes.processes_dir()
        return cls(root, root.parent)

    def _folder(self) -> Path:
        """The processes/ folder, made private where missing; StoreError when a part of it is a link."""
        return state_folder(self.base, *self.root.relative_to(self.base).parts, what="process file")

    # ------------------------------------------------------------------ paths

    def path(self, pid: str) -> Path:
        if not _ID_RE.fullmatch(pid or ""):
            raise UsageError(
                f"invalid process id {pid!r}",
                hint="run `vance ps` to see the process ids",
            )
        return self.root / f"{pid}.json"

    def lock_path(self, pid: str) -> Path:
        return self.path(pid).with_suffix(".lock")

    def _files(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        # Temp files start with "." (and end in .tmp); lock files end in .lock.
        return [
            p
            for p in self.root.glob("*.json")
            if p.is_file() and not p.name.startswith(".") and not is_temp_file(p)
        ]

    def ids(self) -> list[str]:
        """Every id with a file, readable or not, sorted."""
        return sorted(p.stem for p in self._files())

    # ------------------------------------------------------------------ writing

    def _write(self, process: Process, *, exclusive: bool) -> None:
        path = self.path(process.id)
        self._folder()
        before = process._history_log
        log = before
        try:
            log = history_log.place(path, process.history, before)  # a long history's log first
            # written in this vance's format (an older one refuses it); without a log, in schema 2's
            process.schema_version = SCHEMA_VERSION if log is not None else SCHEMA_VERSION_NO_LOG
            atomic_write_bytes(path, _serialize(process, log), exclusive=exclusive, mode=0o600)
        except FileExistsError:
            if log is not None and log is not before:  # a log written for a file that was not ours
                with contextlib.suppress(OSError):
                    path.with_name(log.file).unlink()
            raise
        except PydanticSerializationError:  # a logged message nested too deeply
            raise _too_deep_to_save(process) from None
        except OSError as exc:  # read-only or full state folder: say which file and why
            raise write_error(path, exc, "process file") from exc
        process._history_log = log
        if log is not before and (log is None or before is None or log.file != before.file):
            history_log.remove_others(path, log)  # the log the file named before, a crash's leftover

    def create(self, process: Process) -> None:
        """Write a new process file; StoreError if a file with that id exists."""
        try:
            self._write(process, exclusive=True)
        except FileExistsError:
            raise StoreError(
                f"process {process.id} already exists ({self.path(process.id)})",
                hint="use a new id, or resume the existing process",
            ) from None

    def save(self, process: Process) -> None:
        """Stamp ``updated`` and replace the file atomically."""
        process.updated = time.time()
        self._write(process, exclusive=False)

    # ------------------------------------------------------------------ reading

    def load(self, pid: str) -> Process:
        path = self.path(pid)
        if not path.is_file():
            raise ProcessNotFound(
                f"no process {pid} in {self.root}",
                hint="run `vance ps` to list the processes",
            )
        try:
            return _read_process(path)
        except Unreadable as exc:
            raise CorruptProcessFile(
                f"process file {path} is unreadable: {exc}", hint=_CORRUPT_HINT
            ) from exc

    def list(self) -> tuple[list[Process], list[tuple[Path, str]]]:
        """(processes, newest ``updated`` first; unreadable files with the reason, by name)."""
        processes: list[Process] = []
        corrupt: list[tuple[Path, str]] = []
        for path in sorted(self._files()):
            try:
                processes.append(_read_process(path))
            except Unreadable as exc:
                corrupt.append((path, str(exc)))
            except FileNotFoundError:  # pragma: no cover - removed while listing
                continue
        processes.sort(key=lambda p: p.updated, reverse=True)
        return processes, corrupt

    def latest(self, engine: str | None = None) -> Process | None:
        """The most recently updated readable process (of ``engine`` when given).

        A process dated more than a day ahead (a wrong clock, a hand-edited file) is skipped: it
        would otherwise stay the most recent one forever.
        """
        for process in self.list()[0]:
            if is_future_dated(process):
                continue
            if engine is None or process.engine == engine:
                return process
        return None

    def resolve_id(self, prefix: str) -> str:
        """The one id equal to ``prefix`` or starting with it.

        Failing that, the one id whose random suffix (after the last "-") starts with it, so
        ``abc1`` finds ``20260102-101500-abc123``.
        """
        prefix = (prefix or "").strip()
        if not prefix:
            raise UsageError(
                "empty process id", hint="run `vance ps` to see the process ids"
            )
        ids = self.ids()
        if prefix in ids:
            return prefix
        matches = [i for i in ids if i.startswith(prefix)]
        if not matches:
            matches = [
                i for i in ids if "-" in i and i.rsplit("-", 1)[1].startswith(prefix)
            ]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise ProcessNotFound(
                f"no process matches {prefix!r}",
                hint="run `vance ps` to list the processes",
            )
        shown = ", ".join(matches[:5]) + (
            f" and {len(matches) - 5} more" if len(matches) > 5 else ""
        )
        raise UsageError(
            f"process id {prefix!r} is ambiguous: it matches {shown}",
            hint="type more characters of the id",
        )

    # ------------------------------------------------------------------ locking

    def lock(self, pid: str) -> AbstractContextManager[None]:
        """Hold the one-writer lock of ``pid``; ProcessLocked names the holder when it is taken."""
        path = self.lock_path(pid)
        self._folder()
        return process_lock(path, pid)

    def holder(self, pid: str) -> dict[str, Any] | None:
        """Who holds ``pid``'s lock ({pid, host, argv, since}), or None; never takes the lock."""
        return current_holder(self.lock_path(pid))
