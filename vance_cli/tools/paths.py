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
        return ToolResult.error(self.said())


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


HOOKS_PATH = "core.hooksPath"
INCLUDE_PATH = "include.path"
PROTECTED_DIRS_WHY = {
    **PROTECTED_DIRS,
    HOOKS_PATH: "git's hooks folder (core.hooksPath in .git/config: its files run at the next commit)",
    INCLUDE_PATH: "a file git reads as part of .git/config ([include] or [includeIf] path), where "
    "hooks and commands git runs are set",
}
MAX_INCLUDE_DEPTH = 10  # as git's own limit on nested includes


def git_config_value(raw: str) -> str:
    """A value as git reads it from a config line's right-hand side: ``;`` or ``#`` outside double
    quotes starts a comment, quotes are dropped, ``\\"`` ``\\\\`` ``\\t`` ``\\n`` are escapes, and
    whitespace around it is trimmed (``hooksPath = tools/hooks ; the team's`` is ``tools/hooks``)."""
    out: list[str] = []
    quoted = False
    pending = ""  # unquoted whitespace: kept only when more value follows
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            out.append(pending + {"t": "\t", "n": "\n", "b": "\b"}.get(nxt, nxt))
            pending = ""
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in ";#":
            break
        elif not quoted and ch.isspace():
            pending += ch
        else:
            out.append(pending + ch)
            pending = ""
        i += 1
    return "".join(out).strip()


def _git_config_items(config: Path, depth: int = 0, seen: set[Path] | None = None) -> list[tuple[str, str, str, Path]]:
    """(section, key, value, file) of every ``key = value`` in a git config file and the files it
    includes (``[include]`` and every ``[includeIf ...]``, whatever its condition, ``path`` relative
    to the including file's folder, as git reads them; nested up to ``MAX_INCLUDE_DEPTH``).
    Section and key casefolded. A file that is missing, unreadable or over 1 MB adds nothing."""
    import re

    seen = set() if seen is None else seen
    if config in seen or depth > MAX_INCLUDE_DEPTH:
        return []
    seen.add(config)
    try:
        if not config.is_file() or config.stat().st_size > 1_000_000:
            return []
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    items: list[tuple[str, str, str, Path]] = []
    section = ""
    for line in text.splitlines():
        line = line.strip()
        head = re.match(r"\[\s*([A-Za-z0-9.-]+)", line)
        if head:
            section = head.group(1).casefold()
            line = line[line.find("]") + 1 :].strip()
        key = re.match(r"([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$", line)
        if not key:
            continue
        name, value = key.group(1).casefold(), git_config_value(key.group(2))
        items.append((section, name, value, config))
        if section in ("include", "includeif") and name == "path" and value:
            target = _config_path(config.parent, value)
            if target is not None:
                items += _git_config_items(target, depth + 1, seen)
    return items


def _config_path(base: Path, value: str) -> Path | None:
    try:
        return (base / Path(value).expanduser()).resolve()
    except (OSError, RuntimeError):
        return None


def git_hooks_paths(root: Path, config: Path | None = None) -> list[Path]:
    """The folders ``core.hooksPath`` in ``config`` (default: the workspace's ``.git/config``) or a
    file it includes names, resolved (relative values count from the work tree ``root``, as git
    reads them). Not read: the person's own ~/.gitconfig."""
    config = root / ".git" / "config" if config is None else config
    found: list[Path] = []
    for section, key, value, _ in _git_config_items(config):
        if section == "core" and key == "hookspath" and value:
            path = _config_path(root, value)
            if path is not None:
                found.append(path)
    return found


def git_include_paths(config: Path) -> list[Path]:
    """The files a git config includes (``[include]`` / ``[includeIf ...]`` ``path``, nested ones
    too), resolved: git reads them as part of the config, so they are control files as much."""
    found: list[Path] = []
    for section, key, value, source in _git_config_items(config):
        if section in ("include", "includeif") and key == "path" and value:
            path = _config_path(source.parent, value)
            if path is not None and path not in found:
                found.append(path)
    return found


def protected_dir(root: Path, target: Path) -> str | None:
    """The protected folder name (".vance", ".git", HOOKS_PATH) that ``target`` lies in, INCLUDE_PATH
    when it is a file the workspace's ``.git/config`` includes, or None.

    ``target`` is the resolved path, so a symlink into a protected folder is caught too. A
    ``core.hooksPath`` folder in the work tree is git's hooks as much as ``.git/hooks`` is, and an
    included file is git's config as much as ``.git/config`` is.
    """
    try:
        parts = target.relative_to(root).parts
    except ValueError:
        return None
    for part in parts:
        if part.casefold() in PROTECTED_DIRS:
            return part.casefold()
    if any(target == hooks or target.is_relative_to(hooks) for hooks in git_hooks_paths(root)):
        return HOOKS_PATH
    if target in git_include_paths(root / ".git" / "config"):
        return INCLUDE_PATH
    return None


# Where credentials usually live (relative to $HOME). Hidden from every tool: the exec sandbox
# makes them empty (tools/exec_run.py) and the file tools refuse them (``resolve_for_tool``),
# as they do $VANCE_HOME (the user's config.toml holds API keys).
HIDDEN_HOME_PATHS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".docker",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
)


def secret_paths(ctx: ToolContext) -> list[Path]:
    """$VANCE_HOME, the project scope's config.toml (it may hold ``[model] api_key`` as the user
    scope's does) and the credential paths under $HOME (resolved; they may not exist)."""
    project = ctx.settings.scopes.project if ctx.settings is not None else None
    return secret_paths_of(
        Path(ctx.settings.scopes.user) if ctx.settings is not None else None,
        Path(project) / "config.toml" if project is not None else None,
    )


def secret_paths_of(user: Path | None, project_config: Path | None = None) -> list[Path]:
    """``secret_paths`` outside a tool: ``user`` (the user scope, else $VANCE_HOME), a project's
    config.toml, and the credential paths under $HOME. `vance benjy batch` refuses a source folder
    or a criteria file among them, as the tools do."""
    paths: list[Path] = []
    if project_config is not None:
        paths.append(project_config)
    if user is not None:
        paths.append(user)
    elif os.environ.get("VANCE_HOME"):
        paths.append(Path(os.environ["VANCE_HOME"]).expanduser())
    home = os.environ.get("HOME")
    if home:
        paths += [Path(home) / rel for rel in HIDDEN_HOME_PATHS]
    out = []
    for path in paths:
        try:
            out.append(path.resolve())
        except (OSError, RuntimeError):
            out.append(Path(os.path.abspath(path)))
    return out


def refuse_secret_workspace(root: Path, secrets: list[Path]) -> None:
    """WorkspaceError when the workspace ``root`` (resolved) is itself a secret path ($VANCE_HOME,
    ~/.ssh, ...; ``secret_paths``): every tool would work in the person's credentials. The tools
    ask at every call (``tool_root``); a run, a batch and an editor's session ask before they start."""
    if root in secrets:
        raise WorkspaceError(
            f"the workspace {root} holds credentials ($VANCE_HOME with your API keys, ~/.ssh, ~/.aws "
            "and the like); no tool works in it",
            hint="start vance in (or pass --workspace) a folder of its own",
        )


def tool_root(ctx: ToolContext, secrets: list[Path] | None = None) -> Path:
    """The resolved workspace root of a tool call. A workspace that is itself a secret path
    ($VANCE_HOME, ~/.ssh, ...) is refused, however it was picked (a chat started there, a planted
    ``--target`` link)."""
    root = resolve_in_workspace(ctx.workspace, ".")
    refuse_secret_workspace(root, secret_paths(ctx) if secrets is None else secrets)
    return root


def resolve_for_tool(ctx: ToolContext, rel: str) -> tuple[Path, Path]:
    """(the root, the target) for a file tool: ``tool_root`` and ``resolve_in_workspace`` plus the
    deny-list of the exec sandbox (a secret path holding the workspace strictly inside it, e.g. a
    ``--target`` workspace in $VANCE_HOME/workspaces/, does not count: the confinement keeps the
    tool inside the workspace)."""
    secrets = secret_paths(ctx)
    root = tool_root(ctx, secrets)
    target = resolve_in_workspace(ctx.workspace, rel)
    if is_hidden(root, target, secrets):
        raise WorkspaceError(
            f"{display_path(root, target)!r} is hidden from the tools: it holds credentials "
            "($VANCE_HOME and .vance/config.toml with your API keys, ~/.ssh, ~/.aws and the like)",
            hint="work with other files; the person can share what is needed themselves",
        )
    return root, target


def is_hidden(root: Path, target: Path, secrets: list[Path]) -> bool:
    """The one gate of the deny-list: ``target`` (resolved) is, or lies in, one of ``secrets``
    (``secret_paths``). A secret path holding the workspace ``root`` strictly inside it does not
    count (a workspace that is a secret path is refused as a whole: ``tool_root``).
    file_read and file_write refuse such a path; file_list leaves it out of a listing."""
    for secret in secrets:
        if root != secret and root.is_relative_to(secret):
            continue
        if target == secret or target.is_relative_to(secret):
            return True
    return False


def secret_near(path: Path, secrets: list[Path], *, holding: bool = False) -> Path | None:
    """The secret path (``secret_paths``) that ``path`` (resolved) is or lies in; with ``holding``
    also one that lies in ``path`` (a folder whose copy would take it along)."""
    for secret in secrets:
        if path == secret or path.is_relative_to(secret) or (holding and secret.is_relative_to(path)):
            return secret
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
