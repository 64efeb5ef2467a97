"""The schema registry: named schemas and manuals, looked up project → user ("tenant") → bundled.

Each scope contributes two sources, the override table first:

1. the TinyDB table ``structure_schemas`` in ``<scope>/data/structure.json`` (rows: name, scope,
   schema, manual, version), managed by ``vance schemas add/rm``;
2. files ``<scope>/schemas/<name>.json`` with an optional ``<name>.manual.md`` beside it.

The bundled scope has files only (the repository's ``schemas/`` folder, or the wheel's copy).
First match wins. Names starting with ``_`` (``_meta-schema``) are internal and never listed.

Origins (spec §6.2, shown as ``schemaOrigin = "registry:<origin>"``):

- ``bundled``
- ``tenant:<id>`` for the user scope (``$VANCE_HOME``). A local console has no tenants, so the id
  is the setting ``structure.tenantId``, default ``"local"``.
- ``project:<id>`` for the project scope; the id is the name of the folder holding ``.vance/``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.errors import UsageError, VanceError
from vance_cli.schema.check import check_schema
from vance_cli.structure.errors import InvalidSchema, SchemaNotFound
from vance_cli.text import did_you_mean

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes

TABLE = "structure_schemas"
# Listing checks a schema against its meta-schema only up to this size; a bigger one (checking
# takes ~1 s per MB) is parsed only and checked in full when it is used.
LIST_CHECK_BYTES = 256 * 1024
# A schema file (or its manual) is read up to this size, and no further: a JSON Schema is a few KB.
MAX_SCHEMA_FILE_BYTES = 16 * 1024 * 1024
DEFAULT_TENANT = "local"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


@dataclass
class RegisteredSchema:
    name: str
    schema: dict[str, Any]
    manual: str | None
    version: str
    origin: str  # "bundled" | "tenant:<id>" | "project:<id>"
    scope: str  # "project" | "user" | "bundled"
    source: str  # the file, or "<db file>#structure_schemas" for an override
    kind: str  # "file" | "override"

    @property
    def schema_origin(self) -> str:
        return f"registry:{self.origin}"

    @property
    def description(self) -> str:
        text = self.schema.get("description") or self.schema.get("title") or ""
        return str(text).strip().splitlines()[0] if str(text).strip() else ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "origin": self.schema_origin,
            "scope": self.scope,
            "kind": self.kind,
            "version": self.version,
            "source": self.source,
            "description": self.description,
            "schema": self.schema,
            "manual": self.manual,
        }


@dataclass
class SchemaListing:
    schema: RegisteredSchema
    shadowed_by: str | None  # the origin that wins over this entry, if any


@dataclass
class BrokenSchema:
    """An entry that could not be loaded: skipped by listings and inference, an error when asked for by name."""

    name: str | None  # None when a whole source (a corrupt override table) is unreadable
    scope: str
    source: str
    problem: str  # the InvalidSchema/StoreError message


def check_name(name: str) -> str:
    """Registry names are file-name safe; a leading "_" is reserved for internal files."""
    if not NAME_RE.match(name or "") or name.startswith("_"):
        raise UsageError(
            f"invalid schema name {name!r}",
            hint="use letters, digits, '-', '_' or '.', starting with a letter or digit (e.g. meeting-note)",
        )
    return name


def parse_schema_json(text: str, where: str, *, fix: str) -> Any:
    """``json.loads(text)``, every way it fails an InvalidSchema naming ``where``: bad JSON (with its
    line and column), an integer of more than 4,300 digits, nesting too deep to read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidSchema(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", hint=fix) from exc
    except ValueError as exc:  # int() refuses more than 4,300 digits
        raise InvalidSchema(f"{where} holds an integer of more than 4,300 digits", hint=fix) from exc
    except RecursionError as exc:
        raise InvalidSchema(
            f"{where} is nested too deeply to read",
            hint=f'{fix}: move nested parts into "$defs" and point at them with "$ref"',
        ) from exc


def read_text_file(path: Path, what: str, *, links: bool = True) -> str:
    """The UTF-8 text of a schema or manual file, read as a regular file of at most
    MAX_SCHEMA_FILE_BYTES (store/reading.py: a FIFO or /dev/zero never hangs); ``links=False``
    refuses a symbolic link. Every problem is an InvalidSchema naming the path."""
    from vance_cli.store.reading import A_LINK, read_regular

    try:
        raw = read_regular(path, MAX_SCHEMA_FILE_BYTES, links=links)
    except OSError as exc:
        hint = "check the path and the permissions of the file and its folders"
        if exc.strerror == A_LINK:
            hint = f"a schema of a project folder is read from a file of its own: copy the file the link points to into {path.parent}"
        raise InvalidSchema(f"cannot read {what} {path}: {exc.strerror}", hint=hint) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidSchema(f"cannot read {what} {path}: {path.name} is not UTF-8 text ({exc.reason})", hint=f"save {path} as UTF-8") from exc


def read_schema_file(path: Path, *, check: bool = True, links: bool = True) -> dict[str, Any]:
    """The schema in a file, checked (``check=False``: only parsed, and it must be an object);
    every read problem is an InvalidSchema naming the path (``read_text_file``)."""
    text = read_text_file(path, "schema file", links=links)
    data = parse_schema_json(text, f"schema file {path}", fix=f"fix the JSON in {path}")
    if not check:
        if not isinstance(data, dict):
            raise InvalidSchema(f"schema file {path} must hold a JSON object (a JSON Schema), got {type(data).__name__}", hint=f"fix {path}")
        return data
    return check_schema(data, where=f"schema file {path}")


def unknown_schema(name: str, known: list[str], *, hint: str) -> SchemaNotFound:
    """SchemaNotFound for ``name``, suggesting the closest known names (or listing them all)."""
    suggestion = did_you_mean(name, known, n=3)
    if suggestion:
        return SchemaNotFound(f"unknown schema {name!r}{suggestion}", hint=hint)
    listed = ", ".join(known) if known else "(none)"
    return SchemaNotFound(f"unknown schema {name!r}; available: {listed}", hint=hint)


def _file_version(schema: dict[str, Any]) -> str:
    value = schema.get("x-version")
    return str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else "1.0"


def _bump(version: str) -> str:
    """Minor bump ("1.2" → "1.3"), spec §6.3; anything unparseable restarts at "1.0"."""
    match = re.fullmatch(r"(\d+)\.(\d+)", version or "")
    return f"{match.group(1)}.{int(match.group(2)) + 1}" if match else "1.0"


class SchemaRegistry:
    def __init__(self, scopes: Scopes, *, tenant_id: str = DEFAULT_TENANT) -> None:
        self.scopes = scopes
        self.tenant_id = tenant_id or DEFAULT_TENANT

    # ------------------------------------------------------------------ scopes

    def origin_for(self, scope: str) -> str:
        if scope == "bundled":
            return "bundled"
        if scope == "user":
            return f"tenant:{self.tenant_id}"
        project = self.scopes.project
        project_id = project.parent.name if project is not None and project.parent.name else "project"
        return f"project:{project_id}"

    def _scope_root(self, scope: str) -> Path | None:
        if scope == "project":
            return self.scopes.project
        if scope == "user":
            return self.scopes.user
        return None

    def _linked_folder(self, scope: str, folder: Path) -> str | None:
        """Why the project scope's ``schemas/`` folder is not read (it, or the ``.vance`` holding it,
        is a symbolic link: a clone's link could lead to the person's own files), or None."""
        if scope != "project":
            return None
        for path in (self.scopes.project, folder):
            if path is not None and path.is_symlink():
                return f"{path} is a symbolic link; a project folder's schemas are read from its own .vance/schemas/"
        return None

    def _db_path(self, scope: str) -> Path | None:
        from vance_cli.structure.db import DB_FILE

        root = self._scope_root(scope)
        return None if root is None else root / "data" / DB_FILE

    def _overrides(self, scope: str) -> list[dict[str, Any]]:
        path = self._db_path(scope)
        if path is None or not path.is_file():
            return []
        from vance_cli.structure.db import open_db

        with open_db(path.parent) as db:
            return [dict(row) for row in db.table(TABLE).all()]

    def _from_row(self, row: dict[str, Any], scope: str, *, check: bool | None = True) -> RegisteredSchema:
        schema = row.get("schema")
        where = f"override {row.get('name')!r} in {self._db_path(scope)}"
        if check is None:  # listing: only small schemas are checked here
            check = len(json.dumps(schema)) <= LIST_CHECK_BYTES
        if check:
            schema = check_schema(schema, where=where)
        elif not isinstance(schema, dict):
            raise InvalidSchema(f"{where} must be a JSON object (a JSON Schema), got {type(schema).__name__}", hint="replace it with `vance schemas add`")
        return RegisteredSchema(
            name=str(row.get("name")),
            schema=schema,
            manual=row.get("manual") or None,
            version=str(row.get("version") or "1.0"),
            origin=self.origin_for(scope),
            scope=scope,
            source=f"{self._db_path(scope)}#{TABLE}",
            kind="override",
        )

    def _from_file(self, path: Path, scope: str, *, check: bool | None = True) -> RegisteredSchema:
        # A project folder's files come with a clone: no link there (one to ~/.docker/config.json
        # would turn the person's credentials into a schema the model is sent).
        links = scope != "project"
        if check is None:  # listing: only small files are checked here
            try:
                check = path.stat().st_size <= LIST_CHECK_BYTES
            except OSError:
                check = True  # read_schema_file reports it
        schema = read_schema_file(path, check=check, links=links)
        manual_path = path.with_name(path.name[: -len(".json")] + ".manual.md")
        manual = None
        if os.path.lexists(manual_path):
            manual = read_text_file(manual_path, "manual file", links=links).strip() or None
        return RegisteredSchema(
            name=path.name[: -len(".json")],
            schema=schema,
            manual=manual,
            version=_file_version(schema),
            origin=self.origin_for(scope),
            scope=scope,
            source=str(path),
            kind="file",
        )

    # ------------------------------------------------------------------ lookup

    def find(self, name: str) -> RegisteredSchema | None:
        """The first match along project → user → bundled (override table before files)."""
        if not NAME_RE.match(name or "") or name.startswith("_"):
            return None
        for scope, folder in self.scopes.search_path("schemas"):
            for row in self._overrides(scope):
                if row.get("name") == name:
                    return self._from_row(row, scope)
            path = folder / f"{name}.json"
            if os.path.lexists(path) and not self._linked_folder(scope, folder):
                return self._from_file(path, scope)
        return None

    def get(self, name: str) -> RegisteredSchema:
        found = self.find(name)
        if found is None:
            raise unknown_schema(name, self.names(), hint="run `vance schemas list`, or add one with `vance schemas add NAME FILE`")
        return found

    def scan(self, *, check: bool | None = None) -> tuple[list[SchemaListing], list[BrokenSchema]]:
        """Every loadable entry of every scope in lookup order (later duplicates marked shadowed),
        and the entries that failed to load. One broken file never hides the others.

        A schema is checked (meta-schema, refs) here when it is at most ``LIST_CHECK_BYTES``
        (``check=True``: always; ``False``: never); a bigger one is only parsed and is checked in
        full when it is used (``get``/``find``): checking a multi-megabyte schema takes seconds,
        and listing names must not cost that."""
        entries: list[SchemaListing] = []
        broken: list[BrokenSchema] = []
        winners: dict[str, str] = {}

        def claim(name: str, origin: str) -> str | None:
            winner = winners.get(name)
            if winner is None:
                winners[name] = origin
            return winner

        for scope, folder in self.scopes.search_path("schemas"):
            found: list[RegisteredSchema | BrokenSchema] = []
            try:
                rows = sorted(self._overrides(scope), key=lambda r: str(r.get("name")))
            except VanceError as exc:
                rows = []
                broken.append(BrokenSchema(name=None, scope=scope, source=str(self._db_path(scope)), problem=exc.message))
            for row in rows:
                name = str(row.get("name") or "")
                if NAME_RE.match(name) and not name.startswith("_"):
                    try:
                        found.append(self._from_row(row, scope, check=check))
                    except VanceError as exc:
                        found.append(BrokenSchema(name=name, scope=scope, source=f"{self._db_path(scope)}#{TABLE}", problem=exc.message))
            linked = self._linked_folder(scope, folder)
            try:
                paths = sorted(folder.glob("*.json")) if folder.is_dir() and not linked else []
            except OSError as exc:
                paths = []
                broken.append(BrokenSchema(name=None, scope=scope, source=str(folder), problem=f"cannot list {folder}: {exc.strerror}"))
            if linked and folder.is_dir():
                broken.append(BrokenSchema(name=None, scope=scope, source=str(folder), problem=linked))
            for path in paths:
                stem = path.name[: -len(".json")]
                if stem.startswith("_") or not NAME_RE.match(stem):
                    continue
                try:
                    found.append(self._from_file(path, scope, check=check))
                except VanceError as exc:
                    found.append(BrokenSchema(name=stem, scope=scope, source=str(path), problem=exc.message))
            for item in found:
                if isinstance(item, BrokenSchema):
                    broken.append(item)
                    # A broken entry still wins its name: `get` raises for it rather than falling through.
                    claim(str(item.name), f"registry:{self.origin_for(scope)} (broken)")
                    continue
                entries.append(SchemaListing(schema=item, shadowed_by=claim(item.name, item.schema_origin)))
        return entries, broken

    def list_available(self) -> list[SchemaListing]:
        """Every loadable entry in lookup order; later duplicates are marked shadowed (see ``scan``)."""
        return self.scan()[0]

    def broken(self) -> list[BrokenSchema]:
        return self.scan()[1]

    def names(self, *, include_broken: bool = False) -> list[str]:
        """The names that resolve to a parseable schema; with ``include_broken`` also the names of
        broken entries (mode inference: asking for such a name should say what is wrong with it,
        not silently turn the name into a text-mode description)."""
        if include_broken:
            return self.known_names()
        entries, _ = self.scan()
        return sorted({e.schema.name for e in entries if e.shadowed_by is None})

    def known_names(self) -> list[str]:
        """Every name the registry holds, loadable or not: what mode inference matches against.

        Read from file names and override rows only: no schema file is opened."""
        names: set[str] = set()
        for scope, folder in self.scopes.search_path("schemas"):
            try:
                names |= {str(r.get("name")) for r in self._overrides(scope) if NAME_RE.match(str(r.get("name") or ""))}
            except VanceError:
                pass  # a corrupt table: `vance schemas list` reports it
            try:
                stems = [p.name[: -len(".json")] for p in folder.glob("*.json")] if folder.is_dir() and not self._linked_folder(scope, folder) else []
            except OSError:
                stems = []
            names |= {s for s in stems if NAME_RE.match(s)}
        return sorted(n for n in names if not n.startswith("_"))

    # ------------------------------------------------------------------ overrides

    def default_scope(self) -> str:
        return "project" if self.scopes.project is not None else "user"

    def _writable(self, scope: str | None) -> str:
        scope = scope or self.default_scope()
        if scope not in ("project", "user"):
            raise UsageError(f"unknown scope {scope!r}", hint="use --scope project or --scope user")
        if scope == "project" and self.scopes.project is None:
            raise UsageError(
                "there is no project scope here (no .vance/ folder in this directory or above)",
                hint="create one with `mkdir .vance`, or use --scope user",
            )
        return scope

    def add(self, name: str, schema: Any, *, manual: str | None = None, scope: str | None = None) -> RegisteredSchema:
        """Store (or replace, with a minor version bump) an override in the scope's table."""
        from tinydb import Query

        from vance_cli.structure.db import open_db

        check_name(name)
        check_schema(schema, where=f"schema {name!r}")
        try:  # the database is UTF-8 JSON: a "\ud800" escape is valid JSON but no character
            json.dumps(schema, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidSchema(
                f"schema {name!r} holds a lone surrogate ({exc.object[exc.start]!r} escape), which is not a character",
                hint="replace the \\uD800-\\uDFFF escape with the character you meant (a pair of them, or the character itself)",
            ) from None
        scope = self._writable(scope)
        path = self._db_path(scope)
        assert path is not None
        with open_db(path.parent) as db:
            table = db.table(TABLE)
            old = table.get(Query().name == name)
            version = _bump(str(old.get("version"))) if old else "1.0"
            row = {"name": name, "scope": scope, "schema": schema, "manual": manual or None, "version": version}
            table.upsert(row, Query().name == name)
        return self._from_row(row, scope)

    def remove(self, name: str, *, scope: str | None = None) -> RegisteredSchema:
        """Delete an override (from ``scope``, or the first scope that has one)."""
        from tinydb import Query

        from vance_cli.structure.db import open_db

        check_name(name)
        scopes = [self._writable(scope)] if scope else [s for s, _ in self.scopes.search_path("schemas") if s != "bundled"]
        for sc in scopes:
            for row in self._overrides(sc):
                if row.get("name") == name:
                    removed = self._from_row(row, sc)
                    path = self._db_path(sc)
                    assert path is not None
                    with open_db(path.parent) as db:
                        db.table(TABLE).remove(Query().name == name)
                    return removed
        found = self.find(name)
        if found is not None and found.kind == "file":
            hint = (
                "bundled schemas cannot be removed; shadow it with `vance schemas add` instead"
                if found.scope == "bundled"
                else f"it is a file: delete {found.source} (and its .manual.md) yourself"
            )
            raise SchemaNotFound(f"schema {name!r} has no override to remove ({found.schema_origin})", hint=hint)
        raise SchemaNotFound(f"no override named {name!r}", hint="run `vance schemas list` to see the names and where they live")
