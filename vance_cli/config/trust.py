"""Folder trust: a project's `.vance/` may send keys elsewhere or widen tools only once the user trusts it.

A cloned repository brings its own `.vance/`. Its harmless settings (timeouts, schemas) always
apply; the ones that can send the user's keys and conversation to another server
or give the model more power apply only in a folder the user trusted:

- ``[model] default``, ``api_base``, ``api_key``, ``transport``; every ``[models."..."]`` table and
  every alias (``[aliases]``): they choose the model, and ``scripted:FILE`` is a brain the folder ships;
- ``[structure] model`` and ``schemaBuilderModel`` (the schemas' models);
- ``[exec]`` (the command sandbox, its network and environment);
- ``[permissions]`` (approval rules: which tool calls run without asking);
- ``[mcp.servers]`` (MCP servers: commands the folder would start; shown, never started);
- the project recipes (``.vance/recipes/``), and with them the tools they add.

``vance trust [PATH]`` records the project folder (the one holding ``.vance/``) and a digest of its
``.vance/`` content in ``$VANCE_HOME/trusted.json``. Any later change to that content makes the
folder untrusted again until the user trusts it again, as direnv's ``allow`` does. Vance's own
state inside ``.vance/`` (``processes/`` and ``data/``) is not part of the digest: it changes at
every turn and is not configuration.

The API a console uses to ask once::

    report = trust.check(scopes)         # what is ignored here, and why
    if report.ignored:
        ...show report.notice() / report.ignored, ask...
        trust.trust_folder(report.root, scopes.user)
        scopes = Scopes.discover()       # the trust state is read once per Scopes
        settings = Settings.load(scopes)

Standard library only: this runs on every CLI start.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.errors import ConfigError

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes

TRUST_FILE = "trusted.json"
# Vance's own state in a project scope: written at every turn, not configuration.
STATE_DIRS = frozenset({"processes", "data", "workspaces"})  # workspaces: `--target NAME`
RECIPE_SUFFIXES = (".yaml", ".yml")
LOADED_DIRS = frozenset({"recipes", "schemas"})  # what the loaders read in .vance/, besides config.toml

# Project-scope settings that apply only in a trusted folder: table -> keys (None: the whole table).
RESTRICTED: dict[str, tuple[str, ...] | None] = {
    # model.default and [aliases] choose the model, and a model string may name a brain
    # (``scripted:FILE``) that the folder ships: that drives the chat as much as api_base does.
    "model": ("default", "api_base", "api_key", "transport"),
    "models": None,
    "aliases": None,
    "structure": ("model", "schemaBuilderModel"),
    "exec": None,
    "permissions": None,  # approval rules: which tool calls run without asking
    "mcp": None,  # MCP servers: commands to start (config/mcp_servers.py shows them, never starts them)
}

# States of a project folder.
NO_PROJECT = "none"  # no .vance/ here: nothing to trust
TRUSTED = "trusted"
UNTRUSTED = "untrusted"  # never trusted (or revoked)
CHANGED = "changed"  # trusted once, but its .vance/ changed since


def _key(parts: Iterable[str]) -> str:
    return ".".join(f'"{p}"' if "." in p or "/" in p else p for p in parts)


def split_restricted(layer: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``layer`` without the restricted keys, and the dotted names of the keys it had."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for table, value in layer.items():
        keys = RESTRICTED.get(table, ())
        if table not in RESTRICTED or not isinstance(value, dict):
            kept[table] = value
        elif keys is None:
            dropped += [_key([table, k]) for k in value] or [table]
        else:
            kept[table] = {k: v for k, v in value.items() if k not in keys}
            dropped += [_key([table, k]) for k in value if k in keys]
    return kept, dropped


# --------------------------------------------------------------------------- digest


def project_digest(vance_dir: Path) -> str:
    """A SHA-256 over every file under ``vance_dir`` (names and bytes), Vance's state excluded.

    A symlink counts by its target path. It is followed only where the loaders read
    (``config.toml``, ``recipes/``, ``schemas/``) and only when it points inside the project folder
    (the one holding ``vance_dir``) but not at that folder itself; any other link (``.vance/z ->
    /usr``, ``.vance/z -> ..``) is one entry, never resolved: what lies outside the folder is not
    what the person looked at when they trusted it, and the work tree is not configuration (see
    ``links_out``). An unreadable entry counts by its error, so the digest is stable either way.
    """
    return _walk_project(vance_dir)[0]


def links_out(vance_dir: Path) -> list[str]:
    """The paths in ``vance_dir`` the loaders read (``config.toml``, ``recipes/``, ``schemas/``)
    that are symlinks leading out of the project or to the project folder itself: a folder holding
    one is never trusted."""
    return _walk_project(vance_dir)[1]


def _walk_project(vance_dir: Path) -> tuple[str, list[str]]:
    import hashlib

    h = hashlib.sha256()
    seen: set[str] = set()
    escapes: list[str] = []
    project = os.path.realpath(Path(vance_dir).parent)

    vance_real = os.path.realpath(vance_dir)

    def follow(path: Path, here: str) -> bool:
        """Whether to walk through the link ``path``: only where the loaders read (config.toml,
        recipes/, schemas/), into the project and not to the project folder itself (that would
        hash the whole work tree). A loaded link that leads elsewhere is an escape: what it reaches
        would be read without being in the digest. Any other link counts by its target path."""
        if here != "config.toml" and here.split("/", 1)[0] not in LOADED_DIRS:
            return False
        real = os.path.realpath(path)
        inside = real.startswith(project.rstrip(os.sep) + os.sep)
        if inside and not vance_real.startswith(real.rstrip(os.sep) + os.sep):
            return True
        escapes.append(here)
        return False

    top = Path(vance_dir)
    if top.is_symlink():  # `.vance` itself: a link out of the folder holding it is never read
        try:
            h.update(b"L .\0" + os.fsencode(os.readlink(top)) + b"\0")
        except OSError:
            pass
        real = os.path.realpath(top)
        if not (real.startswith(project.rstrip(os.sep) + os.sep)):
            escapes.append("")
            return "sha256:" + h.hexdigest(), escapes

    def walk(folder: Path, rel: str, depth: int) -> None:
        real = os.path.realpath(folder)
        if real in seen or depth > 16:  # a symlink loop
            h.update(f"loop {rel}\0".encode())
            return
        seen.add(real)
        try:
            names = sorted(os.listdir(folder))
        except OSError as exc:
            h.update(f"E {rel} {exc.errno}\0".encode())
            return
        for name in names:
            if depth == 0 and name in STATE_DIRS:
                continue
            path = folder / name
            here = f"{rel}{name}"
            enc = here.encode("utf-8", "surrogateescape")
            if path.is_symlink():
                try:
                    h.update(b"L " + enc + b"\0" + os.fsencode(os.readlink(path)) + b"\0")
                except OSError:
                    pass
                if not follow(path, here):
                    continue
            if path.is_dir():
                h.update(b"D " + enc + b"\0")
                walk(path, f"{here}/", depth + 1)
                continue
            if not path.is_file():  # a FIFO or device: opening it could block; its kind counts
                h.update(b"S " + enc + b"\0")
                continue
            try:
                with open(path, "rb") as f:
                    file_hash = hashlib.file_digest(f, "sha256").hexdigest()
            except OSError as exc:
                h.update(b"E " + enc + f" {exc.errno}\0".encode())
                continue
            h.update(b"F " + enc + b"\0" + file_hash.encode() + b"\0")

    walk(Path(vance_dir), "", 0)
    return "sha256:" + h.hexdigest(), escapes


# --------------------------------------------------------------------------- the record


@dataclass(frozen=True)
class TrustRecord:
    folder: Path  # the project folder, the one holding .vance/
    digest: str
    trusted_at: float


def _trust_file(user: Path) -> Path:
    return Path(user) / TRUST_FILE


def load_records(user: Path) -> dict[str, TrustRecord]:
    """The trusted folders by path; a missing file is none, a broken one is an error naming it."""
    path = _trust_file(user)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read the trust list {path}: {exc}",
            hint=f"check its permissions, or delete {path} and trust your folders again",
        ) from exc
    import json

    try:
        data = json.loads(text)
        folders = data["folders"]
        return {
            key: TrustRecord(Path(key), str(value["digest"]), float(value.get("trusted_at", 0)))
            for key, value in folders.items()
        }
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ConfigError(
            f"the trust list {path} is damaged ({type(exc).__name__}: {exc})",
            hint=f"delete {path} and trust your folders again with `vance trust PATH`",
        ) from exc


def _save_records(user: Path, records: dict[str, TrustRecord]) -> None:
    from vance_cli.store.atomic import atomic_write_json

    data = {
        "version": 1,
        "folders": {
            key: {"digest": rec.digest, "trusted_at": rec.trusted_at}
            for key, rec in sorted(records.items())
        },
    }
    path = _trust_file(user)
    try:
        atomic_write_json(path, data)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the trust list {path}: {exc.strerror or exc}",
            hint=f"check that {path.parent} exists and is writable (VANCE_HOME)",
        ) from exc


def project_root_for(path: Path | str, user: Path) -> Path | None:
    """The folder holding the nearest ``.vance/`` at or above ``path`` (None: there is none).

    ``path`` may name the ``.vance`` folder itself. The user scope is never a project.
    """
    from vance_cli.config.scopes import find_project

    where = Path(path).expanduser()
    if where.name == ".vance" and where.is_dir():
        where = where.parent  # the folder holding the entry, even when `.vance` is a link
    where = where.resolve()
    found = find_project(where, Path(user).resolve())
    return None if found is None else found.parent


def trust_folder(folder: Path | str, user: Path) -> TrustRecord:
    """Trust the project at ``folder`` (its nearest ``.vance/``) as its content is now."""
    root = project_root_for(folder, user)
    if root is None:
        raise ConfigError(
            f"there is no .vance/ folder in {folder} or above it: nothing to trust",
            hint="run `vance trust` inside the project folder (the one with .vance/)",
        )
    import time

    digest, escapes = _walk_project(root / ".vance")
    if escapes:
        link = root / ".vance" / escapes[0]
        try:
            target = os.readlink(link)
        except OSError:
            target = "?"
        raise ConfigError(
            f"cannot trust {root}: {link} is a symlink out of the project or to its folder itself (to {target}); "
            "what it reaches is not in .vance/ and can change without .vance/ changing",
            hint="copy what it points to into .vance/ (or into your own $VANCE_HOME), then run `vance trust` again",
        )
    records = load_records(user)
    record = TrustRecord(root, digest, time.time())
    records[str(root)] = record
    _save_records(user, records)
    return record


def revoke(folder: Path | str, user: Path) -> TrustRecord | None:
    """Forget a trusted folder; returns its record, or None when it was not trusted.

    ``folder`` is looked up as given first (so a folder that no longer exists can be revoked),
    then as the project around it.
    """
    records = load_records(user)
    given = Path(folder).expanduser()
    candidates = [str(Path(os.path.abspath(given)))]
    with_resolved = str(given.resolve())
    candidates.append(with_resolved)
    if given.name == ".vance":
        candidates += [str(Path(c).parent) for c in list(candidates)]
    root = project_root_for(given, user) if given.exists() else None
    if root is not None:
        candidates.append(str(root))
    for key in candidates:
        if key in records:
            record = records.pop(key)
            _save_records(user, records)
            return record
    return None


def list_records(user: Path) -> list[tuple[TrustRecord, str]]:
    """Every trusted folder with its state now: trusted, changed, or missing (no .vance/ left)."""
    out = []
    for _, record in sorted(load_records(user).items()):
        vance_dir = record.folder / ".vance"
        state = _state_of(vance_dir, record) if vance_dir.is_dir() else "missing"
        out.append((record, state))
    return out


def folder_state(project: Path | None, user: Path) -> str:
    """NO_PROJECT, TRUSTED, UNTRUSTED or CHANGED for the project scope ``project`` (a .vance dir)."""
    if project is None:
        return NO_PROJECT
    record = load_records(user).get(str(Path(project).parent))
    if record is None:
        return UNTRUSTED
    return _state_of(Path(project), record)


def _state_of(vance_dir: Path, record: TrustRecord) -> str:
    digest, escapes = _walk_project(vance_dir)
    if escapes:  # never trusted (trust_folder refuses it), whatever an old record says
        return UNTRUSTED
    return TRUSTED if digest == record.digest else CHANGED


def state(scopes: Scopes) -> str:
    """The trust state of the project of ``scopes`` (NO_PROJECT, TRUSTED, UNTRUSTED or CHANGED).

    Read once per Scopes, on first use, and kept on it: one command decides on one state even if
    .vance/ changes while it runs, and trusting a folder takes effect for a new Scopes.
    """
    cached = scopes.__dict__.get(_STATE_ATTR)
    if cached is None:
        cached = folder_state(scopes.project, scopes.user)
        object.__setattr__(scopes, _STATE_ATTR, cached)  # Scopes is frozen; this is a cache, not a field
    return cached


_STATE_ATTR = "_trust_state"


def project_trusted(scopes: Scopes) -> bool:
    """True without a project scope, or when the user trusted the project as it is now."""
    return scopes.project is None or state(scopes) == TRUSTED


# --------------------------------------------------------------------------- what is ignored


def project_recipe_files(project: Path) -> list[str]:
    folder = project / "recipes"
    if not folder.is_dir():
        return []
    return sorted(
        f"recipes/{p.name}"
        for p in folder.iterdir()
        if p.name.endswith(RECIPE_SUFFIXES) and not p.name.startswith(".")
    )


def restricted_settings(project: Path) -> list[str]:
    """The restricted keys the project's config.toml sets (unreadable or broken: none here;
    loading the settings reports that)."""
    path = project / "config.toml"
    if not path.is_file():
        return []
    import tomllib

    try:
        layer = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # TOMLDecodeError is a ValueError
        return []
    return split_restricted(layer)[1]


@dataclass
class TrustReport:
    """The trust state of the current project and what it costs."""

    root: Path | None  # the project folder (holding .vance/), None without a project
    state: str  # NO_PROJECT | TRUSTED | UNTRUSTED | CHANGED
    ignored: list[str] = field(default_factory=list)  # empty when trusted or nothing restricted

    @property
    def command(self) -> str:
        """The command that trusts this folder."""
        import shlex

        return f"vance trust {shlex.quote(str(self.root))}" if self.root else "vance trust"

    def notice(self) -> str | None:
        """One line for stderr, or None when nothing is ignored."""
        if not self.ignored:
            return None
        what = ", ".join(self.ignored)
        where = f"{self.root}/.vance"
        why = f"{where} changed since you trusted it" if self.state == CHANGED else f"{where} is not trusted"
        return f"vance: {why}; ignoring {what} (apply them with: {self.command})"


def check(scopes: Scopes) -> TrustReport:
    """What the untrusted project settings here are, if any; cheap when nothing is restricted."""
    project = scopes.project
    if project is None:
        return TrustReport(None, NO_PROJECT)
    now = state(scopes)
    if now == TRUSTED:
        return TrustReport(project.parent, now)
    items = restricted_settings(project) + project_recipe_files(project)
    return TrustReport(project.parent, now, items)
