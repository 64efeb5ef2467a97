"""Helpers the whole suite shares: the CLI in-process (``run_cli``) or in a subprocess (``vance``),
scripted replies (``respond``, ``write_script``) and JSON lines.

``run_cli`` runs a command the way the console script does (``vance_cli.entry.main`` with
``sys.argv`` set) inside the test process, so a test pays for the command and not for starting
Python and importing typer, pydantic and the rest again (about 0.5 s of every subprocess here, more
with litellm). What the tests check of a run is kept as a subprocess gives it: the exit code, the
text on stdout and stderr (decoded like ``subprocess.run(text=True)``, ``\\r`` turned into ``\\n``),
files written; stdin and stdout are files, not terminals (``isatty()`` is False, ``fileno()`` works),
with the encoding and error handlers Python gives a child; ``NO_COLOR`` and ``VANCE_DEBUG`` come
from the environment as in a child; a typer usage error exits 2; an exception that escapes the
entry prints its traceback and exits 1, as the interpreter would.

The process-global state a run can leave behind is put back in one place (``_Isolated``): the
environment, the working directory, ``sys.argv`` and the three standard streams, the handlers of
SIGINT, SIGTERM and SIGHUP (asyncio installs and removes its own), the cyclic garbage collector and
the timer ``entry.py`` starts to turn it back on, the commands registered on the Typer app (a fresh
process registers only the command it runs), logging handlers that kept a captured stream (litellm
makes a ``StreamHandler()`` on ``sys.stderr`` when first imported: it is pointed at whatever
``sys.stderr`` is at the time of each record, as it would be in a child), and threads the run left
running (non-daemon ones are joined, as the interpreter does at exit). pydantic's real plugin loader
is imported before the first run, so ``entry.py``'s stand-in never replaces it for the rest of the
suite (the stand-in itself is tested in a subprocess: tests/llm/test_lean_imports.py).

Use ``vance`` (a real subprocess) instead, and keep it, for what only a process shows:

- start-up: what a command imports (litellm, textual), the garbage-collector pause, the console
  script (tests/cli/test_cli_misc.py, test_entry.py): the test process has imported everything;
- signals: SIGINT/SIGTERM/SIGHUP sent to a running command (test_cli_interrupt.py, the Ctrl+C
  tests): the signal would hit the test process;
- crashes: ``VANCE_TEST_CRASH_AT`` SIGKILLs the process (test_benjy_crash.py, test_cli_crash.py),
  which ``run_cli`` refuses (``Preloaded`` forks such processes from one that imported vance_cli
  once, when a test needs many of them);
- a pty or a real terminal (tests/tui/): ``run_cli``'s streams are files;
- faults injected at interpreter start (a ``sitecustomize`` on ``PYTHONPATH``,
  test_cli_unwritable_home.py) and a second process holding a lock (test_cli_chat.py).

``run_cli`` must be called from the main thread (signal handlers can only be set there) and is not
re-entrant; a lock makes concurrent callers wait for each other.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import locale
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

CRASH_ENV = "VANCE_TEST_CRASH_AT"  # vance_cli's crashpoints: SIGKILL at a named point


# --------------------------------------------------------------------------- replies and output


def respond(message: str, awaiting: bool | None = None, id: str | None = None) -> dict:
    """A scripted reply that calls the respond tool (``awaiting`` left out when None)."""
    arguments: dict[str, Any] = {"message": message}
    if awaiting is not None:
        arguments["awaiting_user_input"] = awaiting
    call: dict[str, Any] = {"name": "respond", "arguments": arguments}
    if id is not None:
        call["id"] = id
    return {"tool_calls": [call]}


def write_script(path: Path, replies: list) -> str:
    """Write the replies of a ``scripted:`` model to ``path``; returns the model string."""
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# --------------------------------------------------------------------------- the CLI in a subprocess


def subprocess_env(env: dict | None = None) -> dict:
    """The environment of a child Python: this one, with the repository first on PYTHONPATH."""
    full = dict(os.environ)
    full["PYTHONPATH"] = str(REPO) + os.pathsep + full.get("PYTHONPATH", "")
    full.update(env or {})
    return full


def vance(
    *args: str | bytes,
    env: dict | None = None,
    input: str | bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
    text: bool = True,
) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess (``python -m vance_cli``), the way a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "vance_cli", *args],
        capture_output=True,
        text=text,
        env=subprocess_env(env),
        input=input,
        cwd=cwd,
        timeout=timeout,
    )


# --------------------------------------------------------------------------- the CLI in-process

_lock = threading.Lock()
_prepared = False


def _prepare_once() -> None:
    """What the first in-process run needs, once per test process (see the module docstring)."""
    global _prepared
    if _prepared:
        return
    import pydantic.plugin._loader  # noqa: F401  (the real one, before entry.py could put its stand-in)

    _prepared = True


class _CurrentStream(io.TextIOBase):
    """Writes to whatever ``sys.stdout``/``sys.stderr`` is when it is written to (see _Isolated)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def write(self, text: str) -> int:
        return getattr(sys, self._name).write(text)

    def flush(self) -> None:
        getattr(sys, self._name).flush()


_CURRENT = {"stdout": _CurrentStream("stdout"), "stderr": _CurrentStream("stderr")}
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _child_stream_policy() -> tuple[str, str, str, str]:
    """(encoding, stdin errors, stdout errors, stderr errors) of a child's standard streams.

    Python picks them from the locale when it starts (surrogateescape under a C or UTF-8 locale,
    backslashreplace for stderr); this process started the same way, so its originals tell.
    """
    encoding = getattr(sys.__stdout__, "encoding", None) or "utf-8"
    return (
        encoding,
        getattr(sys.__stdin__, "errors", None) or "surrogateescape",
        getattr(sys.__stdout__, "errors", None) or "surrogateescape",
        getattr(sys.__stderr__, "errors", None) or "backslashreplace",
    )


class _Isolated:
    """Set up one in-process run and put back everything it may change (the module docstring)."""

    def __init__(self, argv: list[str], env: dict | None, input: bytes, cwd: Path | None) -> None:
        self.argv, self.env, self.input, self.cwd = argv, env, input, cwd
        self.raw: dict[str, Any] = {}

    def __enter__(self) -> _Isolated:
        self.saved_environ = dict(os.environ)
        self.saved_cwd = os.getcwd()
        self.saved_argv = sys.argv
        self.saved_streams = (sys.stdin, sys.stdout, sys.stderr)
        self.saved_signals = {s: signal.getsignal(s) for s in _SIGNALS}
        self.gc_was_enabled = gc.isenabled()
        self.threads_before = set(threading.enumerate())

        os.environ.update(subprocess_env(self.env))
        if self.cwd is not None:
            os.chdir(self.cwd)
        sys.argv = ["vance", *self.argv]
        encoding, in_errors, out_errors, err_errors = _child_stream_policy()
        stdin = tempfile.TemporaryFile()
        stdin.write(self.input)
        stdin.seek(0)
        for name in ("stdout", "stderr"):
            self.raw[name] = tempfile.TemporaryFile()
        sys.stdin = io.TextIOWrapper(stdin, encoding=encoding, errors=in_errors)
        sys.stdout = io.TextIOWrapper(self.raw["stdout"], encoding=encoding, errors=out_errors)
        sys.stderr = io.TextIOWrapper(self.raw["stderr"], encoding=encoding, errors=err_errors, line_buffering=True)
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        _reset_cli_app()
        return self

    def __exit__(self, *exc: object) -> None:
        self._join_threads()
        for stream in self.streams[1:]:
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        self.output = {}
        for name in ("stdout", "stderr"):
            raw = self.raw[name]
            raw.seek(0)
            self.output[name] = raw.read()
        _repoint_log_handlers(self.streams[1:])
        sys.stdin, sys.stdout, sys.stderr = self.saved_streams
        for stream in self.streams:
            with contextlib.suppress(ValueError, OSError):
                stream.close()
        sys.argv = self.saved_argv
        os.chdir(self.saved_cwd)
        os.environ.clear()
        os.environ.update(self.saved_environ)
        for signum, handler in self.saved_signals.items():
            if handler is not None:  # None: set from outside Python, cannot be put back
                signal.signal(signum, handler)
        _stop_gc_timers()
        if self.gc_was_enabled:
            gc.enable()
        _reset_cli_app()

    def _join_threads(self) -> None:
        """Wait for the run's non-daemon threads, as the interpreter does before a child exits."""
        for thread in set(threading.enumerate()) - self.threads_before:
            if not thread.daemon and thread is not threading.current_thread():
                thread.join(30)


def _reset_cli_app() -> None:
    """The Typer app as a fresh process has it: no command registered yet (cli/main.py COMMANDS)."""
    main = sys.modules.get("vance_cli.cli.main")
    if main is None:
        return
    main._registered.clear()
    main.app.registered_commands.clear()
    main.app.registered_groups.clear()


def _stop_gc_timers() -> None:
    """Cancel the timer entry.py starts to turn the collector back on (the caller restores gc)."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer) and thread.function is gc.enable:
            thread.cancel()


def _repoint_log_handlers(captured: tuple[Any, ...]) -> None:
    """A logging handler made during the run on a captured stream writes to the current one instead."""
    loggers = [
        logging.getLogger(),
        *(v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger)),
    ]
    for logger in loggers:
        for handler in logger.handlers:
            stream = getattr(handler, "stream", None)
            if stream is not None and any(stream is c for c in captured):
                handler.stream = _CURRENT["stdout" if stream is captured[0] else "stderr"]


def _decode(data: bytes) -> str:
    """What ``subprocess.run(text=True)`` makes of a child's output: locale encoding, universal newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _exit_code(exc: SystemExit) -> int:
    """The exit status the interpreter gives ``SystemExit(code)``, printing a message code as it does."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    print(code, file=sys.stderr)
    return 1


def run_cli(
    *args: str | bytes,
    env: dict | None = None,
    input: str | bytes | None = None,
    cwd: Path | None = None,
    text: bool = True,
) -> subprocess.CompletedProcess:
    """Run ``vance *args`` in this process through the console script's entry; like ``vance(...)``.

    Returns a ``subprocess.CompletedProcess`` (``returncode``, ``stdout``, ``stderr``; bytes when
    ``text`` is False). Bytes in ``args`` become ``sys.argv`` the way Python decodes a child's argv
    (``os.fsdecode``). See the module docstring for what it isolates and when to use ``vance``.
    """
    if env and CRASH_ENV in env:
        raise ValueError(f"{CRASH_ENV} kills the process it is set in: run a crash test with vance(), a subprocess")
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_cli sets signal handlers, which only the main thread can: call it from there")
    argv = [os.fsdecode(a) if isinstance(a, bytes) else a for a in args]
    data = input if isinstance(input, bytes) else (input or "").encode(locale.getpreferredencoding(False))
    with _lock:
        _prepare_once()
        from vance_cli import entry

        with _Isolated(argv, env, data, cwd) as run:
            try:
                entry.main()
                code = 0
            except SystemExit as exc:
                code = _exit_code(exc)
            except KeyboardInterrupt:
                traceback.print_exc()
                code = -signal.SIGINT  # an uncaught Ctrl+C ends Python by the signal
            except BaseException:  # what escapes the entry: the interpreter prints it and exits 1
                traceback.print_exc()
                code = 1
    out, err = run.output["stdout"], run.output["stderr"]
    if text:
        return subprocess.CompletedProcess(["vance", *argv], code, _decode(out), _decode(err))
    return subprocess.CompletedProcess(["vance", *argv], code, out, err)


# --------------------------------------------------------------------------- processes forked preloaded

# vance_cli modules that read the environment when imported (a test checks this list: tests/cli/
# test_helpers.py). A forked child reloads them after its environment is set, as a fresh process
# would read it.
ENV_AT_IMPORT = ("vance_cli.crashpoints", "vance_cli.runtime.crashpoints")

_FORK_SERVER = r"""
import importlib, json, os, pkgutil, sys
import vance_cli
from vance_cli import entry

for info in pkgutil.walk_packages(vance_cli.__path__, "vance_cli."):
    if not info.name.startswith(("vance_cli.tui", "vance_cli.__main__")):
        importlib.import_module(info.name)  # a child forked from here imports nothing of vance_cli again
ENV_AT_IMPORT = sys.argv[1:]
print("ready", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid:
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)
        continue
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, (path, flags) in enumerate([(os.devnull, os.O_RDONLY), (request["stdout"], os.O_WRONLY), (request["stderr"], os.O_WRONLY)]):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    for name in ENV_AT_IMPORT:
        if name in sys.modules:
            importlib.reload(sys.modules[name])
    sys.argv = ["vance", *request["argv"]]
    entry.main()  # SystemExit or an exception leaves the loop: the child exits as a vance process does
    break
"""


class Preloaded:
    """``vance`` processes forked from one Python that has imported vance_cli (except tui/) already.

    For tests that need many real processes a signal can kill, e.g. SIGKILL at a crash point: each
    costs what its command does, not Python's start-up and the imports (about 1 s a process here).
    A child is a fresh process in all that a test can see: its own environment (``env`` on top of
    this process's environment when ``Preloaded`` was made), working folder, stdin from /dev/null,
    stdout and stderr captured, modules that read the environment when imported reloaded
    (``ENV_AT_IMPORT``), and it exits like ``python -m vance_cli``. ``run`` may be called from any
    thread; runs are one at a time.
    """

    def __init__(self) -> None:
        self._base_env = subprocess_env()
        self._lock = threading.Lock()
        self._server = subprocess.Popen(
            [sys.executable, "-c", _FORK_SERVER, *ENV_AT_IMPORT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=self._base_env,
        )
        ready = self._server.stdout.readline()
        if ready != "ready\n":
            self.close()
            raise RuntimeError(f"the fork server did not start: {ready!r}")

    def run(self, *args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        with self._lock, tempfile.TemporaryDirectory() as folder:
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            out.touch()
            err.touch()
            request = {
                "argv": list(args),
                "env": {**self._base_env, **(env or {})},
                "cwd": str(cwd or os.getcwd()),
                "stdout": str(out),
                "stderr": str(err),
            }
            self._server.stdin.write(json.dumps(request) + "\n")
            self._server.stdin.flush()
            code = int(self._server.stdout.readline())
            return subprocess.CompletedProcess(
                ["vance", *args], code, _decode(out.read_bytes()), _decode(err.read_bytes())
            )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._server.stdin.close()
        try:
            self._server.wait(30)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait()

    def __enter__(self) -> Preloaded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
