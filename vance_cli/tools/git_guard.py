"""Git's control files in a workspace, before and after a command: what a command planted is undone.

A repository's config (``core.fsmonitor``, ``core.hooksPath``, aliases), its ``commondir`` (which
points git at another config), a ``.git`` file (``gitdir: ...``) and its hooks run commands in the
person's next git command there. So does a folder git takes for a repository without any ``.git``
(a bare one: ``HEAD``, ``objects/``, ``refs/``; ``is_repository``) when git runs in it. The
sandbox makes the workspace's own ``.git/config`` and hooks read-only, but it cannot cover what
does not exist yet (a ``commondir``, a hooksPath folder not made yet, a repository the command
makes in a sub-folder) nor run at all when there is no sandbox. So exec_run takes a ``snapshot``
before every command and calls ``restore`` after it (in a ``finally``): every ``.git`` that is new
or replaced is moved aside (a ``.git`` file that was replaced is written back), every new
repository folder loses its ``HEAD`` (moved aside: git no longer sees a repository there), every
control file that changed is moved aside and the original written back, and every hook file that
is new or changed is renamed so git does not run it. Each step is named in a note for the tool
result (the model tells the person).

Bounded: the walk looks at most ``WALK_LIMIT`` folder entries (a workspace bigger than that is
checked only as far as the walk got) and never follows a symlink or descends into a ``.git`` or a
repository folder that was there before.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from vance_cli.store.atomic import atomic_write_bytes
from vance_cli.tools.paths import git_hooks_paths

WALK_LIMIT = 100_000
ASIDE = ".made-by-a-command"
CONTROL_FILES = ("config", "commondir", "config.worktree", "gitdir")
MAX_CONTROL_BYTES = 1_000_000
# The names git runs from a hooks folder (githooks(5)); other files there are never run.
HOOK_NAMES = frozenset(
    ["applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change"]
)

Ident = tuple[int, int, int] | None  # (device, inode, file type) of an lstat, None when absent


@dataclass
class GitSnapshot:
    gits: dict[Path, Ident] = field(default_factory=dict)  # every `.git` entry and repository folder
    files: dict[Path, bytes | None] = field(default_factory=dict)  # control files (and .git files)
    hooks: dict[Path, dict[str, Ident]] = field(default_factory=dict)  # hooks folder -> hook files


def _ident(path: Path) -> Ident:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode))


def _hook_ident(path: Path) -> Ident:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _read(path: Path) -> bytes | None:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return b"\0not a regular file"
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError:
        return b"\0unreadable"
    with os.fdopen(fd, "rb") as f:
        return f.read(MAX_CONTROL_BYTES + 1)


def is_repository(names: set[str] | frozenset[str]) -> bool:
    """A folder holding these names is a repository to git, ``.git`` or not: git's own test
    (setup.c ``is_git_directory``) is a ``HEAD`` and ``objects/`` and ``refs/``, or a ``commondir``
    saying where those two are. git run in (or ``-C``) such a folder reads its ``config``."""
    return "HEAD" in names and (("objects" in names and "refs" in names) or "commondir" in names)


def _git_entries(root: Path, known: dict[Path, Ident] | None = None) -> list[Path]:
    """Every ``.git`` entry and every folder git takes for a repository (``is_repository``). Neither
    is descended into, except a repository folder that is not in ``known`` as it is now (one the
    command made: what it holds is new too)."""
    found: list[Path] = []
    stack = [root]
    seen = 0
    while stack and seen < WALK_LIMIT:
        folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        names: set[str] = set()
        subdirs: list[Path] = []
        with entries:
            for entry in entries:
                seen += 1
                if seen >= WALK_LIMIT:
                    break
                names.add(entry.name)
                if entry.name == ".git":
                    found.append(Path(entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    subdirs.append(Path(entry.path))
        if is_repository(names):
            found.append(folder)
            if known is None or (folder in known and known[folder] == _ident(folder)):
                continue
        stack += subdirs
    return found


def _git_dirs(root: Path, entry: Path) -> list[Path]:
    """The git folders behind one ``.git`` entry that lie in the workspace: the folder itself (or
    the one a ``gitdir:`` file names) and its worktrees' and submodules' folders."""
    start: Path | None = None
    if entry.is_dir() and not entry.is_symlink():
        start = entry
    elif entry.is_file() and not entry.is_symlink():
        text = (_read(entry) or b"").decode("utf-8", "replace").strip()
        if text.startswith("gitdir:"):
            try:
                start = (entry.parent / text[len("gitdir:"):].strip()).resolve()
            except (OSError, RuntimeError):
                start = None
    if start is None or not start.is_relative_to(root):
        return []
    out = [start]
    for sub in ("worktrees", "modules"):
        try:
            out += sorted(p for p in (start / sub).iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            pass
    return out


def snapshot(root: Path) -> GitSnapshot:
    """Every ``.git`` entry and repository folder in the workspace and the control files and hooks
    behind it."""
    snap = GitSnapshot()
    for entry in _git_entries(root):
        snap.gits[entry] = _ident(entry)
        if entry.is_file() and not entry.is_symlink():
            snap.files[entry] = _read(entry)
        for gitdir in _git_dirs(root, entry):
            for name in CONTROL_FILES:
                snap.files[gitdir / name] = _read(gitdir / name)
            folders = [gitdir / "hooks"]
            if gitdir == entry:  # a relative hooksPath counts from the work tree (a bare one: itself)
                folders += git_hooks_paths(entry.parent if entry.name == ".git" else entry, gitdir / "config")
            for folder in folders:
                if folder.is_relative_to(root) and folder not in snap.hooks:
                    snap.hooks[folder] = _hooks_in(folder)
    return snap


def _hooks_in(folder: Path) -> dict[str, Ident]:
    try:
        names = [n for n in os.listdir(folder) if n in HOOK_NAMES]
    except OSError:
        return {}
    return {name: _hook_ident(folder / name) for name in names}


def _aside(path: Path, stem: str) -> Path:
    for n in range(1, 100):
        aside = path.parent / (stem + ("" if n == 1 else f"-{n}"))
        if not os.path.lexists(aside):
            return aside
    return path.parent / f"{stem}-{os.getpid()}"


def _move(path: Path, stem: str, root: Path) -> str:
    aside = _aside(path, stem)
    try:
        os.rename(path, aside)
    except OSError as exc:
        return f"moving {path.relative_to(root)} aside failed ({exc.strerror})"
    return f"{path.relative_to(root)} was moved to {aside.relative_to(root)}"


def restore(root: Path, before: GitSnapshot) -> str | None:
    """Undo what the command planted (see the module doc); the note for the tool result, or None."""
    after = {entry: _ident(entry) for entry in _git_entries(root, before.gits)}
    done: list[str] = []
    moved: list[Path] = []
    for entry, ident in after.items():
        same = entry in before.gits and before.gits[entry] == ident
        if same and (entry not in before.files or _read(entry) == before.files[entry]):
            continue
        if entry.name != ".git":  # a folder git takes for a repository: without its HEAD it is none
            shown = "the workspace folder" if entry == root else entry.relative_to(root).as_posix()
            done.append(f"{shown} was made into a repository git would use: " + _move(entry / "HEAD", "HEAD" + ASIDE, root))
            if entry in before.gits and entry != root:
                moved.append(entry)
            continue
        done.append(_move(entry, ".git-made-by-a-command", root))
        moved.append(entry)
        original = before.files.get(entry)
        if original is not None and original[:1] != b"\0":
            atomic_write_bytes(entry, original)  # a `gitdir:` file the command replaced
            done.append(f"{entry.relative_to(root)} (a gitdir file) was written back")

    def under_moved(path: Path) -> bool:
        return any(path == m or path.is_relative_to(m) for m in moved)

    for path, original in before.files.items():
        if under_moved(path) or path in before.gits:
            continue
        now = _read(path)
        if now == original:
            continue
        if now is not None:
            done.append(_move(path, path.name + ASIDE, root))
        if original is not None and original[:1] != b"\0" and not os.path.lexists(path):
            atomic_write_bytes(path, original)
            done.append(f"{path.relative_to(root)} was written back as it was")
    for folder, hooks in before.hooks.items():
        if under_moved(folder):
            continue
        for name, ident in _hooks_in(folder).items():
            if hooks.get(name) != ident:
                done.append(_move(folder / name, name + ASIDE, root))
    if not done:
        return None
    return (
        "[the command changed git's control files (config, hooks, .git, a repository), which run commands in the "
        "person's next git command here: " + "; ".join(done) + ". Tell the user; they can check and "
        "put them back]"
    )
