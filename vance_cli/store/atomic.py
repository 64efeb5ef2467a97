"""Atomic file writes: a reader sees the old file or the new one, never half of either.

The bytes go to a temp file in the same folder (same filesystem, so the rename is atomic),
which is fsynced before ``os.replace``; a new file's folder is fsynced too, so its name survives
a power cut. Any failure removes the temp file and leaves the original alone. The one writer for
Vance's own files (process files, journals, the trust list) and the file_write tool's.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from vance_cli.errors import StoreError

TEMP_PREFIX = "."
TEMP_SUFFIX = ".tmp"


def _current_umask() -> int:
    # Linux shows the umask in /proc; elsewhere os.umask can only be read by setting it, which
    # we do once, at import, rather than racing other threads on every write.
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


_WHY = {
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "no space is left on the disk",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EISDIR: "it is a folder",
}


def write_error(path: Path | str, exc: OSError, what: str = "file") -> StoreError:
    """A StoreError that says which file could not be written and why (instead of a raw OSError)."""
    why = _WHY.get(exc.errno or 0) or exc.strerror or str(exc)
    folder = Path(path).parent
    return StoreError(
        f"cannot write {what} {path}: {why}",
        hint=f"make {folder} writable and make sure its disk has space; Vance keeps its state in "
        "$VANCE_HOME (default ~/.vance), or in the .vance/ folder of a project",
    )


def is_temp_file(path: Path) -> bool:
    """True for the temp files this module creates (a killed writer can leave one behind)."""
    return path.name.startswith(TEMP_PREFIX) and path.name.endswith(TEMP_SUFFIX)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms that cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on folders
        pass
    finally:
        os.close(fd)


def _temp_name(name: str) -> str:
    """``.<name>.<random>.tmp`` (a leftover says whose it is), or a fixed shape where that would
    be longer than a file name may be (NAME_MAX, 255 bytes: a person's file may be that long)."""
    tmp = f"{TEMP_PREFIX}{name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
    if len(os.fsencode(tmp)) <= 255:
        return tmp
    return f"{TEMP_PREFIX}vance-{secrets.token_hex(6)}{TEMP_SUFFIX}"


def state_folder(base: Path | str, *parts: str, what: str = "state folder") -> Path:
    """``base/parts...``, the folders made (0700: state is private) where missing; StoreError
    (``write_error`` for ``what``) when one cannot be made, or ``base`` or a part is a symbolic
    link or not a folder.

    Vance never writes its state through a link: a cloned ``.vance`` (or its ``processes/``) that
    links elsewhere would put the conversation where the link points. Each part is checked with
    lstat below ``base`` (the scope folder: $VANCE_HOME resolved, or the folder holding
    ``.vance`` plus ``.vance``); O_NOFOLLOW on the file itself guards only the last part.
    """
    path = Path(base)
    try:
        if not os.path.lexists(path):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        for part in ("", *parts):
            path = path / part if part else path
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(path, 0o700)
                mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                raise StoreError(
                    f"{path} is a symbolic link; Vance does not write its state through links",
                    hint=f"make {path} a folder of its own (rm {path}; Vance creates it), or work in another folder",
                )
            if not stat.S_ISDIR(mode):
                raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    except OSError as exc:
        raise write_error(path, exc, what) from exc
    return path


def atomic_write_text(
    path: Path | str, text: str, *, encoding: str = "utf-8", exclusive: bool = False
) -> None:
    """Replace ``path`` with ``text`` atomically (creating the parent folder if needed).

    ``exclusive=True`` fails with FileExistsError instead of replacing an existing file; the
    check and the rename are one atomic step (a hard link), so two creators cannot both win.
    """
    atomic_write_bytes(path, text.encode(encoding), exclusive=exclusive)


def atomic_write_bytes(
    path: Path | str, data: bytes, *, exclusive: bool = False, sync_folder: bool = False, mode: int | None = None,
    fsync: bool = True,
) -> None:
    """Replace ``path`` with ``data`` atomically (creating the parent folder if needed); see
    :func:`atomic_write_chunks` for the options."""
    atomic_write_chunks(path, (data,), exclusive=exclusive, sync_folder=sync_folder, mode=mode, fsync=fsync)


def atomic_write_chunks(
    path: Path | str, chunks: Iterable[bytes], *, exclusive: bool = False, sync_folder: bool = False,
    mode: int | None = None, fsync: bool = True,
) -> None:
    """Replace ``path`` with the concatenated ``chunks`` atomically (creating the parent folder if
    needed); the chunks are written as they come, so a file larger than memory can be rewritten.

    ``exclusive`` as in :func:`atomic_write_text`. ``sync_folder`` fsyncs the folder after a
    replace too (a person's file: the new version, not only the new name, survives a power cut).
    ``mode``: the file's mode, new or replaced (0o600 for a private file); None keeps the mode of
    the file replaced, and a new file gets the usual umask mode. ``fsync=False``: the rename is
    still atomic, but a power cut may lose the new content (for caches that are cheap to rebuild).
    """
    path = Path(path)
    folder = path.parent
    try:
        # Keep the mode of the file we replace; a new file gets the usual umask mode.
        kept = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        kept = 0o666 & ~_UMASK
        folder.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = kept
    # Plain os.open with O_EXCL and a random name: what NamedTemporaryFile does, without its
    # per-call overhead and the chmod it needs afterwards (this runs at every engine step).
    tmp_path = folder / _temp_name(path.name)
    try:
        fd = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
        try:
            for data in chunks:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mode & ~_UMASK != mode:  # os.open applied the umask; restore the replaced file's mode
            os.chmod(tmp_path, mode)
        if exclusive:
            os.link(tmp_path, path)
            tmp_path.unlink()
        else:
            os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise
    if exclusive or sync_folder:
        # A new name must survive a power loss, or the process would vanish. A replaced file needs
        # no folder fsync: after a power loss the rename may be lost, leaving the previous,
        # complete version (one step behind, never torn); a kill -9 loses nothing either way.
        # Skipping it halves the fsyncs on the per-step save path (bench/bench_turn.py).
        _fsync_dir(folder)


def atomic_write_json(
    path: Path | str, obj: Any, *, indent: int | None = 2, exclusive: bool = False
) -> None:
    """``obj`` as JSON (UTF-8, trailing newline), written with :func:`atomic_write_text`."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False) + "\n"
    atomic_write_text(path, text, exclusive=exclusive)


def atomic_write_via(path: Path | str, write: Callable[[Path], None], *, sync_folder: bool = False) -> None:
    """Replace ``path`` atomically with the file ``write(temp)`` makes at a temp path in the same
    folder (for a library that writes to a path itself: pyarrow's Parquet writer). The temp file
    is fsynced and renamed over ``path``; any failure removes it and leaves ``path`` alone.
    ``sync_folder`` as in :func:`atomic_write_chunks`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = path.parent / _temp_name(path.name)
    try:
        write(tmp_path)
        fd = os.open(tmp_path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise
    if sync_folder:
        _fsync_dir(path.parent)
