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


class AtomicJSONStorage(Storage):
    def __init__(self, path: str | Path, **_: Any) -> None:
        self.path = Path(path)

    def read(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror}", hint="check the file's permissions") from exc
        if not text.strip():
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StoreError(
                f"{self.path} is not valid JSON ({exc.msg} at line {exc.lineno})",
                hint=f"move {self.path} aside; Vance recreates it (schema overrides in it are lost)",
            ) from exc
        if not isinstance(data, dict):
            raise StoreError(f"{self.path} does not hold TinyDB tables", hint=f"move {self.path} aside; Vance recreates it")
        return data

    def write(self, data: dict[str, Any]) -> None:
        from vance_cli.store.atomic import atomic_write_json, write_error

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(self.path, data)
        except OSError as exc:
            raise write_error(self.path, exc, "the structure database") from exc

    def close(self) -> None:
        pass


def open_db(data_dir: Path) -> TinyDB:
    """The structure TinyDB in ``data_dir`` (``<scope>/data/structure.json``)."""
    return TinyDB(data_dir / DB_FILE, storage=AtomicJSONStorage)
