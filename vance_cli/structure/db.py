"""TinyDB tables of the structure tool (schema overrides, builder cache) with atomic file writes.

TinyDB's default storage rewrites its JSON file in place, so a crash mid-write can leave half a
file; this storage writes through ``vance_cli.store.atomic`` instead. A missing file reads as an
empty database and is only created by the first write, so a lookup never litters the scopes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tinydb import TinyDB
from tinydb.storages import Storage

from vance_cli.errors import StoreError

DB_FILE = "structure.json"
MAX_DB_BYTES = 256 * 1024 * 1024  # schema overrides of up to 16 MiB each; a bound, not a budget


class AtomicJSONStorage(Storage):
    def __init__(self, path: str | Path, **_: Any) -> None:
        self.path = Path(path)

    def read(self) -> dict[str, Any] | None:
        from vance_cli.store.reading import read_regular

        try:
            # a regular file, no link (the atomic write would replace a link with a file anyway)
            text = read_regular(self.path, MAX_DB_BYTES, links=False).decode("utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror}", hint=f"check the file's permissions, or move {self.path} aside") from exc
        except UnicodeDecodeError as exc:
            raise self._broken(f"is not UTF-8 text (byte {exc.start})") from None
        if not text.strip():
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._broken(f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
        except ValueError:  # an integer of more than 4,300 digits
            raise self._broken("holds an integer of more than 4,300 digits") from None
        except RecursionError:
            raise self._broken("is nested too deeply to read") from None
        problem = _shape_problem(data)
        if problem:
            raise self._broken(f"does not hold TinyDB tables ({problem})")
        return data

    def _broken(self, why: str) -> StoreError:
        return StoreError(
            f"{self.path} {why}",
            hint=f"move {self.path} aside; Vance recreates it (schema overrides in it are lost)",
        )

    def write(self, data: dict[str, Any]) -> None:
        from vance_cli.store.atomic import atomic_write_json, state_folder, write_error

        state_folder(self.path.parent.parent, self.path.parent.name, what="the structure database")  # <scope>/data: no link
        try:
            atomic_write_json(self.path, data)
        except OSError as exc:
            raise write_error(self.path, exc, "the structure database") from exc

    def close(self) -> None:
        pass


def _shape_problem(data: object) -> str | None:
    """What keeps ``data`` from being TinyDB's tables ({table: {doc id: document}}), or None."""
    if not isinstance(data, dict):
        return f"the file holds a {type(data).__name__}, not an object of tables"
    for name, table in data.items():
        if not isinstance(table, dict):
            return f"table {name!r} is a {type(table).__name__}, not an object"
        for doc_id, row in table.items():
            if not (doc_id.isascii() and doc_id.isdigit()) or not isinstance(row, dict):
                return f"table {name!r} holds {doc_id!r}: {type(row).__name__}, not a numbered document"
    return None


def open_db(data_dir: Path) -> TinyDB:
    """The structure TinyDB in ``data_dir`` (``<scope>/data/structure.json``)."""
    return TinyDB(data_dir / DB_FILE, storage=AtomicJSONStorage)
