"""A long history's first messages in a log beside the process file (schema_version 3).

A process file is rewritten at every save, so a chat whose whole history is in it pays for every
message it ever had at every step (63 ms a save at 10,000 messages; bench/bench_turn.py
--history). Once a history has ``LOG_START`` messages before its current turn, those messages
move to ``<id>.history.<n>.jsonl`` beside the process file, one message per line as compact JSON,
and the process file keeps the rest (the current turn, and at most ``LOG_BATCH`` older ones)
with a note of the log::

    "history_log": {"file": "<id>.history.1.jsonl", "messages": 120, "bytes": 81234}

The history is the log's first ``bytes`` bytes (``messages`` lines), then the file's ``history``.
A save appends the older messages past ``LOG_BATCH`` to the log, so its cost follows what is new,
not what was said.

Only messages before the last person's message are logged: the engines change the messages of the
turn under way (a tool call marked as started, a reply marked as delivered), never an earlier
turn's. When the logged messages are no longer the history's first ones (Benjy moves its journal
out, a history cut by hand), a save writes a new log, ``<id>.history.<n+1>.jsonl``, and the one
before is removed once the process file names the new one.

Kill -9 and power cuts: a save first appends to the log (written and fsynced), then replaces the
process file atomically, as every save does (store/atomic.py). A crash in between leaves the
process file naming the log's old length: the bytes after it are not read, and the next save
writes over them. A new log is written whole (fsynced, its name too) before the process file
names it; a crash before leaves an unused file, removed by the next new log. A reader reads the
process file, then the log up to the length it names; a writer only ever adds past the length the
process file names, so a reader never sees a half-written message.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vance_cli.crashpoints import crashpoint
from vance_cli.messages import Message
from vance_cli.store.atomic import atomic_write_bytes
from vance_cli.store.reading import A_LINK, NOT_REGULAR, read_regular
from vance_cli.text import safe_data

LOG_START = 64  # messages before the current turn when a history starts its log
LOG_BATCH = 32  # older messages the process file keeps before they are appended
KEY = "history_log"


class LogError(Exception):
    """Why a history log cannot be read (the message says it, for a person)."""


@dataclass(frozen=True, eq=False)
class HistoryLog:
    """Where the first ``messages`` messages of a process's history are on disk, and the history
    they were written from (the list, its last logged message: a save checks they are still the
    history's first ones)."""

    file: str  # beside the process file
    messages: int
    size: int  # bytes of the log that hold them; past them: an append a crash cut off
    history: list[Message]
    last: Message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HistoryLog) and self.ref() == other.ref()

    __hash__ = None  # type: ignore[assignment]

    def ref(self) -> dict[str, Any]:
        """The note in the process file."""
        return {"file": self.file, "messages": self.messages, "bytes": self.size}

    def holds(self, history: list[Message]) -> bool:
        """The logged messages are still the first ones of ``history``."""
        return history is self.history and len(history) >= self.messages and history[self.messages - 1] is self.last


def frozen(history: list[Message]) -> int:
    """How many messages come before the last person's message (the turn under way starts there)."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].role == "user":
            return index
    return 0


def message_line(message: Message) -> bytes:
    """One line of the log: the message as compact JSON (raises PydanticSerializationError, as a
    process file's save does, for data nested too deeply)."""
    from pydantic_core import PydanticSerializationError

    try:
        return Message.__pydantic_serializer__.to_json(message) + b"\n"
    except PydanticSerializationError as exc:
        if "depth" in str(exc):
            raise
        # a lone surrogate outside the text (cleaned as it enters): written as U+FFFD
        return json.dumps(safe_data(message.model_dump(mode="json")), ensure_ascii=False).encode("utf-8") + b"\n"


def place(path: Path, history: list[Message], log: HistoryLog | None) -> HistoryLog | None:
    """Bring the log of the process file ``path`` up to this save; returns the log the process
    file names from now on (None: the whole history stays in the process file)."""
    upto = frozen(history)
    if log is not None and not log.holds(history):
        log = None  # the logged messages changed: a new log (or none) replaces it
    if log is None:
        return _new(path, history, upto) if upto >= LOG_START else None
    if upto - log.messages < LOG_BATCH:
        return log
    return _append(path, log, history, upto)


def _name_of(stem: str) -> re.Pattern[str]:
    """The names of the logs of the process ``stem``: ``<stem>.history.<n>.jsonl`` and nothing
    else (ids may hold dots: ``a.history.7.history.1.jsonl`` is a log of ``a.history.7``, not of
    ``a``, which a glob ``a.history.*.jsonl`` would take)."""
    return re.compile(re.escape(stem) + r"\.history\.([0-9]+)\.jsonl")


def _logs(path: Path) -> list[tuple[int, Path]]:
    """(number, path) of each log beside the process file ``path``, a crash's leftovers too."""
    name_of = _name_of(path.stem)
    return [(int(m.group(1)), other) for other in path.parent.iterdir() if (m := name_of.fullmatch(other.name))]


def _new(path: Path, history: list[Message], upto: int) -> HistoryLog:
    name = f"{path.stem}.history.{max((n for n, _ in _logs(path)), default=0) + 1}.jsonl"
    data = b"".join(message_line(m) for m in history[:upto])
    atomic_write_bytes(path.with_name(name), data, exclusive=True, mode=0o600)  # fsynced, and its name
    crashpoint("store.log_written")
    return HistoryLog(name, upto, len(data), history, history[upto - 1])


def _append(path: Path, log: HistoryLog, history: list[Message], upto: int) -> HistoryLog:
    data = b"".join(message_line(m) for m in history[log.messages:upto])
    # Never through a link (it would truncate and append to the file it points at) nor into a
    # FIFO (O_NONBLOCK: no wait for a reader): whatever is there that is not the regular file
    # this process logged to, missing or not, gets a new log beside it.
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path.with_name(log.file), flags)
    except OSError:
        return _new(path, history, upto)
    try:
        info = os.fstat(fd)
        regular, size = stat.S_ISREG(info.st_mode), info.st_size
        if not regular or size != log.size:
            if not regular or size < log.size or _named(path) != log.ref():
                # not the log this process last saved (changed under it): start a new one
                os.close(fd)
                fd = -1
                return _new(path, history, upto)
            os.ftruncate(fd, log.size)  # an append a crash cut off before the process file named it
        os.lseek(fd, log.size, os.SEEK_SET)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        if fd >= 0:
            os.close(fd)
    crashpoint("store.log_appended")
    return HistoryLog(log.file, upto, log.size + len(data), history, history[upto - 1])


def _named(path: Path) -> Any:
    """The log the process file on disk names (None when it cannot be read)."""
    try:
        return json.loads(path.read_bytes()).get(KEY)
    except (OSError, ValueError, AttributeError, RecursionError):
        return None


def remove_others(path: Path, keep: HistoryLog | None) -> None:
    """Remove the logs of ``path`` its process file no longer names (after it was saved)."""
    with contextlib.suppress(OSError):  # the file is saved: a leftover stays until the next new log
        for _, other in _logs(path):
            if keep is None or other.name != keep.file:
                with contextlib.suppress(OSError):
                    other.unlink()


def check_ref(path: Path, ref: Any) -> tuple[str, int, int]:
    """(the file name, messages, bytes) of the note ``ref`` in the process file ``path``; LogError
    when it does not name a log of this process with positive counts."""
    if not isinstance(ref, dict) or not isinstance(ref.get("file"), str) or not _name_of(path.stem).fullmatch(ref["file"]):
        raise LogError(f"{KEY} must name a {path.stem}.history.<n>.jsonl file beside it, found {ref!r}"[:300])
    count, size = ref.get("messages"), ref.get("bytes")
    if not (isinstance(count, int) and isinstance(size, int) and count > 0 and size > 0) or isinstance(count, bool):
        raise LogError(f"{KEY} must give its messages and bytes as positive integers, found {ref!r}"[:300])
    return ref["file"], count, size


def problem(path: Path, name: str, size: int) -> str | None:
    """What an lstat alone tells is wrong with the log ``name`` of the process file ``path``
    (missing, a link, not a regular file, shorter than ``size``), or None: `vance ps` checks
    each listed log so, without reading it."""
    try:
        info = os.lstat(path.with_name(name))
    except FileNotFoundError:
        return f"its history log {name} is missing"
    except OSError as exc:
        return f"cannot read its history log {name}: {exc.strerror}"
    if stat.S_ISLNK(info.st_mode):
        return f"cannot read its history log {name}: {A_LINK}"
    if not stat.S_ISREG(info.st_mode):
        return f"cannot read its history log {name}: {NOT_REGULAR}"
    if info.st_size < size:
        return f"its history log {name} is shorter than the file says ({info.st_size} of {size} bytes)"
    return None


def read(path: Path, ref: Any) -> tuple[list[Any], str, int, int]:
    """(the logged messages as JSON values, the file name, messages, bytes) named by ``ref``."""
    name, count, size = check_ref(path, ref)
    try:
        # a regular file only, never through a link, never a wait on a FIFO (a cloned .vance/)
        data = read_regular(path.with_name(name), size, links=False, head=True)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"its history log {name} is missing") from exc
    except OSError as exc:
        raise LogError(f"cannot read its history log {name}: {exc.strerror}") from exc
    if len(data) < size or not data.endswith(b"\n"):
        raise LogError(f"its history log {name} is shorter than the file says ({len(data)} of {size} bytes)")
    try:
        messages = json.loads(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    except UnicodeDecodeError as exc:
        raise LogError(f"its history log {name} is not UTF-8 text (byte {exc.start})") from exc
    except (ValueError, RecursionError) as exc:
        raise LogError(f"its history log {name} is not one JSON message per line: {exc}"[:300]) from exc
    if len(messages) != count:
        raise LogError(f"its history log {name} holds {len(messages)} messages, the file says {count}")
    return messages, name, count, size
