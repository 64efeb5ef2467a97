"""Where Vance looks for things: the user scope, the project scope and the bundled files.

The user scope is ``$VANCE_HOME`` (default ``~/.vance``); the project scope is the nearest
``.vance/`` folder from the current directory upward. Bundled recipes and schemas live in the
repository's top-level ``recipes/`` and ``schemas/`` folders in a source checkout and inside the
package (``vance_cli/_bundled/<kind>``) in an installed wheel.

Scopes say where things are; whether the project's own files may be used is config/trust.py's
decision (``trust.project_trusted(scopes)``), so this module imports nothing of it.

This module is imported on every CLI start, so it only uses the standard library.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BUNDLED_KINDS = ("recipes", "schemas")
# Where pyproject.toml maps the top-level folders in the wheel (package-dir).
BUNDLED_PACKAGE = "vance_cli._bundled"


def _package_dir() -> Path:
    import vance_cli

    return Path(vance_cli.__file__).resolve().parent


def bundled_dir(kind: str) -> Path:
    """The shipped folder for ``kind`` ("recipes" | "schemas").

    A source checkout (``pyproject.toml`` next to the package) uses ``<repo>/<kind>`` so edits
    show at once; an installed wheel uses the package data copied to ``vance_cli/_bundled/<kind>``.
    The folder may not exist (a kind with nothing shipped); callers treat that as empty.
    """
    if kind not in BUNDLED_KINDS:
        raise ValueError(
            f"unknown bundled kind {kind!r} (known: {', '.join(BUNDLED_KINDS)})"
        )
    pkg = _package_dir()
    repo = pkg.parent
    if (repo / "pyproject.toml").is_file() and (repo / kind).is_dir():
        return repo / kind
    # Installed: the wheel is always unpacked on disk (no zip imports), so a plain path is fine
    # and avoids importing importlib.resources machinery on start-up.
    return pkg / "_bundled" / kind


def _user_dir(env: Mapping[str, str]) -> Path:
    home = env.get("VANCE_HOME")
    if home:
        return Path(home).expanduser().resolve()
    return (Path.home() / ".vance").resolve()


def find_project(cwd: Path, user: Path) -> Path | None:
    """The nearest ``.vance/`` folder at or above ``cwd`` (resolved) that is not the user scope ``user``.

    The path is the folder holding the ``.vance`` entry plus ``.vance``, never the target of a
    ``.vance`` that is a symlink: the project (and its trust, config/trust.py) is the folder the
    entry is in, so a clone's ``.vance -> ../myproject/.vance`` is not ``myproject``.
    """
    for folder in (cwd, *cwd.parents):
        candidate = folder / ".vance"
        # ~/.vance seen from a folder under $HOME is the user scope, not a project.
        if candidate.is_dir() and candidate.resolve() != user:
            return candidate
    return None


@dataclass(frozen=True)
class Scopes:
    user: Path  # $VANCE_HOME or ~/.vance
    # The nearest .vance/ folder from cwd upward (the .vance dir itself).
    project: Path | None
    cwd: Path

    @classmethod
    def discover(
        cls, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> Scopes:
        env = os.environ if env is None else env
        where = Path(cwd if cwd is not None else os.getcwd()).resolve()
        user = _user_dir(env)
        return cls(user=user, project=find_project(where, user), cwd=where)

    @property
    def state_dir(self) -> Path:
        """Where processes/ and data/ live: the project scope if there is one, else the user scope."""
        return self.project if self.project is not None else self.user

    def processes_dir(self) -> Path:
        return self.state_dir / "processes"

    def data_dir(self) -> Path:
        return self.state_dir / "data"

    def config_files(self) -> list[tuple[str, Path]]:
        """The config.toml files in cascade order (lowest first); they may not exist."""
        files = [("user", self.user / "config.toml")]
        if self.project is not None:
            files.append(("project", self.project / "config.toml"))
        return files

    def search_path(self, kind: str) -> list[tuple[str, Path]]:
        """Folders for ``kind`` in lookup order: project (if any), user, bundled.

        Where they are, not whether they count: recipes.search_path leaves out the recipes of an
        untrusted project (they choose the tools; see config/trust.py).
        """
        path: list[tuple[str, Path]] = []
        if self.project is not None:
            path.append(("project", self.project / kind))
        path.append(("user", self.user / kind))
        path.append(("bundled", bundled_dir(kind)))
        return path
