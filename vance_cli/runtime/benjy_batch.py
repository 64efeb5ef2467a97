"""Many Benjy runs from a goals file (`vance benjy batch GOALS.jsonl`), N at a time here or as Ray tasks.

Each line of GOALS.jsonl is one run: ``{"id": "slug", "goal": "...", "check": "...",
"workspace": "src/", "recipe": "...", "criteria": "...", "allowExec": true, "model": "..."}``;
only ``goal`` is needed (``id`` defaults to the line number; the others to the command's flags;
a relative ``workspace``, ``criteria`` or recipe file is read from the goals file's folder).

Every run is an ordinary Benjy run (``BenjyService.start`` and ``.run``, as `vance benjy run`):
one process file, resumable, answered with `vance benjy answer ID`, shown by `ps`. What the batch
adds:

- **A workspace per run**, made in the batch folder (``$VANCE_HOME/batches/<goals>-<hash>/runs/<id>``, also in a project)
  from the run's source folder: a git worktree of the source's HEAD when the source is in a git
  repository (detached, no branch; the repository's own files are never touched, and git lists
  the worktree in ``git worktree list``), else a copy of the folder; no source: an empty folder.
- **The batch state** (``batch.json`` in the batch folder, written atomically, once): goal id ->
  the run's process id (and what the goal was). Every id is written before anything is made; a
  run's workspace and then its process file are made when its turn comes (``jobs`` at a time), so
  a kill at any point leaves a rerun that makes what is missing and never a second run for one
  goal. A rerun skips DONE runs and drives every other one from its file.
- **Approval once**: the runs are created with the approval the person gave for the whole batch
  (``approved_by``, recorded per run as `vance benjy run` does: its check and its workers' tools).
- **Engines**: ``local`` drives the runs in this process, ``jobs`` at a time (asyncio tasks, each
  run with its own Runtime and model client); ``ray`` drives each run as a Ray task
  (``ray_task``, on the same process files). A run that blocks on a question ends its own task;
  the others go on.

The summary of a run (status, attempts, tokens) is read from its process file after the run, by
the driver, whatever engine drove it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from vance_cli.config.recipes import looks_like_path
from vance_cli.config.scopes import Scopes
from vance_cli.crashpoints import crashpoint
from vance_cli.errors import ProcessLocked, StoreError, UsageError, VanceError
from vance_cli.runtime.benjy_service import DEFAULT_RECIPE, BenjyService, StartedRun, existing_path
from vance_cli.runtime.runner import ModelFactory, Runtime
from vance_cli.store.atomic import atomic_write_json
from vance_cli.store.process import Process, Status, new_process_id
from vance_cli.text import did_you_mean
from vance_cli.tools.paths import secret_near, secret_paths_of

DONE, BLOCKED, FAILED, STOPPED, BUSY = "DONE", "BLOCKED", "FAILED", "STOPPED", "BUSY"
GOAL_KEYS = ("id", "goal", "check", "workspace", "recipe", "criteria", "allowExec", "model")
_ALIASES = {"allow_exec": "allowExec"}
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
STATE_FILE = "batch.json"
STATE_VERSION = 1  # batch.json's; a newer one is refused (``_load_state``)
LINE_PATHS = "point it at an existing one (a line's relative paths are read from the goals file's folder)"
SHOWN_IDS = 8  # goal ids named per group in the approval
GIT_TIMEOUT = 120  # seconds for one git command (a worktree of a large repository takes a while)

Event = Callable[[dict[str, Any]], None]


def default_jobs() -> int:
    """Runs at a time on the local engine: the cores, at most 4 (each run is mostly waiting on a model)."""
    return max(1, min(4, os.cpu_count() or 1))


# --------------------------------------------------------------------------- the goals file


@dataclass(frozen=True)
class Defaults:
    """The command's flags: what a line that does not say otherwise gets."""

    check: str | None = None
    source: Path | None = None
    recipe: str = DEFAULT_RECIPE
    criteria: Path | None = None
    allow_exec: bool = False
    model: str | None = None


@dataclass(frozen=True)
class Goal:
    id: str
    goal: str
    line: int
    check: str | None
    source: Path | None  # the folder the run's workspace is made from; None: an empty folder
    recipe: str
    criteria: Path | None
    allow_exec: bool
    model: str | None
    # what the run will do, resolved from its recipe when the file is read (shown in the approval)
    choices: RunChoices | None = field(default=None, compare=False)
    # the git work tree the run's worktree is made from (``git_top``), None: a copy of ``source``
    worktree_of: Worktree | None = field(default=None, compare=False)

    def digest(self) -> str:
        """What the run was created from; a rerun refuses a goal that changed under the same id."""
        fields = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items() if k not in ("line", "id", "choices", "worktree_of")}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Worktree:
    """A source's git work tree, looked at once for the whole batch when the goals file is read."""

    top: Path  # the work tree's top: each run gets a worktree of its last commit
    commit: str  # that commit, short
    dirty: bool  # uncommitted changes or untracked files (not in the worktrees)

    def warning(self) -> str | None:
        if not self.dirty:
            return None
        return (f"{self.top} has uncommitted changes or untracked files; the runs' worktrees start at its last "
                f"commit ({self.commit}) without them (commit them first to include them)")


@dataclass(frozen=True)
class RunChoices:
    """Everything a goal's line chooses for its run, resolved: the batch's approval shows it all."""

    recipe: str  # its name and the file it is read from
    check: str | None  # the command that runs after every item (the goal's or its recipe's); None: no check
    check_from: str  # where it comes from: the line or --check, or the recipe
    criteria: tuple[str, ...]  # the files the run reads as acceptance criteria (sent to the model)
    model: str  # "model" or "model (every call)"
    tools: tuple[str, ...]  # the workers' tools


class Chooser:
    """Resolves what each goal chooses (``RunChoices``), once per distinct recipe and flags.

    A recipe that is not there or not Benjy's, a model that does not resolve, a criteria file
    among the credential paths (``tools.paths.secret_paths_of``: $VANCE_HOME, ~/.ssh, ...): a
    VanceError, which ``read_goals`` reports with the line.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.service = BenjyService(runtime)
        self.secrets = secret_paths_of(runtime.scopes.user)
        self._seen: dict[tuple[Any, ...], RunChoices] = {}
        self._worktrees: dict[Path | None, Worktree | None] = {None: None}

    def worktree_of(self, source: Path | None) -> Worktree | None:
        """``source``'s git work tree (``git_top``, its commit, whether it is dirty), asked once per
        source folder (and per repository) before anything is made; None: the runs get a copy."""
        if source not in self._worktrees:
            top = git_top(source) if source is not None else None
            if top is not None and top not in self._worktrees:
                head = _git(["rev-parse", "--short", "HEAD"], top)
                status = _git(["status", "--porcelain"], top)
                self._worktrees[top] = Worktree(
                    top, head.stdout.strip() if head is not None and head.returncode == 0 else "HEAD",
                    bool(status is not None and status.stdout.strip()),
                )
            self._worktrees[source] = self._worktrees[top] if top is not None else None
        return self._worktrees[source]

    def __call__(self, goal: Goal) -> RunChoices:
        key = (goal.recipe, goal.check, goal.criteria, goal.allow_exec, goal.model)
        if key not in self._seen:
            self._seen[key] = self._choose(goal)
        return self._seen[key]

    def refuse_secret(self, path: Path, what: str) -> None:
        secret = secret_near(path, self.secrets)
        if secret is not None:
            raise UsageError(f"{what} {path} is in {secret}, which holds credentials (the tools never read it)",
                             hint="point it at a file of acceptance criteria outside $VANCE_HOME, ~/.ssh, ~/.aws and the like")

    def refuse_source(self, folder: Path | None, what: str) -> None:
        """A source folder whose copy would take credentials into a workspace: your home folder,
        /, $VANCE_HOME, or one that is, holds or lies in a credential path (the tools hide those
        paths, but not their copies in a workspace)."""
        if folder is None:
            return
        home = os.environ.get("HOME")
        secret = secret_near(folder, self.secrets, holding=True)
        if folder == Path(folder.anchor):
            why = "is the root folder"
        elif home and folder == Path(home).resolve():
            why = "is your home folder"
        elif secret is None:
            return
        elif folder == secret or folder.is_relative_to(secret):
            why = f"is in {secret}, which holds credentials"
        else:
            why = f"holds {secret}, where credentials are kept"
        raise UsageError(f"{what} {folder} {why}: each run would work in a copy of it",
                         hint="point it at the project's own folder (not $HOME, /, $VANCE_HOME or a folder holding ~/.ssh, ~/.aws and the like)")

    def _choose(self, goal: Goal) -> RunChoices:
        from vance_cli.config.recipes import Recipe
        from vance_cli.engines.benjy.config import run_config
        from vance_cli.engines.benjy.engine import doer_snapshot

        if goal.criteria is not None:
            self.refuse_secret(goal.criteria, "criteria file")
        setup = self.service.setup(goal.recipe, criteria=goal.criteria, model=goal.model)
        cfg, snapshots = run_config(setup.params, setup.refs, check=goal.check, allow_exec=goal.allow_exec)
        criteria: list[str] = []
        for source in setup.params.criteriaSources:  # the recipe's: relative ones are read in the workspace
            ref = Path(source.ref)  # as the engine reads it (engines/benjy/config.resolve_criteria)
            if ref.is_absolute():
                self.refuse_secret(ref.resolve(), f"the recipe {setup.recipe.name!r} names the criteria source")
                criteria.append(str(ref))
            else:
                criteria.append(f"<workspace>/{source.ref}")
        criteria += setup.criteria_files
        tools: list[str] = []
        for stage in (setup.params.doRecipe, cfg.stages.get("escalation")):  # the recipes its workers run
            if stage and stage in snapshots:
                for tool in Recipe.model_validate(doer_snapshot(snapshots[stage], cfg)).tool_names():
                    if tool not in tools:
                        tools.append(tool)
        where = setup.recipe.path or setup.recipe.origin
        return RunChoices(
            recipe=setup.recipe.name + (f" ({where})" if where else ""),
            check=cfg.checkCommand,
            check_from="given: the line's or --check" if goal.check is not None else "the recipe's",
            criteria=tuple(criteria),
            model=setup.model + (" (every call)" if goal.model else " (and each stage recipe's own)"),
            tools=tuple(tools),
        )


def _bad(path: Path, line: int, what: str, hint: str | None = None) -> UsageError:
    return UsageError(
        f"{path.name} line {line}: {what}",
        hint=hint or 'write one JSON object per line, e.g. {"id": "slugify", "goal": "add slugify() with tests"}',
    )


def _text_field(path: Path, n: int, row: dict[str, Any], key: str) -> str | None:
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _bad(path, n, f'"{key}" must be a non-empty string, not {json.dumps(value)[:60]}')
    return value


def read_goals(path: Path, defaults: Defaults, runtime: Runtime) -> list[Goal]:
    """Every goal of ``path``, checked before anything is made (a UsageError naming the line):
    each goal's recipe, model and criteria are resolved into its ``choices``."""
    choose = Chooser(runtime)
    if not path.is_file():  # a FIFO or a device is not opened: reading it would wait or never end
        what = "is not a regular file" if path.exists() else "does not exist"
        raise UsageError(f"goals file {path} {what}", hint="pass a JSONL file: one {\"goal\": ...} object per line")
    base = path.parent
    goals: list[Goal] = []
    seen: dict[str, int] = {}
    folded: dict[str, str] = {}  # casefolded id -> the id
    try:
        handle = path.open(encoding="utf-8-sig")  # a UTF-8 BOM (Notepad, PowerShell) is not part of line 1
    except OSError as exc:
        raise UsageError(f"cannot read goals file {path}: {exc.strerror or exc}", hint="check the path and its permissions") from None
    with handle:
        try:
            for n, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    row = json.loads(raw)
                except ValueError as exc:
                    raise _bad(path, n, f"not JSON ({getattr(exc, 'msg', exc)})") from None
                except RecursionError:
                    raise _bad(path, n, "not JSON (nested too deeply)") from None
                if not isinstance(row, dict):
                    raise _bad(path, n, f"a JSON object is needed, not {type(row).__name__}")
                row = {_ALIASES.get(k, k): v for k, v in row.items()}
                for key in row:
                    if key not in GOAL_KEYS:
                        raise _bad(path, n, f"unknown field {key!r}{did_you_mean(key, GOAL_KEYS)}",
                                   hint="the fields are: " + ", ".join(GOAL_KEYS))
                goal = row.get("goal")
                if not isinstance(goal, str) or not goal.strip():
                    raise _bad(path, n, 'no goal: every line needs "goal" (text)')
                ident = row.get("id", n)
                ident = str(ident) if isinstance(ident, (int, str)) and not isinstance(ident, bool) else None
                if ident is None or not _ID.fullmatch(ident):
                    raise _bad(path, n, f"invalid id {json.dumps(row.get('id'))[:60]}",
                               hint="an id is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
                if ident in seen:
                    raise _bad(path, n, f"id {ident!r} is also on line {seen[ident]}", hint="give every goal its own id")
                twin = folded.get(ident.casefold())
                if twin is not None:  # its workspace folder would be the other's where names ignore case (macOS, Windows)
                    raise _bad(path, n, f"id {ident!r} is also on line {seen[twin]} ({twin!r}): ids that differ only in case "
                               "would share a workspace folder on some systems", hint="give every goal its own id")
                seen[ident] = n
                folded[ident.casefold()] = ident
                allow = row.get("allowExec", defaults.allow_exec)
                if not isinstance(allow, bool):
                    raise _bad(path, n, f'"allowExec" must be true or false, not {json.dumps(allow)[:60]}')
                source_text = _text_field(path, n, row, "workspace")
                criteria_text = _text_field(path, n, row, "criteria")
                recipe = _text_field(path, n, row, "recipe")
                if recipe is not None and looks_like_path(recipe) and not Path(recipe).expanduser().is_absolute():
                    recipe = str((base / recipe).resolve())  # as its workspace and criteria: from the goals file's folder
                try:
                    source = defaults.source
                    if source_text is not None:
                        source = existing_path(source_text, base, folder=True, what="workspace", hint=LINE_PATHS)
                        choose.refuse_source(source, "workspace")
                    criteria = defaults.criteria
                    if criteria_text is not None:
                        criteria = existing_path(criteria_text, base, folder=False, what="criteria file", hint=LINE_PATHS)
                    item = Goal(
                        id=ident,
                        goal=goal,
                        line=n,
                        check=_text_field(path, n, row, "check") or defaults.check,
                        source=source,
                        recipe=recipe or defaults.recipe,
                        criteria=criteria,
                        allow_exec=allow,
                        model=_text_field(path, n, row, "model") or defaults.model,
                    )
                    goals.append(replace(item, choices=choose(item), worktree_of=choose.worktree_of(item.source)))
                except VanceError as exc:
                    raise _bad(path, n, exc.message, hint=exc.hint or "fix the line") from None
        except UnicodeDecodeError:
            raise UsageError(f"goals file {path} is not UTF-8 text", hint="save it as UTF-8 JSONL") from None
    if not goals:
        raise UsageError(f"goals file {path} has no goals", hint='write one JSON object per line, e.g. {"goal": "add slugify() with tests"}')
    return goals


def source_folder(text: str, runtime: Runtime) -> Path:
    """``--workspace``: the default source folder of every run, checked now."""
    folder = existing_path(text, runtime.scopes.cwd, folder=True, what="--workspace",
                           hint="pass an existing folder (its copy or worktree is each run's workspace)")
    Chooser(runtime).refuse_source(folder, "--workspace")
    return folder


def criteria_file(text: str, runtime: Runtime) -> Path:
    """``--criteria``: the default criteria file of every run, checked now (not a credential path)."""
    path = existing_path(text, runtime.scopes.cwd, folder=False, what="criteria file", hint="check the --criteria path")
    Chooser(runtime).refuse_secret(path, "--criteria")
    return path


# --------------------------------------------------------------------------- workspaces


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        # making a worktree must run nothing but git itself: no hooks, no fsmonitor command (both
        # can be set in the source's .git/config, which came with the repository)
        return subprocess.run(
            [git, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-C", str(cwd), *args],
            capture_output=True, text=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def git_top(source: Path) -> Path | None:
    """The top of the git work tree whose last commit ``source``'s worktree is made from; None when
    the run gets a copy of ``source``: not in git, no commit yet, or ``source`` not in that commit
    (an untracked folder: its worktree would not have it)."""
    top = _git(["rev-parse", "--show-toplevel"], source)
    if top is None or top.returncode != 0 or not top.stdout.strip():
        return None
    head = _git(["rev-parse", "--verify", "--quiet", "HEAD"], source)
    if head is None or head.returncode != 0:
        return None  # no commit yet: a copy
    folder = Path(top.stdout.strip()).resolve()
    rel = source.relative_to(folder).as_posix() if source != folder else ""
    if rel:
        tracked = _git(["cat-file", "-e", f"HEAD:{rel}"], folder)
        if tracked is None or tracked.returncode != 0:
            return None
    return folder


def partial_of(dest: Path) -> Path:
    """Where a copy is made before it is renamed to ``dest``: a name no goal id can have (an id
    starts with a letter or digit), so making one run's copy never removes another run's workspace."""
    return dest.with_name(f".{dest.name}.partial")


def _discard(dest: Path) -> None:
    """Remove what an interrupted preparation left at ``dest`` (ours: inside the batch folder)."""
    marker = dest / ".git"
    if marker.is_file():  # a worktree: let its repository forget it too
        text = marker.read_text(encoding="utf-8", errors="replace")
        gitdir = Path(text.partition("gitdir:")[2].strip())
        if gitdir.is_dir():  # <repo>/.git/worktrees/<name>
            _git(["worktree", "remove", "--force", str(dest)], gitdir.parent.parent.parent)
    for leftover in (dest, partial_of(dest)):
        if leftover.exists() or leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)


def make_workspace(
    source: Path | None, dest: Path, *, top: Path | None, skip: Path | None = None,
    hidden: list[Path] | tuple[Path, ...] = (),
) -> tuple[Path, str, str | None]:
    """Make the run's workspace at ``dest``: (its folder, "worktree" | "copy" | "folder", a warning or None).

    ``top``: ``git_top(source)``, as reading the goals file found it (None: a copy of ``source``).
    A dirty work tree is said once for the batch (``Worktree.warning``), not here.

    ``skip``: a folder inside ``source`` that is not copied (the state folder with the batch in it);
    ``hidden``: the credential paths (``secret_paths_of``), never copied (the tools hide them, not
    their copies; ``read_goals`` refuses a source that holds one, this is the second lock).
    """
    _discard(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if source is None:
        dest.mkdir()
        return dest, "folder", None
    fallback = None
    if top is not None:
        add = ["worktree", "add", "--detach", "--quiet", str(dest), "HEAD"]
        made = _git(add, top)
        if made is not None and made.returncode != 0:
            # a worktree whose folder was deleted is still registered ("missing but already
            # registered"): git forgets such worktrees with prune, then the same path is free
            _git(["worktree", "prune"], top)
            made = _git(add, top)
        if made is not None and made.returncode == 0:
            return dest / source.relative_to(top), "worktree", None
        _discard(dest)  # git could not make it: fall back to a copy, and say why
        why = " ".join((made.stderr or made.stdout or f"exit {made.returncode}").split())[:300] if made is not None else "git did not run"
        fallback = (f"git could not make a worktree of {top} at {dest} ({why}); the run works in a copy of {source} "
                    "instead, with its uncommitted files and without .git")
    partial = partial_of(dest)
    skip = skip.resolve() if skip is not None else None

    hide = {str(path) for path in hidden}
    special: list[str] = []  # FIFOs, sockets, devices: copying one waits forever or fails

    def ignore(folder: str, names: list[str]) -> list[str]:
        # never git's own folder (its hooks and config run commands) nor a credential path
        left_out = [n for n in names if n == ".git" or (hide and os.path.join(folder, n) in hide)]
        for name in names:
            try:
                mode = os.lstat(os.path.join(folder, name)).st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                left_out.append(name)
                special.append(os.path.relpath(os.path.join(folder, name), source))
        if skip is None or Path(folder).resolve() != skip.parent:
            return left_out
        return [*left_out, *(n for n in names if n == skip.name)]

    try:
        shutil.copytree(source, partial, symlinks=True, ignore=ignore)
    except shutil.Error as exc:  # files that could not be copied (unreadable, vanished): said plainly
        problems = exc.args[0] if exc.args and isinstance(exc.args[0], list) else []
        first = problems[0] if problems and len(problems[0]) == 3 else None
        where = f"{first[0]}: {first[2]}" if first else str(exc)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        shutil.rmtree(partial, ignore_errors=True)
        raise VanceError(f"cannot copy {source} for the run: {where}{more}",
                         hint="make the files readable, or point the goal at another folder") from None
    os.rename(partial, dest)  # whole or absent: a kill during the copy leaves only the .partial
    if special:
        note = (f"left out of the copy of {source}: {len(special)} file{'s' if len(special) != 1 else ''} that "
                f"{'are' if len(special) != 1 else 'is'} not a regular file, folder or link ({', '.join(special[:3])}"
                f"{', ...' if len(special) > 3 else ''})")
        fallback = f"{fallback}; {note}" if fallback else note
    return dest, "copy", fallback


# --------------------------------------------------------------------------- results


@dataclass
class BatchRow:
    """One run in the summary (from its process file)."""

    id: str
    process_id: str
    status: str  # DONE | BLOCKED | FAILED | STOPPED (interrupted, resumable) | BUSY (another vance drives it)
    attempts: int  # worker attempts over all its items
    tokens: int  # controller and worker tokens
    workspace: str
    question: str | None = None
    reason: str | None = None
    skipped: bool = False  # DONE before this invocation

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def row_of(gid: str, process: Process, *, error: str | None = None, busy: bool = False, skipped: bool = False) -> BatchRow:
    """``busy``: another vance held the run, so it was not driven here (``error`` says which)."""
    from vance_cli.engines import pending_question
    from vance_cli.engines.benjy.state import load_state

    counters = load_state(process).counters
    status = {Status.DONE: DONE, Status.BLOCKED: BLOCKED, Status.FAILED: FAILED}.get(process.status)
    if busy and status != DONE:
        status = BUSY
    elif status is None:
        status = FAILED if error else STOPPED
    return BatchRow(
        id=gid,
        process_id=process.id,
        status=status,
        attempts=counters.workerSpawns,
        tokens=counters.controllerTokens + counters.workerTokens,
        workspace=process.workspace or "",
        question=pending_question(process) if status == BLOCKED else None,
        reason=error or (process.status_reason if status != DONE else None),
        skipped=skipped,
    )


# --------------------------------------------------------------------------- driving one run


def error_text(exc: BaseException) -> str:
    """A run's error for its row: a VanceError's message; anything else (a bug) as "Type: message"."""
    if isinstance(exc, VanceError):
        return exc.message
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}".rstrip(": ")


@dataclass(frozen=True)
class Driven:
    """How driving a run went: ``error`` (its text) when it could not be driven to its end."""

    error: str | None = None
    busy: bool = False  # another vance holds the run (`benjy answer` in another terminal): not driven here


async def drive(service: BenjyService, pid: str) -> Driven:
    """Drive the run ``pid`` until it ends, blocks or fails.

    Any error, a bug too, ends only this run (its row FAILED); the batch's other runs go on, on
    either engine (a Ray task runs this same function). A run another vance holds is BUSY.
    """
    try:
        await service.run(pid)
    except ProcessLocked as exc:
        return Driven(exc.message, busy=True)
    except Exception as exc:  # noqa: BLE001 - one run's bug must not cancel the others
        return Driven(error_text(exc))
    return Driven()


def ray_task(task: dict[str, Any]) -> Driven:
    """One run as a Ray task (on a worker): the runtime rebuilt from what the driver sent."""
    from vance_cli.config.settings import Settings
    from vance_cli.ray_cluster import task_environ

    with task_environ(task["env"]):
        scopes: Scopes = task["scopes"]
        runtime = Runtime(scopes, Settings.load(scopes), model_factory=task["model_factory"])
        if task["adopt"]:
            runtime.adopt(task["pid"])
        return asyncio.run(drive(BenjyService(runtime), task["pid"]))


# --------------------------------------------------------------------------- the batch


@dataclass
class Plan:
    create: list[Goal]  # no process file yet: these need the batch's approval

    def summary(self) -> list[str]:
        """What the approval covers, all of it: the new runs grouped by what their lines choose
        (recipe, check, criteria files, model, source folder, the workers' tools)."""
        groups: dict[tuple[Path | None, Worktree | None, RunChoices | None], list[str]] = {}
        for goal in self.create:
            groups.setdefault((goal.source, goal.worktree_of, goal.choices), []).append(goal.id)
        lines: list[str] = []
        for (source, top, choices), ids in groups.items():
            shown = ", ".join(ids[:SHOWN_IDS]) + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")
            lines.append(f"  {shown} ({len(ids)} run{'s' if len(ids) != 1 else ''}):")
            if source is None:
                lines.append("    source    none (each run in an empty folder)")
            elif top is not None:
                dirty = "; uncommitted changes left out" if top.dirty else ""
                lines.append(f"    source    {source} (each run in its own git worktree of {top.top}'s last commit, {top.commit}{dirty})")
            else:
                lines.append(f"    source    {source} (each run in its own copy of it)")
            if choices is None:
                continue
            lines.append(f"    recipe    {choices.recipe}")
            if choices.check:
                lines.append(f"    check     {choices.check}   ({choices.check_from}; run in the workspace after every item)")
            else:
                lines.append("    check     none")
            if choices.criteria:
                lines.append(f"    criteria  {', '.join(choices.criteria)}   (read and sent to the model)")
            lines.append(f"    model     {choices.model}")
            lines.append(f"    tools     {', '.join(choices.tools)}   (the workers', in their workspace)")
        return lines


def batch_folder(scopes: Scopes, goals_path: Path) -> Path:
    """The batch's own folder (its state, lock and the runs' workspaces), in the user state folder
    ($VANCE_HOME) even in a project: never inside the person's repository, whose worktrees it holds."""
    key = hashlib.sha256(str(goals_path).encode()).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", goals_path.stem)[:40] or "goals"
    return scopes.user / "batches" / f"{stem}-{key}"


@dataclass
class BenjyBatch:
    """One goals file's batch: ``locked()``, then ``plan()``, then ``run(plan, ...)``."""

    runtime: Runtime  # the command's: creates the runs
    goals_path: Path
    goals: list[Goal]
    model_factory: ModelFactory | None = None
    on_event: Event = lambda event: None
    rows: dict[str, BatchRow] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.goals_path = self.goals_path.resolve()
        self.folder = batch_folder(self.runtime.scopes, self.goals_path)
        self.state_path = self.folder / STATE_FILE
        self.state = self._load_state()
        self.secrets = secret_paths_of(self.runtime.scopes.user)  # never copied into a workspace
        self.approved_by = ""  # who approved the new runs (``run``)

    # --- the state file ------------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        if not self.state_path.is_file():
            return {"version": STATE_VERSION, "goals": str(self.goals_path), "runs": {}}
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read the batch state {self.state_path}: {exc}",
                             hint="it is kept as it is; move it away to start the batch afresh (its runs stay in `vance ps`)") from None
        if not isinstance(data, dict) or not isinstance(data.get("runs"), dict):
            raise StoreError(f"the batch state {self.state_path} is not a batch state",
                             hint="move it away to start the batch afresh (its runs stay in `vance ps`)")
        version = data.get("version")
        if version != STATE_VERSION:
            raise StoreError(f"the batch state {self.state_path} is version {json.dumps(version)[:20]}; this vance reads version {STATE_VERSION}",
                             hint="run the batch with the vance that made it, or move the file away to start afresh")
        for gid, entry in data["runs"].items():
            if not isinstance(entry, dict) or not isinstance(entry.get("processId"), str):
                raise StoreError(f"the batch state {self.state_path}: entry {gid!r} is not a run ({json.dumps(entry)[:60]})",
                                 hint="move it away to start the batch afresh (its runs stay in `vance ps`)")
        return data

    def _save(self) -> None:
        atomic_write_json(self.state_path, self.state)

    @contextlib.contextmanager
    def locked(self) -> Iterator[BenjyBatch]:
        """One vance at a time runs a batch (a second one is told which pid has it)."""
        from vance_cli.store.lock import describe_holder, process_lock, read_holder

        lock = self.folder / "batch.lock"
        held = contextlib.ExitStack()
        try:
            held.enter_context(process_lock(lock, f"batch {self.goals_path.name}"))
        except ProcessLocked:  # only the batch's own lock: a run's, met inside, is said as it is
            raise ProcessLocked(f"the batch of {self.goals_path} is being run by {describe_holder(read_holder(lock))}",
                                hint="wait for it to finish or stop it; its runs are in `vance ps`") from None
        with held:
            yield self

    # --- planning and creating -----------------------------------------------------------------

    def _exists(self, pid: str | None) -> bool:
        return bool(pid) and self.runtime.store.path(pid).is_file()

    def plan(self) -> Plan:
        """Which goals need a run made (and so the batch's approval); a changed goal is refused."""
        runs = self.state["runs"]
        create: list[Goal] = []
        for goal in self.goals:
            entry = runs.get(goal.id)
            if entry is not None and self._exists(entry.get("processId")):
                if entry.get("digest") != goal.digest():
                    raise UsageError(
                        f"goal {goal.id!r} (line {goal.line} of {self.goals_path.name}, with the flags it takes) "
                        f"changed since the batch made its run {entry['processId']}",
                        hint="rerun with the same line and flags, or give the changed goal a new id (the old run stays as it is)",
                    )
                continue
            create.append(goal)
        return Plan(create)

    def save_ids(self, plan: Plan) -> None:
        """Every new goal's process id, in one write, before anything else is made: a kill later
        never makes a second run for a goal. (A workspace and a process file are made when the
        run's turn comes, ``create_run``; nothing in batch.json changes after this.)"""
        runs = self.state["runs"]
        for goal in plan.create:
            entry = runs.get(goal.id)
            pid = entry.get("processId") if isinstance(entry, dict) else None
            runs[goal.id] = {"processId": pid or new_process_id(), "digest": goal.digest()}
        if plan.create:
            self._save()
        crashpoint("batch.ids_saved")

    async def create_run(self, goal: Goal, service: BenjyService, approved_by: str) -> StartedRun:
        """Make the goal's workspace (git or a copy, in a thread: the event loop goes on driving the
        other runs) and create its run on ``service``, approved by ``approved_by``; still locked."""
        pid = self.state["runs"][goal.id]["processId"]
        workspace, kind, warning = await asyncio.to_thread(
            make_workspace, goal.source, self.folder / "runs" / goal.id, top=goal.worktree_of.top if goal.worktree_of else None,
            skip=self.runtime.scopes.state_dir, hidden=self.secrets,
        )
        if warning:
            self.on_event({"type": "warning", "text": warning})
        crashpoint("batch.workspace_ready")
        started = service.start(
            goal.goal, recipe=goal.recipe, workspace=workspace, check=goal.check, criteria=goal.criteria,
            allow_exec=goal.allow_exec, model=goal.model, process_id=pid, approved_by=approved_by,
        )
        self.on_event({"type": "run_created", "id": goal.id, "process_id": pid, "workspace": str(workspace), "kind": kind})
        return started

    # --- running -------------------------------------------------------------------------------

    async def run(self, plan: Plan, *, approved_by: str | None, jobs: int | None = None, ray: Any = None) -> list[BatchRow]:
        """Create the new runs, drive every run that is not DONE, and return the rows in file order.

        ``ray``: the connected ``ray`` module (``ray_cluster.ray_session``, entered before this, so
        a cluster that cannot be reached leaves nothing made): each run is a Ray task; None: the
        local engine, ``jobs`` at a time. Cancelled (Ctrl+C), the runs still going are stopped
        where they are (saved, resumable) and ``rows`` holds what finished; the rerun goes on.
        """
        if plan.create and approved_by is None:
            raise UsageError("the batch's new runs need an approval", hint="pass --yes")
        created = {g.id for g in plan.create}
        done: dict[str, Process] = {}
        for goal in self.goals:
            if goal.id not in created:
                process = self.runtime.store.load(self.state["runs"][goal.id]["processId"])
                if process.status == Status.DONE:
                    done[goal.id] = process
        if ray is None:
            jobs = jobs or default_jobs()
        self.on_event({"type": "batch_started", "goals": str(self.goals_path), "runs": len(self.goals), "new": len(created),
                       "to_drive": len(self.goals) - len(done), "engine": "local" if ray is None else "ray", "jobs": jobs,
                       "folder": str(self.folder)})
        for text in dict.fromkeys(g.worktree_of.warning() for g in plan.create if g.worktree_of):  # once per repository
            if text:
                self.on_event({"type": "warning", "text": text})
        self.save_ids(plan)
        self.approved_by = approved_by or ""
        todo: list[tuple[Goal, str]] = []
        for goal in self.goals:
            if goal.id in done:
                self._finish(goal.id, done[goal.id], skipped=True)
            else:
                todo.append((goal, self.state["runs"][goal.id]["processId"]))
        try:
            if ray is not None:
                await self._run_ray(ray, todo, created, jobs)
            else:
                await self._run_local(todo, created, jobs)
        finally:
            for goal, pid in todo:  # interrupted: what did not finish is STOPPED (or what its file says)
                if goal.id not in self.rows:
                    self._finish(goal.id, pid)
        return [self.rows[g.id] for g in self.goals]

    def _finish(self, gid: str, process: Process | str, *, error: str | None = None, busy: bool = False,
                skipped: bool = False) -> None:
        """``process``: the run, or its id (loaded here; a file that cannot be read is a FAILED row)."""
        try:
            if isinstance(process, str):
                process = self.runtime.store.load(process)
            row = row_of(gid, process, error=error, busy=busy, skipped=skipped)
        except Exception as exc:  # noqa: BLE001 - the summary still gets its row
            pid = process if isinstance(process, str) else process.id
            row = BatchRow(gid, pid, FAILED, 0, 0, "", reason=error or error_text(exc))
        self.rows[gid] = row
        self.on_event({"type": "run_finished", **row.to_dict()})

    async def _run_local(self, todo: list[tuple[Goal, str]], created: set[str], jobs: int) -> None:
        gate = asyncio.Semaphore(jobs)

        async def one(goal: Goal, pid: str) -> None:
            async with gate:
                service = BenjyService(Runtime(self.runtime.scopes, self.runtime.settings, model_factory=self.model_factory))
                started = None
                try:
                    if goal.id in created:  # made on the runtime that drives it, driven under the same lock
                        started = await self.create_run(goal, service, self.approved_by)
                except Exception as exc:  # noqa: BLE001 - a workspace that cannot be made fails this run only
                    await service.runtime.aclose()
                    self._finish(goal.id, pid, error=error_text(exc))
                    return
                self.on_event({"type": "run_started", "id": goal.id, "process_id": pid})
                try:
                    driven = await drive(service, pid)
                finally:
                    if started is not None:
                        started.release()
                self._finish(goal.id, pid, error=driven.error, busy=driven.busy)

        async with asyncio.TaskGroup() as group:
            for goal, pid in todo:
                group.create_task(one(goal, pid))

    async def _run_ray(self, ray: Any, todo: list[tuple[Goal, str]], created: set[str], jobs: int | None) -> None:
        from vance_cli.ray_cluster import task_env

        # max_retries: a worker that dies (killed, out of memory) has its run taken up by a new one,
        # from the process file, as `vance benjy resume` would
        remote = ray.remote(num_cpus=1, max_retries=3)(ray_task)
        gate = asyncio.Semaphore(jobs) if jobs else contextlib.nullcontext()
        env = task_env()

        async def one(goal: Goal, pid: str) -> None:
            async with gate:
                if goal.id in created:  # made here, driven by the task (released for it)
                    try:
                        (await self.create_run(goal, BenjyService(self.runtime), self.approved_by)).release()
                    except Exception as exc:  # noqa: BLE001 - a workspace that cannot be made fails this run only
                        self._finish(goal.id, pid, error=error_text(exc))
                        return
                task = {"pid": pid, "scopes": self.runtime.scopes, "env": env, "adopt": goal.id in created,
                        "model_factory": self.model_factory}
                ref = remote.remote(task)
                self.on_event({"type": "run_started", "id": goal.id, "process_id": pid})
                try:
                    driven = await asyncio.wrap_future(ref.future())
                except asyncio.CancelledError:
                    ray.cancel(ref)  # the task stops where it is; its run is saved and resumable
                    raise
                except ray.exceptions.RayError as exc:  # the task itself failed (drive() keeps a run's errors)
                    cause = getattr(exc, "cause", None)  # RayTaskError: what the task raised
                    driven = Driven(f"the Ray task failed: {error_text(cause if isinstance(cause, BaseException) else exc)}")
                self._finish(goal.id, pid, error=driven.error, busy=driven.busy)

        async with asyncio.TaskGroup() as group:
            for goal, pid in todo:
                group.create_task(one(goal, pid))
