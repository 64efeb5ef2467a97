"""An appending JSON-lines file a killed writer can pick up again: ``ResultLog`` (issue 20's OUT).

Each line is one JSON object with a key (``id``). ``append`` writes a line whole with one
``write`` on an ``O_APPEND`` descriptor as soon as it is given, and fsyncs once per group (every
``sync_lines`` lines or ``sync_seconds`` seconds, and at ``close``), not per line: a ``kill -9``
loses nothing already appended (the kernel holds it), a power cut at most the last group. An
asyncio writer passes ``auto_sync=False`` and runs ``sync_in_thread`` when ``due``: the fsync then
does not hold up its event loop.

Opening a file that exists reads it once, line by line (never whole), and keeps only the keys
(``done``):

- a last line without its newline (a write torn by a power cut, or the zeros one can leave) is
  cut off (``repaired``), so the next line starts on a line of its own;
- any other line that is not a result line (a JSON object with the key and, given ``known``, a
  ``count`` value among them), or a file with no result line at all, is an error naming it: the
  file is not one this writer wrote (another file given as OUT, a copy of IN) or was edited, and
  it is left exactly as it is;
- ``counted`` tallies the kept lines by one key's value (``count``, e.g. ``status``); given
  ``among`` (the keys that matter now, e.g. IN's ids), only lines with such a key: the others are
  ``elsewhere`` (kept in the file, counted apart);
- a line ``keep(obj)`` rejects is dropped (``dropped``): the file is rewritten without it, streamed
  to a temp file and renamed (``atomic.atomic_write_chunks``), so it is either all there or not.
  The batch uses this for lines it wants to try again (a model call that failed in transport).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from vance_cli.errors import StoreError
from vance_cli.store.atomic import atomic_write_chunks, write_error
from vance_cli.text import json_text

SYNC_LINES = 256
SYNC_SECONDS = 1.0


class IdSet:
    """A set of strings at 16 bytes each, however many: their 128-bit BLAKE2b digests, kept sorted
    in 256 byte arrays (a million ids take 16 MB; a Python set of them some 100 MB). Two ids
    collide with a chance of about n² / 2¹²⁹ (a billion ids: 10⁻²¹), so ``in`` is exact in practice.

    ``add`` ids, then ``in`` (the first ``in`` after an ``add`` sorts the new ones in).
    ``repeated()`` is the digests added more than once (``digest`` maps an id to its digest)."""

    WIDTH = 16

    def __init__(self) -> None:
        self._buckets = [bytearray() for _ in range(256)]
        self._sorted = True
        self._repeated: set[bytes] = set()
        self.count = 0

    @staticmethod
    def digest(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=IdSet.WIDTH).digest()

    def add(self, text: str) -> None:
        item = self.digest(text)
        self._buckets[item[0]] += item
        self.count += 1
        self._sorted = False

    def __len__(self) -> int:
        return self.count

    def _sort(self) -> None:
        width = self.WIDTH
        for number, bucket in enumerate(self._buckets):
            if len(bucket) <= width:
                continue
            items = sorted(bytes(bucket[i : i + width]) for i in range(0, len(bucket), width))
            for before, item in zip(items, items[1:], strict=False):
                if before == item:
                    self._repeated.add(item)
            self._buckets[number] = bytearray(b"".join(items))
        self._sorted = True

    def repeated(self) -> set[bytes]:
        if not self._sorted:
            self._sort()
        return self._repeated

    def __contains__(self, text: object) -> bool:
        if not self.count or not isinstance(text, str):
            return False
        if not self._sorted:
            self._sort()
        item = self.digest(text)
        bucket, width = self._buckets[item[0]], self.WIDTH
        low, high = 0, len(bucket) // width
        while low < high:
            middle = (low + high) // 2
            here = bytes(bucket[middle * width : (middle + 1) * width])
            if here == item:
                return True
            if here < item:
                low = middle + 1
            else:
                high = middle
        return False


class ResultLog:
    """OUT as the batch writes it; see the module docstring. Use as a context manager."""

    def __init__(
        self,
        path: Path | str,
        *,
        key: str = "id",
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
        count: str | None = None,
        known: Collection[str] | None = None,
        among: IdSet | None = None,
        sync_lines: int = SYNC_LINES,
        sync_seconds: float = SYNC_SECONDS,
        auto_sync: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fd = -1
        self.path = Path(path)
        self.key = key
        self.done = IdSet()  # the keys of the lines the file held when opened (and kept)
        self.counted: dict[str, int] = {}  # the kept lines by their ``count`` key's value (e.g. "status")
        self._count = count
        self._known = tuple(known) if known is not None and count is not None else None
        self._among = among
        self.elsewhere = 0  # kept lines whose key is not in ``among``
        self.dropped = 0
        self.repaired = False
        self.appended = 0
        self.syncs = 0
        self._sync_lines = max(1, int(sync_lines))
        self._sync_seconds = sync_seconds
        self._clock = clock
        self._unsynced = 0
        self._last_sync = clock()
        self._auto_sync = auto_sync
        self._syncing = False
        if self.path.is_dir():
            raise StoreError(f"the output {self.path} is a folder", hint="pass a file name with --out")
        existed = self.path.exists()
        if existed:
            self._scan(keep)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as exc:
            raise write_error(self.path, exc, "the output file") from exc
        if not existed:
            self._fsync_folder()

    # ------------------------------------------------------------------ opening

    def _lines(self) -> Iterator[tuple[int, int, bytes]]:
        """(line number, byte offset, raw line) of the file, read as a stream."""
        try:
            with open(self.path, "rb") as fh:
                offset = 0
                for number, raw in enumerate(fh, 1):
                    yield number, offset, raw
                    offset += len(raw)
        except OSError as exc:
            raise StoreError(
                f"cannot read the output {self.path}: {exc.strerror or exc}",
                hint="check its permissions, or pass another file with --out",
            ) from exc

    def _parse(self, raw: bytes) -> dict[str, Any] | None:
        """The object of a complete result line (with its newline), or None for a torn or foreign one."""
        if not raw.endswith(b"\n"):
            return None
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict) or obj.get(self.key) is None:
            return None
        if self._known is not None:
            value = obj.get(self._count)
            if not isinstance(value, str) or value not in self._known:
                return None
        return obj

    def _what(self) -> str:
        known = f" and a {self._count!r} of {', '.join(self._known)}" if self._known is not None else ""
        return f"a JSON object with {self.key!r}{known}"

    def _foreign(self, message: str) -> StoreError:
        return StoreError(
            f"{message}: it is not a results file vance wrote, or it was edited; it is left as it is",
            hint=f"pass another file with --out, or remove {self.path} to start over",
        )

    def _scan(self, keep: Callable[[Mapping[str, Any]], bool] | None) -> None:
        torn: tuple[int, int] | None = None  # (line number, byte offset) of a last line without its newline
        good = False
        for number, offset, raw in self._lines():
            if not raw.strip():
                continue  # a blank line is nobody's result
            obj = self._parse(raw)
            if obj is None:
                if raw.endswith(b"\n"):
                    raise self._foreign(f"line {number} of {self.path} is not a result line ({self._what()})")
                torn = (number, offset)  # only the last line can lack its newline
                continue
            good = True
            if keep is None or keep(obj):
                record_key = str(obj[self.key])
                self.done.add(record_key)
                if self._among is not None and record_key not in self._among:
                    self.elsewhere += 1
                elif self._count is not None:
                    value = str(obj.get(self._count))
                    self.counted[value] = self.counted.get(value, 0) + 1
            else:
                self.dropped += 1
        if torn is not None and not good:
            raise self._foreign(f"{self.path} holds no result line ({self._what()}; line {torn[0]} is not one)")
        self.repaired = torn is not None
        if self.dropped:
            self._rewrite(keep)
        elif torn is not None:
            try:
                os.truncate(self.path, torn[1])
                fd = os.open(self.path, os.O_WRONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                raise write_error(self.path, exc, "the output file") from exc

    def _rewrite(self, keep: Callable[[Mapping[str, Any]], bool] | None) -> None:
        """The file without the lines ``keep`` rejects (and without a torn tail), atomically."""

        def kept() -> Iterator[bytes]:
            for _, _, raw in self._lines():
                obj = self._parse(raw)
                if obj is not None and (keep is None or keep(obj)):
                    yield raw

        try:
            atomic_write_chunks(self.path, kept(), sync_folder=True)
        except OSError as exc:
            raise write_error(self.path, exc, "the output file") from exc

    def _fsync_folder(self) -> None:
        try:
            fd = os.open(self.path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:  # pragma: no cover - platforms that cannot open folders
            return
        try:
            os.fsync(fd)
        except OSError:  # pragma: no cover
            pass
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ writing

    def append(self, obj: Mapping[str, Any]) -> None:
        """One line, written now; an fsync when the group is full or old enough."""
        try:
            data = (json_text(obj, default=str) + "\n").encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in a value: JSON's \uXXXX escape keeps it
            data = (json.dumps(obj, default=str) + "\n").encode("ascii")
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            raise write_error(self.path, exc, "the output file") from exc
        self.appended += 1
        self._unsynced += 1
        if self._auto_sync and self.due:
            self.sync()

    @property
    def due(self) -> bool:
        """The group is full or old enough to be fsynced (and no fsync is under way)."""
        return bool(self._unsynced) and not self._syncing and (
            self._unsynced >= self._sync_lines or self._clock() - self._last_sync >= self._sync_seconds
        )

    def _fsync(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise write_error(self.path, exc, "the output file") from exc

    def sync(self) -> None:
        """fsync what was appended since the last one (nothing to do: no syscall)."""
        if not self._unsynced:
            return
        self._fsync()
        self._synced(self._unsynced)

    async def sync_in_thread(self) -> None:
        """``sync`` with the fsync in a worker thread, so an event loop goes on appending meanwhile
        (a slow disk stalls no call in flight). The counters change on the caller's thread only."""
        pending = self._unsynced
        if not pending or self._syncing:
            return
        self._syncing = True
        try:
            await asyncio.to_thread(self._fsync)
        finally:
            self._syncing = False
        self._synced(pending)

    def _synced(self, lines: int) -> None:
        self.syncs += 1
        self._unsynced -= lines
        self._last_sync = self._clock()

    def close(self) -> None:
        if self._fd < 0:
            return
        try:
            self.sync()
        finally:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ResultLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
