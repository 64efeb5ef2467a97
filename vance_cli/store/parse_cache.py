"""Parsed YAML and TOML kept as JSON, keyed by the text's hash, so a command need not import a parser.

Every `vance chat -p` reads the bundled defaults (TOML) and a recipe (YAML); importing PyYAML and
tomllib and parsing them costs 17-21 ms of CPU of a one-shot turn's ~360 ms (measured interleaved,
cache on and off, on a loaded 2-core machine; bench/bench_startup.py's turn is at its 1.5x goal
with it and misses it without). The parsed value is kept in ``$VANCE_HOME/cache/parsed/<hash>.json``;
the next run that reads the same text loads the JSON, which the standard library parses without
either import. Python's own ``__pycache__`` is the model.

What is kept: the bundled defaults and every recipe file read (bundled, the person's, a project's;
the bundled ones are where the figure comes from). A person's config.toml is not
(config/settings.py): it may hold an API key, and keeping it saved ~2 ms more.

It cannot serve a stale value: the key is a hash of the parser's name and the whole text, so an
edited file is a new key (the file is still read every time; only parsing is saved). Only values
that survive a JSON round trip unchanged are kept (YAML dates, integer keys or NaN are parsed
again every time). A parse error is never cached; the parser raises it as before. The cache is
only written when the state folder already exists (a command that has never written state leaves
no cache behind), never fails a command (a folder it cannot write is skipped), and an entry that
cannot be read back whole is parsed again. Entries are written with store/atomic.py, private to
their owner (0600 in a 0700 folder: a recipe is the person's text). Past ``MAX_ENTRIES`` entries
the folder is emptied (entries and temp files a killed writer left), then the new entry written.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Bumped when what a parser returns for the same text could change (a different parser, say).
FORMAT = f"1-py{sys.version_info[0]}.{sys.version_info[1]}"
MAX_ENTRY_CHARS = 1_000_000  # a bigger parsed value is parsed again each time instead
MAX_ENTRIES = 500  # past this many, the folder is emptied (entries are cheap to rebuild)


def _folder(home: Path | None) -> Path | None:
    try:
        return home / "cache" / "parsed" if home is not None and home.is_dir() else None
    except OSError:
        return None


def _key(kind: str, text: str) -> str:
    return hashlib.blake2b(f"{FORMAT}\0{kind}\0{text}".encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def cached_parse(kind: str, text: str, parse: Callable[[str], Any], *, home: Path | None,
                 check: Callable[[Any], None] | None = None) -> Any:
    """``parse(text)``, or the value a previous run got for the same ``kind`` and text.

    ``home`` is the state folder of this invocation (``Scopes.user``; None: no cache). ``check``
    runs on every value returned, parsed or read back (a bound on its size, say), so a bound
    tightened later applies to what was kept before; a value that fails it is not kept.
    """
    folder = _folder(home)
    key = _key(kind, text)
    value = _read(folder, key) if folder is not None else _MISSING
    fresh = value is _MISSING
    if fresh:
        value = parse(text)
    if check is not None:
        check(value)
    if fresh and folder is not None:
        _keep(folder, key, value)
    return value


_MISSING = object()


def _read(folder: Path, key: str) -> Any:
    try:
        entry = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # no entry yet, or one that cannot be read: parse
        return _MISSING
    if isinstance(entry, dict) and entry.get("key") == key and "value" in entry:
        return entry["value"]
    return _MISSING


class _NeverRaised(Exception):
    """What ``error_of`` gives while the parser's module is not imported."""


def error_of(module: str, name: str) -> type[Exception]:
    """The exception class ``module.name`` for an ``except`` clause, without importing ``module``.

    A parse error can only come from a parse, and a parse imports the parser first; until then no
    such error can be raised, and a class that is never raised stands in for it.
    """
    loaded = sys.modules.get(module)
    return getattr(loaded, name) if loaded is not None else _NeverRaised


def _keep(folder: Path, key: str, value: Any) -> None:
    """Write the entry atomically (store/atomic.py), readable by its owner only."""
    try:
        dumped = json.dumps({"key": key, "value": value}, allow_nan=False)  # ASCII: lone surrogates too
        if len(dumped) > MAX_ENTRY_CHARS or json.loads(dumped)["value"] != value:  # e.g. integer keys
            return
    except (TypeError, ValueError, RecursionError):  # a date, bytes, NaN, deep nesting…: not kept
        return
    from vance_cli.store.atomic import atomic_write_bytes  # a warm run never writes: it never imports it

    try:
        if not folder.is_dir():
            folder.parent.mkdir(mode=0o700, exist_ok=True)
            folder.mkdir(mode=0o700, exist_ok=True)
        _purge_when_full(folder)
        # no fsync: an entry lost to a power cut is parsed again (the key check rejects a torn one)
        atomic_write_bytes(folder / f"{key}.json", dumped.encode("ascii"), mode=0o600, fsync=False)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is only a slower next run
        pass


def _purge_when_full(folder: Path) -> None:
    """Past MAX_ENTRIES entries, remove them all and the temp files killed writers left behind.

    Each name is removed on its own: one that cannot be (a folder, a file of another owner) is
    left, and neither stops the rest nor the write that follows. A temp file of a writer still
    running may go too; that writer then keeps nothing (its replace fails), which costs only time.
    """
    from vance_cli.store.atomic import is_temp_file

    names = os.listdir(folder)
    if sum(1 for name in names if name.endswith(".json")) < MAX_ENTRIES:
        return
    for name in names:
        if name.endswith(".json") or is_temp_file(folder / name):
            try:
                (folder / name).unlink()
            except OSError:
                pass
