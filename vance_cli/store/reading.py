"""Reading a small file that someone else may have put there: a regular file only, never a wait,
never more than a bound.

A cloned `.vance/` can ship a lock file, a schema, a manual or a database that is a link to
/dev/zero (an endless read), a FIFO (a read that waits forever for a writer) or to one of the
person's own files. ``read_regular`` is the one way Vance reads such files (lock holders, schema
files and their manuals, the structure database). Standard library only.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

NOT_REGULAR = "it is not a regular file (a device, a FIFO or a socket)"
A_LINK = "it is a symbolic link"


def read_regular(path: Path | str, limit: int, *, links: bool = True, head: bool = False) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` of them).

    OSError when it is anything else, its ``strerror`` saying what for the person: a device, FIFO
    or socket (opened with O_NONBLOCK, so a FIFO never waits for a writer, then refused by its
    mode), a symbolic link when ``links`` is False (O_NOFOLLOW: the last part of the path), or
    longer than ``limit`` (the read stops one byte past it) unless ``head`` is True: then its first
    ``limit`` bytes (a file that may hold more, such as a history log). A missing file is
    FileNotFoundError.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not links and os.path.islink(path):
            raise OSError(errno.ELOOP, A_LINK, str(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
        chunks: list[bytes] = []
        size = 0
        stop = limit if head else limit + 1
        while size < stop:
            chunk = os.read(fd, min(stop - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise OSError(errno.EFBIG, f"it is larger than {limit:,} bytes", str(path))
    return b"".join(chunks)
