"""The path gate of the workspace tools: every path a tool takes goes through ``resolve_in_workspace``.

The confinement rules (no absolute paths outside, no "..", no symlink escapes) and the folders the
tools may read but never write (``PROTECTED_DIRS``) live here, in one place, for the file tools
(tools/files.py) and exec_run (tools/exec_run.py). ``guarded`` turns every failure of a tool body
into an error ToolResult for the model; nothing escapes ``run``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vance_cli.errors import VanceError
from vance_cli.tools.base import RunFn, ToolContext, ToolResult

PATH_HINT = "use a path relative to the workspace root, e.g. 'src/main.py'"


class WorkspaceError(VanceError):
    """A path or workspace problem a tool reports back to the model."""

    def as_result(self) -> ToolResult:
        text = self.message
        if self.hint:
            text += f" (fix: {self.hint})"
        return ToolResult.error(text)


class PathOutsideWorkspace(WorkspaceError):
    """The path would leave the workspace: absolute outside, "..", or a symlink pointing out."""


def resolve_in_workspace(workspace: Path, rel: str) -> Path:
    """The real path of `rel` inside `workspace`, or PathOutsideWorkspace.

    Symlinks are resolved (including intermediate folders and links whose target does not exist
    yet), and the result must still lie inside the resolved workspace. "" and "." are the root.
    """
    try:
        root = Path(workspace).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise WorkspaceError(
            f"the workspace folder {workspace} does not exist",
            hint="create it or run from another folder",
        ) from exc
    if not root.is_dir():
        raise WorkspaceError(f"the workspace {workspace} is not a folder")

    text = "" if rel is None else str(rel)
    if "\x00" in text:
        raise PathOutsideWorkspace(f"path {text!r} contains a NUL byte", hint=PATH_HINT)
    if text.strip() in ("", "."):
        return root
    path = Path(text)
    # Rejected even when it would land inside: ".." is how escapes are spelled, and a path
    # without it is easier to reason about for both the model and the reader of the transcript.
    if ".." in path.parts:
        raise PathOutsideWorkspace(f"path {text!r} contains '..', which is not allowed", hint=PATH_HINT)
    if path.is_absolute():
        inner = None
        # The caller may spell the workspace unresolved (e.g. through a symlinked /tmp).
        for base in (root, Path(os.path.abspath(workspace))):
            if path.is_relative_to(base):
                inner = path.relative_to(base)
                break
        if inner is None:
            raise PathOutsideWorkspace(f"absolute path {text!r} is outside the workspace", hint=PATH_HINT)
        path = inner
    try:
        resolved = (root / path).resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loop
        raise PathOutsideWorkspace(f"path {text!r} cannot be resolved ({exc})", hint=PATH_HINT) from exc
    if not resolved.is_relative_to(root):
        raise PathOutsideWorkspace(
            f"path {text!r} leads outside the workspace through a symlink",
            hint=PATH_HINT,
        )
    return resolved


# Folders the model may read but never write through the file tools: Vance's own settings
# (a recipe there could give every later session exec_run) and git's (hooks and config run
# commands the next time the user runs git). At any depth, so nested repositories count too.
PROTECTED_DIRS = {
    ".vance": "Vance's own settings and recipes",
    ".git": "git's own files (hooks and config run commands)",
}


def protected_dir(root: Path, target: Path) -> str | None:
    """The protected folder name (".vance", ".git") that ``target`` lies in, or None.

    ``target`` is the resolved path, so a symlink into a protected folder is caught too.
    """
    try:
        parts = target.relative_to(root).parts
    except ValueError:
        return None
    for part in parts:
        if part.casefold() in PROTECTED_DIRS:
            return part.casefold()
    return None


def display_path(root: Path, path: Path) -> str:
    """The path as the model should see it: relative to the workspace, POSIX style."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
    return rel or "."


def guarded(name: str, fn: Callable[[dict[str, Any], ToolContext], Any]) -> RunFn:
    """Wrap a tool body so every failure is an error result, never an exception."""

    @functools.wraps(fn)
    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return await fn(args, ctx)
        except WorkspaceError as exc:
            return exc.as_result()
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            return ToolResult.error(f"{name} failed: {exc.strerror or exc}{where}")
        except Exception as exc:  # noqa: BLE001 - a bug here must not kill the turn
            return ToolResult.error(f"{name} failed: {type(exc).__name__}: {exc}")

    return run
