"""exec_run: a shell command in the process's workspace, inside a bubblewrap sandbox where one is available.

The sandbox mode is the setting ``exec.sandbox`` (env ``VANCE_SANDBOX``):

- ``auto`` (default): bubblewrap (``bwrap``) when it is installed and works here, else the command
  runs unconfined and the tool result says so;
- ``required``: refuse to run a command without the sandbox;
- ``off``: always unconfined.

Inside the sandbox the workspace is writable and the rest of the file system read-only, ``/tmp``
is private, the command has its own PID namespace (it cannot read Vance's environment through
``/proc``), the network is off unless ``exec.network`` or the recipe's ``exec: {network: true}``
allows it, ``$VANCE_HOME`` and the usual credential files in ``$HOME`` are hidden, and the
workspace's ``.vance/``, ``.git/hooks`` and ``.git/config`` (and the hooksPath folder and the
files the config includes) stay read-only.

Without the sandbox the command runs under tools/reaper.py on Linux, so nothing it starts
(detached or not) outlives it, as in the sandbox's PID namespace: nothing can change the workspace
after the git check that follows every command (tools/git_guard.py).

Either way the command's environment is an allow list (:data:`ENV_ALLOW` plus the names in
``exec.env``), not Vance's environment minus known key names.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
import signal
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vance_cli.text import HeadTail
from vance_cli.tools import git_guard
from vance_cli.tools.base import Tool, ToolContext, ToolResult
from vance_cli.tools.paths import (
    HIDDEN_HOME_PATHS,
    git_hooks_paths,
    git_include_paths,
    guarded,
    resolve_in_workspace,
    secret_paths,
    tool_root,
)

__all__ = ["HIDDEN_HOME_PATHS", "make_tool"]

MAX_OUTPUT_CHARS = 30_000
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
# Once the shell has exited (or was killed), how long background children may keep the output
# pipe open before their process group is killed. Tests patch it down.
DRAIN_GRACE = 0.5

# What a command sees of Vance's environment: enough to find programs and print text, nothing
# that authenticates. More names come from the setting exec.env.
ENV_ALLOW = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
)
ENV_ALLOW_PREFIXES = ("LC_",)

# Read-only inside the sandbox although the workspace is writable (see tools/paths.py's
# PROTECTED_DIRS): a command must not give later sessions more tools or plant a git hook.
READ_ONLY_IN_WORKSPACE = (".vance", ".git/hooks", ".git/config")

EXEC_RUN_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "minLength": 1,
            "description": "Shell command, run with bash -c.",
        },
        "timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_TIMEOUT,
            "default": DEFAULT_TIMEOUT,
            "description": f"Seconds before the command is killed (default {DEFAULT_TIMEOUT:g}, max {MAX_TIMEOUT:g}).",
        },
        "cwd": {
            "type": "string",
            "description": "Working folder relative to the workspace root (default: the root).",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}


# --------------------------------------------------------------------------- environment


def command_env(
    environ: dict[str, str] | None = None, extra: list[str] | tuple[str, ...] = ()
) -> dict[str, str]:
    """The command's environment: the allow-listed names (plus ``extra``) that are set in ``environ``."""
    source = os.environ if environ is None else environ
    names = set(ENV_ALLOW) | set(extra)
    return {
        k: v
        for k, v in source.items()
        if k in names or k.startswith(ENV_ALLOW_PREFIXES)
    }


# --------------------------------------------------------------------------- sandbox


@dataclass(frozen=True)
class Plan:
    """How one command runs: in bwrap (``argv`` prefix) or unconfined, and why."""

    sandboxed: bool
    network: bool
    note: str  # for the tool result: which mode ran and what that means
    prefix: tuple[str, ...] = ()  # argv before `bash -c CMD`


class SandboxUnavailable(Exception):
    """exec.sandbox is "required" and no working bubblewrap was found."""


_probe_cache: dict[str, str | None] = {}


async def _probe(bwrap: str) -> str | None:
    """None when ``bwrap`` can build the namespaces we use here, else why not (cached per binary)."""
    if bwrap in _probe_cache:
        return _probe_cache[bwrap]
    try:
        proc = await asyncio.create_subprocess_exec(
            bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-pid", "--unshare-net", "--die-with-parent", "--cap-drop", "ALL", "true",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 10)
        problem = None if proc.returncode == 0 else (err.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}")
    except (OSError, TimeoutError) as exc:
        problem = str(exc) or type(exc).__name__
    _probe_cache[bwrap] = problem
    return problem


async def find_sandbox() -> tuple[str | None, str | None]:
    """(the bubblewrap on PATH or None, why it cannot sandbox here or None when it can).

    The one test of the sandbox: exec_run's plan asks it before every command, `vance doctor` once.
    """
    bwrap = shutil.which("bwrap")
    problem = "bubblewrap (bwrap) is not installed" if bwrap is None else await _probe(bwrap)
    return bwrap, problem


def _setting(ctx: ToolContext, key: str, default: Any) -> Any:
    return default if ctx.settings is None else ctx.settings.get(key, default)


def _tools_under_tmp() -> list[Path]:
    """Existing folders under /tmp that hold programs: PATH entries and this Python's prefixes."""
    import sys

    tmp = Path("/tmp")
    found: list[Path] = []
    candidates = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    candidates += [sys.prefix, sys.exec_prefix, sys.base_prefix, str(Path(sys.executable).parent)]
    for raw in candidates:
        try:
            path = Path(raw).resolve()
        except (OSError, RuntimeError):
            continue
        if path != tmp and path.is_relative_to(tmp) and path.is_dir() and path not in found:
            found.append(path)
    return found


def _bwrap_argv(bwrap: str, root: Path, cwd: Path, network: bool, hide: list[Path]) -> tuple[str, ...]:
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # /tmp is private, but the programs a command runs stay visible read-only: a virtual
    # environment or tool folder under /tmp (on PATH, or the interpreter running vance).
    for path in _tools_under_tmp():
        argv += ["--ro-bind", str(path), str(path)]
    if root in hide:  # tool_root refuses such a workspace before a plan is made
        raise ValueError(f"the workspace {root} is a hidden path")
    hide = [path for path in hide if path.exists()]
    # A hidden folder holding the workspace (a `--target` workspace in $VANCE_HOME) is hidden
    # first and the workspace bound back into it: the rest of it (config.toml) stays hidden.
    for path in hide:
        if root.is_relative_to(path) and path.is_dir():
            argv += ["--tmpfs", str(path)]
    argv += ["--bind", str(root), str(root)]
    git = root / ".git"
    if git.is_dir() and not git.is_symlink():
        # Its own mount: a command cannot rename, replace or remove .git (EBUSY), so the
        # read-only config and hooks below cannot be swapped for planted ones.
        argv += ["--bind", str(git), str(git)]
    elif git.is_file() and not git.is_symlink():
        # A worktree's or submodule's `gitdir:` file: read-only and its own mount, so a command
        # can neither point it elsewhere nor replace it with a repository of its own.
        argv += ["--ro-bind", str(git), str(git)]
    for rel in READ_ONLY_IN_WORKSPACE:
        path = root / rel
        if path.exists() and not path.is_symlink():
            argv += ["--ro-bind", str(path), str(path)]
    for path in git_hooks_paths(root):  # core.hooksPath: git's hooks folder in the work tree
        if path.is_relative_to(root) and path != root and path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    for path in git_include_paths(root / ".git" / "config"):  # files git reads as part of its config
        if path.is_relative_to(root) and path.is_file():
            argv += ["--ro-bind", str(path), str(path)]
    for path in hide:
        if root.is_relative_to(path):
            continue
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        else:
            argv += ["--ro-bind", "/dev/null", str(path)]
    # No capabilities inside (run as root, bwrap keeps them): root in the sandbox cannot unmount
    # what hides $VANCE_HOME, remount / read-write or lift the read-only binds above.
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--cap-drop", "ALL"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--chdir", str(cwd), "--"]
    return tuple(argv)


async def plan(ctx: ToolContext, root: Path, cwd: Path) -> Plan:
    """Decide how to run: raises SandboxUnavailable when the sandbox is required but missing."""
    mode = str(_setting(ctx, "exec.sandbox", "auto"))
    recipe_exec = ctx.extra.get("recipe_exec") or {}
    network = bool(_setting(ctx, "exec.network", False)) or bool(recipe_exec.get("network", False))
    if mode == "off":
        return Plan(False, True, 'no sandbox (exec.sandbox is "off"): the command ran with your user\'s full rights')
    bwrap, problem = await find_sandbox()
    if problem is not None:
        if mode == "required":
            raise SandboxUnavailable(problem)
        return Plan(False, True, f"no sandbox ({problem}): the command ran with your user's full rights")
    hide = secret_paths(ctx)  # the file tools refuse the same paths (tools/paths.py)
    assert bwrap is not None
    prefix = _bwrap_argv(bwrap, root, cwd, network, hide)
    net = "network on" if network else "network off"
    return Plan(True, network, f"sandbox: bubblewrap (workspace writable, rest read-only, {net})", prefix)


# --------------------------------------------------------------------------- running


class _Collector(asyncio.SubprocessProtocol):
    """Gathers stdout+stderr and signals process exit and pipe close separately.

    Separately because a background child can hold the pipe open after the shell exits; in
    Python 3.11 `Process.wait()` waits for the pipes too and would hang until the timeout.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, buf: HeadTail) -> None:
        self.buf = buf
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.buf.add(self._decoder.decode(data))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and not self.closed.done():
            self.buf.add(self._decoder.decode(b"", final=True))
            self.closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        for fut in (self.exited, self.closed):
            if not fut.done():
                fut.set_result(None)


def _kill_group(pgid: int | None) -> None:
    if pgid is None:
        return
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# Without a sandbox the command runs under tools/reaper.py, a child subreaper: nothing the command
# starts, detached or not, outlives it (in the sandbox bubblewrap's PID namespace does that). Linux
# only (prctl); elsewhere background processes that leave the process group survive the command.
REAPER = Path(__file__).with_name("reaper.py")


def _reaper_argv(status_fd: int) -> tuple[str, ...]:
    """The reaper's argv before the command's, or () where it cannot run."""
    import sys

    if not sys.platform.startswith("linux") or not sys.executable or not REAPER.is_file():
        return ()
    # An interpreter this user cannot start again (a root-owned one entered through setpriv, as the
    # unprivileged test run does): the command runs without the reaper rather than not at all.
    if not os.access(sys.executable, os.X_OK):
        return ()
    return (sys.executable, "-I", "-S", str(REAPER), str(status_fd), f"{DRAIN_GRACE:g}")


def _reaper_status(fd: int) -> dict[str, int]:
    """What the reaper wrote before it exited ({"ended": N, "subreaper": 0|1}), {} if nothing."""
    os.set_blocking(fd, False)
    try:
        text = os.read(fd, 200).decode("ascii", "replace")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.isdigit():
            out[key] = int(value)
    return out


async def _stop(transport: asyncio.SubprocessTransport, proto: _Collector, reaped: bool) -> None:
    """End the command and everything it started: the reaper does it on SIGTERM (killing it
    first would orphan what left the process group); else, or if it does not exit, SIGKILL the
    process group."""
    pid = transport.get_pid()
    if reaped and pid is not None:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
        if await _wait(proto.exited, 5.0):
            return
    _kill_group(pid)
    await _wait(proto.exited, 5.0)


async def _wait(fut: asyncio.Future[None], seconds: float) -> bool:
    """Wait for `fut` up to `seconds` without cancelling it; True when it finished."""
    try:
        await asyncio.wait_for(asyncio.shield(fut), seconds)
    except TimeoutError:
        return False
    return True


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "exit code: unknown"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"exit code: {code} (killed by {name})"
    return f"exit code: {code}"


async def _exec_run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    command: str = args["command"]
    timeout = float(args.get("timeout") or DEFAULT_TIMEOUT)
    if not 0 < timeout <= MAX_TIMEOUT:
        return ToolResult.error(
            f"timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds"
        )
    cwd_rel = args.get("cwd") or "."
    cwd = resolve_in_workspace(ctx.workspace, cwd_rel)
    if not cwd.is_dir():
        return ToolResult.error(
            f"cwd {cwd_rel!r} is not an existing folder in the workspace; call file_list"
        )
    root = tool_root(ctx)
    try:
        how = await plan(ctx, root, cwd)
    except SandboxUnavailable as exc:
        return ToolResult.error(
            f"exec_run refused: exec.sandbox is \"required\" but {exc}; the command did not run "
            "(the user can install bubblewrap, e.g. `apt-get install bubblewrap`, or set "
            'exec.sandbox = "auto" in config.toml)'
        )
    env = command_env(extra=tuple(_setting(ctx, "exec.env", ()) or ()))
    bash = shutil.which("bash") or "/bin/sh"
    before = git_guard.snapshot(root)
    git_note: str | None = None

    loop = asyncio.get_running_loop()
    buf = HeadTail(MAX_OUTPUT_CHARS)
    status_r, status_w = os.pipe()
    reaper = () if how.sandboxed else _reaper_argv(status_w)
    spawn = asyncio.ensure_future(loop.subprocess_exec(
        lambda: _Collector(loop, buf),
        *how.prefix,
        *reaper,
        bash,
        "-c",
        command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=str(cwd),
        env=env,
        start_new_session=True,  # own process group (and no controlling terminal): killable as a whole
        pass_fds=(status_w,) if reaper else (),
    ))
    cancelled = False
    try:
        # A cancel while it starts must not leave it running unchecked (asyncio would kill only
        # the reaper): let it start, then end it and check below, then give in to the cancel.
        while not spawn.done():
            try:
                await asyncio.shield(spawn)
            except asyncio.CancelledError:
                cancelled = True
        transport, proto = spawn.result()
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    pgid = transport.get_pid()
    timed_out = False
    stragglers = False
    reaped: dict[str, int] = {}
    try:
        if cancelled:
            raise asyncio.CancelledError
        if not await _wait(proto.exited, timeout):
            timed_out = True
            await _stop(transport, proto, bool(reaper))
        # The pipe closes when every holder is gone; background children may still hold it.
        if not await _wait(proto.closed, DRAIN_GRACE):
            stragglers = not timed_out
            _kill_group(pgid)
            # A holder that left our group (setsid) cannot be killed from here; stop waiting for it.
            await _wait(proto.closed, DRAIN_GRACE)
    finally:
        try:
            # Cancelled while running: leave nothing behind, and nothing that could plant after
            # the check below.
            if transport.get_returncode() is None:
                await _stop(transport, proto, bool(reaper))
        finally:
            transport.close()
            if reaper:
                reaped = _reaper_status(status_r)
            os.close(status_r)
            # Here, not after: a cancelled or failed wait must not leave a planted hook or config behind.
            try:
                git_note = git_guard.restore(root, before)
            except Exception as exc:  # noqa: BLE001 - the command's result still goes back
                git_note = (f"[checking git's control files after the command failed ({exc}): tell the user "
                            "not to run git here before checking .git]")
    stragglers = stragglers or reaped.get("ended", 0) > 0

    code = transport.get_returncode()
    output = buf.text()
    data = {
        "exit_code": code,
        "timed_out": timed_out,
        "output_chars": buf.total,
        "cut_chars": buf.cut,
        "sandbox": "bwrap" if how.sandboxed else "none",
        "network": how.network,
    }
    if timed_out:
        result = ToolResult.error(
            f"command timed out after {timeout:g} s and it and every process it started were killed "
            f"(raise timeout, max {MAX_TIMEOUT:g} s, or split the work) [{how.note}]. Output so far:\n"
            + (output or "(no output)")
            + ("" if git_note is None else "\n" + git_note)
        )
        result.data = data
        return result
    lines = [f"{_describe_exit(code)} [{how.note}]", output if output else "(no output)"]
    if git_note is not None:
        lines.append(git_note)
    if stragglers:
        lines.append(
            f"[the command exited but left background processes running; they were ended after {DRAIN_GRACE:g} s "
            "(nothing a command starts outlives it)]"
        )
    return ToolResult(content="\n".join(lines), ok=code == 0, data=data)


async def _exec_run_preview(args: dict[str, Any], ctx: ToolContext):
    """What the person sees before a command runs: the whole command, its folder, the sandbox."""
    from vance_cli.tools.approval import Preview
    from vance_cli.tools.paths import WorkspaceError

    command = str(args.get("command", ""))
    cwd_rel = str(args.get("cwd") or ".")
    fields = [("command", command)]
    try:
        root = tool_root(ctx)
        cwd = resolve_in_workspace(ctx.workspace, cwd_rel)
    except WorkspaceError as exc:
        return Preview(title="run a command", subject=command, fields=[*fields, ("folder", cwd_rel), ("refused", exc.message)])
    fields.append(("folder", str(cwd)))
    try:
        how = await plan(ctx, root, cwd)
    except SandboxUnavailable as exc:
        fields.append(("sandbox", f"required but unavailable ({exc}): the tool will refuse to run it"))
        return Preview(title="run a command", subject=command, fields=fields, sandboxed=True)
    if how.sandboxed:
        fields.append(("sandbox", how.note.removeprefix("sandbox: ")))
    else:
        fields.append(("sandbox", "NONE: " + how.note.replace("the command ran", "the command runs")))
    if args.get("timeout"):
        fields.append(("timeout", f"{float(args['timeout']):g} s"))
    return Preview(title="run a command", subject=command, fields=fields, sandboxed=how.sandboxed)


def make_tool() -> Tool:
    return Tool(
        name="exec_run",
        description=(
            "Run a shell command (bash -c) in the workspace and return its exit code and combined "
            f"stdout+stderr (capped at {MAX_OUTPUT_CHARS:,} characters: the start and the end are kept). "
            f"stdin is empty; the command is killed after `timeout` seconds (default {DEFAULT_TIMEOUT:g}). "
            "In the sandbox (where available) only the workspace is writable (not its .vance/ or "
            ".git/hooks) and the network is off unless allowed; the result's first line says which "
            "mode ran. API keys are not in its environment."
        ),
        parameters=EXEC_RUN_PARAMETERS,
        run=guarded("exec_run", _exec_run),
        side_effects=True,
        preview=_exec_run_preview,
    )
