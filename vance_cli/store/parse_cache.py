"""Parsed YAML and TOML kept as JSON, keyed by the text's hash, so a command need not import a parser.

Every `vance chat -p` reads the bundled defaults (TOML) and a recipe (YAML); importing PyYAML and
tomllib and parsing costs about 12 ms of a one-shot turn's start-up (bench/bench_startup.py). The
parsed value is kept in ``$VANCE_HOME/cache/parsed/<hash>.json``; the next run that reads the same
text loads the JSON, which the standard library parses without either import. Python's own
``__pycache__`` is the model.

It cannot serve a stale value: the key is a hash of the parser's name and the whole text, so an
edited file is a new key (the file is still read every time; only parsing is saved). Only values
that survive a JSON round trip unchanged are kept (YAML dates, integer keys or NaN are parsed
again every time). A parse error is never cached; the parser raises it as before. The cache is
only written when the state folder already exists (a command that has never written state leaves
no cache behind), never fails a command (a folder it cannot write is skipped), and an entry that
cannot be read back whole is parsed again.
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
FORMAT = "1"
MAX_ENTRY_CHARS = 1_000_000  # a bigger parsed value is parsed again each time instead
MAX_ENTRIES = 500  # past this many, the folder is emptied (entries are cheap to rebuild)


def _folder() -> Path | None:
    try:
        home = os.environ.get("VANCE_HOME")
        base = Path(home).expanduser() if home else Path.home() / ".vance"
        return base / "cache" / "parsed" if base.is_dir() else None
    except (OSError, RuntimeError):  # no home folder to be found
        return None


def _key(kind: str, text: str) -> str:
    return hashlib.blake2b(f"{FORMAT}\0{kind}\0{text}".encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def cached_parse(kind: str, text: str, parse: Callable[[str], Any], check: Callable[[Any], None] | None = None) -> Any:
    """``parse(text)``, or the value a previous run got for the same ``kind`` and text.

    ``check`` runs on a freshly parsed value before it is kept (a bound on its size, say) and on
    nothing read from the cache, which only ever holds values that passed it.
    """
    folder = _folder()
    key = _key(kind, text)
    if folder is not None:
        try:
            entry = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
            if isinstance(entry, dict) and entry.get("key") == key and "value" in entry:
                return entry["value"]
        except (OSError, ValueError):
            pass  # no entry yet, or one that cannot be read: parse
    value = parse(text)
    if check is not None:
        check(value)
    if folder is not None:
        _keep(folder, key, value)
    return value


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
    try:
        dumped = json.dumps({"key": key, "value": value}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # a date, bytes, NaN…: not JSON
        return
    if len(dumped) > MAX_ENTRY_CHARS or json.loads(dumped)["value"] != value:  # e.g. integer keys
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        names = os.listdir(folder)
        if len(names) >= MAX_ENTRIES:
            for name in names:
                if name.endswith(".json"):
                    (folder / name).unlink(missing_ok=True)
        from vance_cli.store.atomic import atomic_write_text

        atomic_write_text(folder / f"{key}.json", dumped)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is only a slower next run
        pass
