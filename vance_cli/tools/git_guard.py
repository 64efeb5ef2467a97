"""Git's control files in a workspace, before and after a command: what a command planted is undone.

A repository's config (``core.fsmonitor``, ``core.hooksPath``, aliases) and the files it includes
(``[include]`` / ``[includeIf]`` ``path``), its ``commondir`` (which points git at another config),
a ``.git`` file (``gitdir: ...``) and its hooks run commands in the person's next git command there. So does a folder git takes for a repository without any ``.git``
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

Bounded: the snapshot lists at most ``WALK_LIMIT`` folder entries and records the state of each
folder it listed. ``restore`` looks at each of those folders (one lstat) and lists only the ones
the command changed, and in full every folder it made: a planted repository is found however many
entries the command made elsewhere, up to ``CHANGED_LIMIT`` listed. Neither follows a symlink or
descends into a ``.git`` or a repository folder that was there before; what either limit left
unlisted is named in the note, and nothing is moved or written through a link out of the workspace.
"""

from __future__ import annotations

import os
import stat
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from vance_cli.store.atomic import atomic_write_bytes
from vance_cli.tools.paths import git_hooks_paths, git_include_paths

# The snapshot lists at most this many folder entries; the check after a command lists at most
# CHANGED_LIMIT, and only in the folders the command changed or made (making that many entries takes
# the command far longer than listing them takes us). Past either the tool result says what was not
# checked.
WALK_LIMIT = 100_000
CHANGED_LIMIT = 1_000_000
# A folder whose times are this close to the snapshot is listed again after the command whatever
# they say: a file system's clock ticks coarsely, so a change in the same tick leaves them alike.
RACY_NS = 2_000_000_000
ASIDE = ".made-by-a-command"
CONTROL_FILES = ("config", "commondir", "config.worktree", "gitdir")
MAX_CONTROL_BYTES = 1_000_000
# The names git runs from a hooks folder (githooks(5)); other files there are never run.
HOOK_NAMES = frozenset(
    ["applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change"]
)

Ident = tuple[int, int, int] | None  # (device, inode, file type) of an lstat, None when absent
# (device, inode, ctime, mtime, size, links) of a folder: any entry added, removed or renamed in it
# changes its ctime, which no command can set back (utimes sets ctime to now).
DirState = tuple[int, int, int, int, int, int]


@dataclass
class GitSnapshot:
    gits: dict[Path, Ident] = field(default_factory=dict)  # every `.git` entry and repository folder
    files: dict[Path, bytes | None] = field(default_factory=dict)  # control files (and .git files)
    hooks: dict[Path, dict[str, Ident]] = field(default_factory=dict)  # hooks folder -> hook files
    hook_dirs: dict[Path, Ident] = field(default_factory=dict)  # hooks folder -> itself (a link?)
    dirs: dict[Path, DirState] = field(default_factory=dict)  # every folder the walk listed
    unlisted: set[Path] = field(default_factory=set)  # folders the walk was cut before listing in full
    started: int = 0  # time.time_ns() when the walk began


def _ident(path: Path) -> Ident:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode))


def _dir_state(path: Path) -> DirState | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_nlink)


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


def _still_a_repository(folder: Path) -> bool:
    names = {n for n in ("HEAD", "objects", "refs", "commondir") if os.path.lexists(folder / n)}
    return is_repository(names)


@dataclass
class _Listing:
    gits: list[Path]  # `.git` entries in the folder
    subdirs: list[Path]  # its folders (not links to folders)
    repository: bool  # the folder itself is a repository to git (``is_repository``)
    complete: bool  # False: the walk's limit was reached inside it


class _Walker:
    """Lists folders, at most ``limit`` entries in all."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def list(self, folder: Path) -> _Listing | None:
        """None when the folder cannot be listed (gone, not a folder, no permission: git as the
        same user cannot read it either)."""
        try:
            entries = os.scandir(folder)
        except OSError:
            return None
        names: set[str] = set()
        gits: list[Path] = []
        subdirs: list[Path] = []
        complete = True
        with entries:
            for entry in entries:
                if self.left <= 0:
                    complete = False
                    break
                self.left -= 1
                names.add(entry.name)
                if entry.name == ".git":
                    gits.append(Path(entry.path))
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append(Path(entry.path))
                except OSError:
                    continue
        return _Listing(gits, subdirs, is_repository(names), complete)


def _walk(root: Path, snap: GitSnapshot) -> list[Path]:
    """The snapshot's walk: every ``.git`` entry and repository folder (neither descended into),
    each folder listed into ``snap.dirs`` and, past ``WALK_LIMIT``, those not listed in full into
    ``snap.unlisted``."""
    found: list[Path] = []
    walker = _Walker(WALK_LIMIT)
    stack = [root]
    while stack:
        folder = stack.pop()
        if walker.left <= 0:
            snap.unlisted.update([folder, *stack])
            break
        state = _dir_state(folder)  # before listing: a change made meanwhile shows as a change
        listing = walker.list(folder)
        if state is None or listing is None:
            continue
        found += listing.gits
        if listing.repository:
            found.append(folder)
        snap.dirs[folder] = state
        if not listing.complete:
            snap.unlisted.update([folder, *listing.subdirs, *stack])
            break
        if not listing.repository:
            stack += listing.subdirs
    return found


def _now(root: Path, before: GitSnapshot) -> tuple[dict[Path, Ident], list[Path]]:
    """Every ``.git`` entry and repository folder there is after the command where the snapshot
    looked, and the folders not listed (``CHANGED_LIMIT``).

    Listed are only the folders the command changed (their state differs from the snapshot's, or
    was too close to it to tell) and, in full, every folder it made or replaced: a new ``.git`` or
    repository needs a new entry in some folder. The others are only looked at (one lstat each),
    parents first, so a folder replaced by a link is never looked through.
    """
    alive: set[Path] = set()
    changed: list[Path] = []
    racy = before.started - RACY_NS
    for folder in sorted(before.dirs, key=lambda p: len(p.parts)):
        if folder != root and folder.parent not in alive:
            continue
        old = before.dirs[folder]
        new = _dir_state(folder)
        if new is None or new[:2] != old[:2]:
            continue  # gone or replaced: its parent changed and lists what is there now
        alive.add(folder)
        if (new != old or old[2] >= racy) and folder not in before.unlisted:
            changed.append(folder)
    now: dict[Path, Ident] = {}
    for entry in before.gits:
        if (entry.parent in alive or (entry == root and root in alive)) and os.path.lexists(entry):
            if entry.name == ".git" or _still_a_repository(entry):
                now[entry] = _ident(entry)
    queue: deque[tuple[Path, bool]] = deque((folder, False) for folder in changed)
    if root not in alive:
        queue.append((root, True))
    walker = _Walker(CHANGED_LIMIT)
    unchecked: list[Path] = []
    while queue:
        folder, new = queue.popleft()
        listing = walker.list(folder) if walker.left > 0 else None
        if listing is not None:
            for entry in listing.gits:
                now[entry] = _ident(entry)
            if listing.repository:
                now[folder] = _ident(folder)
        if walker.left <= 0 and (listing is None or not listing.complete):
            unchecked += [folder, *(f for f, _ in queue)]
            break
        if listing is None or (listing.repository and not new and folder in before.gits):
            continue  # a repository that was there is not descended into, as a .git is not
        for sub in listing.subdirs:
            if new or not (sub in alive or sub in before.unlisted):
                queue.append((sub, True))
    return now, unchecked


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
    behind it, and the state of every folder listed (what ``restore`` compares against)."""
    snap = GitSnapshot(started=time.time_ns())
    for entry in _walk(root, snap):
        snap.gits[entry] = _ident(entry)
        if entry.is_file() and not entry.is_symlink():
            snap.files[entry] = _read(entry)
        for gitdir in _git_dirs(root, entry):
            for name in CONTROL_FILES:
                snap.files[gitdir / name] = _read(gitdir / name)
            for config in (gitdir / "config", gitdir / "config.worktree"):
                for included in git_include_paths(config):  # git's config as much as the file itself
                    if included.is_relative_to(root):
                        snap.files.setdefault(included, _read(included))
            folders = [gitdir / "hooks"]
            if gitdir == entry:  # a relative hooksPath counts from the work tree (a bare one: itself)
                folders += git_hooks_paths(entry.parent if entry.name == ".git" else entry, gitdir / "config")
            for folder in folders:
                if folder.is_relative_to(root) and folder not in snap.hooks:
                    snap.hooks[folder] = _hooks_in(folder)
                    snap.hook_dirs[folder] = _ident(folder)
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


def _in_place(root: Path, path: Path) -> bool:
    """``path``'s folder really lies in the workspace (no link on the way leads out of it): the
    check never moves or writes anything outside."""
    try:
        return Path(os.path.realpath(path.parent)).is_relative_to(root)
    except (OSError, ValueError):
        return False


def _move(path: Path, stem: str, root: Path) -> str:
    if not _in_place(root, path):
        return f"{path.relative_to(root)} was left alone (a link on its way leads out of the workspace)"
    aside = _aside(path, stem)
    try:
        os.rename(path, aside)
    except OSError as exc:
        return f"moving {path.relative_to(root)} aside failed ({exc.strerror})"
    return f"{path.relative_to(root)} was moved to {aside.relative_to(root)}"


def _write_back(root: Path, path: Path, original: bytes) -> str:
    if not _in_place(root, path):
        return f"{path.relative_to(root)} was not written back (a link on its way leads out of the workspace)"
    atomic_write_bytes(path, original)
    return f"{path.relative_to(root)} was written back as it was"


def restore(root: Path, before: GitSnapshot) -> str | None:
    """Undo what the command planted (see the module doc); the note for the tool result, or None."""
    after, unchecked = _now(root, before)
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
        if original is not None and original[:1] != b"\0" and not os.path.lexists(entry):
            done.append(_write_back(root, entry, original) + " (a gitdir file)")

    def under_moved(path: Path) -> bool:
        return any(path == m or path.is_relative_to(m) for m in moved)

    for path, original in before.files.items():
        if under_moved(path) or path in before.gits or not _in_place(root, path):
            continue
        now = _read(path)
        if now == original:
            continue
        if now is not None:
            done.append(_move(path, path.name + ASIDE, root))
        if original is not None and original[:1] != b"\0" and not os.path.lexists(path):
            done.append(_write_back(root, path, original))
    for folder, hooks in before.hooks.items():
        if under_moved(folder) or not _in_place(root, folder):
            continue
        if os.path.islink(folder) and _ident(folder) != before.hook_dirs.get(folder):
            done.append(_move(folder, folder.name + ASIDE, root))  # swapped for a link to other hooks
            continue
        for name, ident in _hooks_in(folder).items():
            if hooks.get(name) != ident:
                done.append(_move(folder / name, name + ASIDE, root))
    notes = []
    if done:
        notes.append(
            "[the command changed git's control files (config, hooks, .git, a repository), which run commands in the "
            "person's next git command here: " + "; ".join(done) + ". Tell the user; they can check and "
            "put them back]"
        )
    if unchecked or before.unlisted:
        notes.append(_not_checked(root, before, unchecked))
    return "\n".join(notes) or None


def _not_checked(root: Path, before: GitSnapshot, unchecked: list[Path]) -> str:
    why = []
    if before.unlisted:
        why.append(f"the workspace has more than {WALK_LIMIT:,} entries")
    if unchecked:
        why.append(f"the command made or changed more than {CHANGED_LIMIT:,} entries")
    folders = sorted({p.relative_to(root).as_posix() for p in [*unchecked, *before.unlisted]})
    shown = ", ".join("the workspace folder" if f == "." else f for f in folders[:3])
    shown += f" and {len(folders) - 3:,} more" if len(folders) > 3 else ""
    return (
        f"[git's control files were not fully checked after this command ({' and '.join(why)}); not "
        f"looked at in full: {shown}. A repository planted there could run commands at the person's "
        "next git command in it: tell the user to check before running git there]"
    )
