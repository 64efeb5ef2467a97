"""One writer per process file: an advisory ``flock`` on ``<id>.lock`` that names its holder.

The kernel drops a flock when its holder exits, however it exits, so a lock file left behind by
a killed ``vance`` never blocks anyone. The file is never deleted (deleting a lock file that
someone else may be opening is the classic flock race); it is emptied on release.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from vance_cli.errors import ProcessLocked, StoreError
from vance_cli.text import shorten


def _holder_info() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "argv": list(sys.argv),
        "since": datetime.now().astimezone().isoformat(timespec="seconds"),
        "since_ts": time.time(),
    }


def _parse_holder(raw: bytes) -> dict[str, Any] | None:
    try:
        info = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    return info if isinstance(info, dict) else None


# Holder info is one short JSON line; more than this is not a lock file Vance wrote.
MAX_HOLDER_BYTES = 64 * 1024


def read_holder(lock_path: Path) -> dict[str, Any] | None:
    """The holder info written in the lock file, or None (no file, empty, unreadable, too big).

    Never through a symlink (O_NOFOLLOW: a shipped ``ID.lock -> /dev/zero`` or ``-> a FIFO``),
    only a regular file, and at most MAX_HOLDER_BYTES: `vance ps` must not hang or fill memory
    (store/reading.py read_regular)."""
    from vance_cli.store.reading import read_regular

    try:
        raw = read_regular(lock_path, MAX_HOLDER_BYTES, links=False)
    except OSError:
        return None
    return _parse_holder(raw) if raw.strip() else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def current_holder(lock_path: Path) -> dict[str, Any] | None:
    """Who holds the lock now, judged without touching the lock (so it never races a real taker).

    A holder that was killed leaves its info behind; that info counts only while its pid is alive
    on this host (other hosts are taken at their word).
    """
    info = read_holder(lock_path)
    if info is None:
        return None
    pid = info.get("pid")
    if (
        info.get("host") == socket.gethostname()
        and isinstance(pid, int)
        and not _pid_alive(pid)
    ):
        return None
    return info


def describe_holder(info: dict[str, Any] | None) -> str:
    """``vance pid 4242 (vance chat --resume x) since 2026-01-02T10:00:00+01:00``."""
    if not info:
        return "another vance (holder unknown)"
    argv = info.get("argv") or []
    if isinstance(argv, list) and argv:
        words = [os.path.basename(str(argv[0])), *(str(a) for a in argv[1:])]
        command = shorten(" ".join(words), 80, mark="...")
    else:
        command = "?"
    text = f"vance pid {info.get('pid', '?')} ({command})"
    host = info.get("host")
    if host and host != socket.gethostname():
        text += f" on host {host}"
    if info.get("since"):
        text += f" since {info['since']}"
    return text


@contextlib.contextmanager
def process_lock(lock_path: Path, process_id: str) -> Iterator[None]:
    """Hold the exclusive lock for ``process_id`` or raise ProcessLocked naming the holder."""
    import fcntl  # POSIX only; imported here so listing processes never needs it

    from vance_cli.store.atomic import write_error

    lock_path = Path(lock_path)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a lock file that is a symlink (shipped in a cloned .vance/) would have the
        # file behind it truncated; Vance never writes through a link in its state folder.
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreError(
                f"the lock file {lock_path} is a symbolic link; Vance does not write through links in its state folder",
                hint=f"remove the link (rm {lock_path}); Vance creates the lock file itself",
            ) from None
        raise write_error(lock_path, exc, "lock file") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            holder = read_holder(lock_path)
            raise ProcessLocked(
                f"process {process_id} is in use by {describe_holder(holder)}",
                hint="wait for it to finish or stop it",
            ) from None
        try:
            data = json.dumps(_holder_info()).encode("utf-8")
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, data, 0)
            except OSError as exc:
                raise write_error(lock_path, exc, "lock file") from exc
            yield
        finally:
            # Empty first, unlock second: a reader never sees our info on a free lock for long.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
