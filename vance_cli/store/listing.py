"""The process listing (`vance ps`): what it shows of each process file, read without the history.

A listing reads each file's JSON and checks what it shows (id, engine, recipe name, model, status,
parent, title, folder, times) as a Process checks those fields, plus what every reader checks
(UTF-8, JSON, an object, not nested too deep outside the history, not from a newer vance); a file
that fails is listed as unreadable with the reason. The rest of a Process (the history above all)
is not validated here: `vance show` and resuming do, and say what is wrong. The recipe snapshot is
kept once per distinct snapshot (``Listing.recipes``), so its check (runtime/checks.py) runs once
for all the chats that share it. A file naming a history log (store/history_log.py) is listed as
unreadable when an lstat shows the log missing, a link, not a regular file or shorter than named,
as `vance show` would say; that check runs at every listing, the log is not read.

What was read is kept in ``$VANCE_HOME/cache/ps/<hash of the folder>.json``, keyed by each file's inode, size,
modification and change time (a save replaces the file, so it gets a new inode): the next listing
stats the files and reads only those that changed, so listing 10,000 processes costs a stat per
file (bench/bench_ps.py). A file modified within the last ``RACY_SECONDS`` is read every time
until it is older (a coarse file system clock could otherwise hide an edit of the same size, as
git's index does). The cache is written only when something changed and only when the state folder
exists (as store/parse_cache.py), never fails a listing (a folder it cannot write is skipped; an entry it
cannot read is read again from the file), and is private to its owner (0600): titles are the
person's text.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError, create_model

from vance_cli.store import history_log
from vance_cli.store.atomic import TEMP_PREFIX, TEMP_SUFFIX, atomic_write_bytes
from vance_cli.store.files import Unreadable, read_process_data, validation_reason
from vance_cli.store.process import SCHEMA_VERSION, Process, Status

# Bumped when what is kept for a file could change for the same file.
CACHE_FORMAT = f"3-{SCHEMA_VERSION}"  # 3: an entry keeps the history log its file names
RACY_SECONDS = 2.0

# The fields a listing shows; validated with the Process's own field definitions.
SHOWN = ("id", "engine", "recipe", "recipe_name", "model", "status", "parent", "title", "workspace", "created",
         "updated", "status_reason")
_Shown = create_model(  # type: ignore[call-overload]
    "_Shown",
    __config__=ConfigDict(extra="ignore"),
    **{name: (Process.model_fields[name].annotation, Process.model_fields[name]) for name in SHOWN},
)


@dataclass(frozen=True)
class ProcessSummary:
    """What a listing shows of one process (the fields of a Process with the same names)."""

    id: str
    engine: str
    recipe_name: str | None
    model: str | None
    status: Status
    parent: str | None
    title: str | None
    workspace: str | None
    created: float
    updated: float
    status_reason: str | None
    recipe: str  # the key of its recipe snapshot in Listing.recipes

    @classmethod
    def of(cls, row: list[Any]) -> ProcessSummary:
        """From its row in the cache (the fields in order, the status by name)."""
        if len(row) != len(_FIELDS):
            raise ValueError("not a whole row")
        summary = cls(*row)
        object.__setattr__(summary, "status", Status(summary.status))
        return summary

    def row(self) -> list[Any]:
        return [self.status.value if f == "status" else getattr(self, f) for f in _FIELDS]


_FIELDS = tuple(ProcessSummary.__dataclass_fields__)


@dataclass
class Listing:
    processes: list[ProcessSummary]  # newest ``updated`` first
    unreadable: list[tuple[Path, str]]  # by file name, with the reason
    recipes: dict[str, dict[str, Any]] = field(default_factory=dict)  # recipe snapshots by key


def summary_of(path: Path) -> tuple[dict[str, Any], dict[str, Any], list[Any] | None]:
    """(the shown fields as JSON values, the recipe snapshot, [file, bytes] of the history log it
    names or None) of one process file; Unreadable."""
    data = read_process_data(path, history=False)
    log = None
    if data.get(history_log.KEY) is not None:
        try:
            name, _, size = history_log.check_ref(path, data[history_log.KEY])
        except history_log.LogError as exc:
            raise Unreadable(str(exc)) from None
        log = [name, size]
    try:
        shown = _Shown.model_validate(data)
    except ValidationError as exc:
        raise Unreadable(validation_reason(exc)) from exc
    if shown.id != path.stem:
        raise Unreadable(f"its id {shown.id!r} does not match the file name")
    kept = shown.model_dump(mode="json")
    return kept, kept.pop("recipe"), log


def _recipe_key(recipe: dict[str, Any]) -> str:
    text = json.dumps(recipe, sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _signature(st: os.stat_result) -> list[int]:
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _cache_path(home: Path | None, root: Path) -> Path | None:
    try:
        if home is None or not home.is_dir():
            return None
    except OSError:
        return None
    name = hashlib.blake2b(str(root.absolute()).encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
    return home / "cache" / "ps" / f"{name}.json"


def _read_cache(path: Path | None, root: Path) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT or data.get("root") != str(root.absolute()):
        return {}
    return data


def _write_cache(path: Path | None, root: Path, files: dict[str, Any], recipes: dict[str, Any]) -> None:
    if path is None:
        return
    body = {"format": CACHE_FORMAT, "root": str(root.absolute()), "files": files, "recipes": recipes}
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_bytes(path, json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass"), mode=0o600, fsync=False)
    except (OSError, ValueError):
        pass


def list_processes(root: Path, *, home: Path | None = None) -> Listing:
    """Every process file in ``root`` as a summary (or unreadable, with the reason).

    ``home``: the state folder whose cache/ps/ keeps what was read (None: read every file).
    """
    cache_file = _cache_path(home, root)
    kept = _read_cache(cache_file, root)
    old_files: dict[str, Any] = kept.get("files") or {}
    old_recipes: dict[str, Any] = kept.get("recipes") or {}
    files: dict[str, Any] = {}
    listing = Listing([], [], {})
    changed = False
    racy = time.time() - RACY_SECONDS
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for entry in entries:
        name = entry.name
        if not name.endswith(".json") or name.startswith(TEMP_PREFIX) or name.endswith(TEMP_SUFFIX):
            continue
        try:
            st = entry.stat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        signature = _signature(st)
        old = old_files.get(name)
        found = _from_cache(old[4], old_recipes) if isinstance(old, list) and len(old) == 5 and old[:4] == signature else None
        if found is None:
            changed = True
            try:
                shown, recipe, log = summary_of(Path(entry.path))
            except Unreadable as exc:
                found = _Found({"unreadable": str(exc)})
            except FileNotFoundError:  # pragma: no cover - removed while listing
                continue
            else:
                shown["recipe"] = _recipe_key(recipe)
                summary = ProcessSummary(**{**shown, "status": Status(shown["status"])})
                found = _Found({"row": summary.row(), **({"log": log} if log else {})}, summary, recipe)
        # the log can go or change while the process file stays as it was: an lstat every time
        gone = history_log.problem(Path(entry.path), *found.kept["log"]) if "log" in found.kept else None
        if gone is not None:
            listing.unreadable.append((Path(entry.path), gone))
        elif found.summary is None:
            listing.unreadable.append((Path(entry.path), found.kept["unreadable"]))
        else:
            listing.processes.append(found.summary)
            listing.recipes[found.summary.recipe] = found.recipe
        if st.st_mtime < racy:
            files[name] = [*signature, found.kept]
        else:
            changed = True  # read again next time: not kept while it may change unseen
    if changed or len(files) != len(old_files):
        _write_cache(cache_file, root, files, listing.recipes)
    listing.processes.sort(key=lambda p: p.updated, reverse=True)
    return listing


@dataclass
class _Found:
    kept: dict[str, Any]  # what the cache keeps for the file
    summary: ProcessSummary | None = None  # None: unreadable
    recipe: dict[str, Any] = field(default_factory=dict)


def _from_cache(entry: Any, recipes: dict[str, Any]) -> _Found | None:
    """A kept entry, or None when it is not whole (the file is read again)."""
    if not isinstance(entry, dict):
        return None
    if isinstance(entry.get("unreadable"), str):
        return _Found(entry)
    row, log = entry.get("row"), entry.get("log", [".", 0])
    if not isinstance(row, list) or not (isinstance(log, list) and len(log) == 2 and isinstance(log[0], str)
                                         and type(log[1]) is int):
        return None
    try:
        summary = ProcessSummary.of(row)
    except (TypeError, ValueError):
        return None
    recipe = recipes.get(summary.recipe)
    if not isinstance(recipe, dict):
        return None
    return _Found(entry, summary, recipe)
