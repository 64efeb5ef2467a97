"""Where Vance looks for things: the user scope, the project scope and the bundled files.

The user scope is ``$VANCE_HOME`` (default ``~/.vance``); the project scope is the nearest
``.vance/`` folder from the current directory upward. Bundled recipes and schemas live in the
repository's top-level ``recipes/`` and ``schemas/`` folders in a source checkout and inside the
package (``vance_cli/_bundled/<kind>``) in an installed wheel.

This module is imported on every CLI start, so it only uses the standard library.
"""

from __future__ import annotations

import functools
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


def _find_project(cwd: Path, user: Path) -> Path | None:
    for folder in (cwd, *cwd.parents):
        candidate = folder / ".vance"
        # ~/.vance seen from a folder under $HOME is the user scope, not a project.
        if candidate.is_dir() and candidate.resolve() != user:
            return candidate.resolve()
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
        return cls(user=user, project=_find_project(where, user), cwd=where)

    @property
    def state_dir(self) -> Path:
        """Where processes/ and data/ live: the project scope if there is one, else the user scope."""
        return self.project if self.project is not None else self.user

    def processes_dir(self) -> Path:
        return self.state_dir / "processes"

    def data_dir(self) -> Path:
        return self.state_dir / "data"

    @functools.cached_property
    def trust_state(self) -> str:
        """The project's trust state (vance_cli.config.trust: none|trusted|untrusted|changed).

        Read once per Scopes, on first use: trusting a folder takes effect for a new Scopes.
        """
        from vance_cli.config.trust import folder_state

        return folder_state(self.project, self.user)

    @property
    def project_trusted(self) -> bool:
        """True without a project scope, or when the user trusted the project as it is now."""
        return self.project is None or self.trust_state == "trusted"

    def config_files(self) -> list[tuple[str, Path]]:
        """The config.toml files in cascade order (lowest first); they may not exist."""
        files = [("user", self.user / "config.toml")]
        if self.project is not None:
            files.append(("project", self.project / "config.toml"))
        return files

    def search_path(self, kind: str) -> list[tuple[str, Path]]:
        """Folders for ``kind`` in lookup order: project (if any), user, bundled.

        Project recipes count only in a trusted folder (they choose the tools; see config/trust.py).
        """
        path: list[tuple[str, Path]] = []
        if self.project is not None and (kind != "recipes" or self.project_trusted):
            path.append(("project", self.project / kind))
        path.append(("user", self.user / kind))
        path.append(("bundled", bundled_dir(kind)))
        return path
