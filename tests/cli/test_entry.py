"""The console script's entry: the cyclic garbage collector is paused while a command starts, then
back; the process ends without the interpreter's teardown once the command is done, having run
what ``atexit`` holds and flushed its output."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

from tests.cli.helpers import REPO
from tests.helpers import run_cli

PROBE = """
import gc, time
import vance_cli.cli.main as cli
from vance_cli import entry

entry.STARTUP_SECONDS = 0.2

def command():
    print(gc.isenabled())
    deadline = time.monotonic() + 30
    while not gc.isenabled() and time.monotonic() < deadline:
        time.sleep(0.05)
    print(gc.isenabled())

cli.run = command
entry.main()
"""


def test_the_collector_is_paused_for_the_start_up_and_turned_back_on():
    r = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]


def test_the_console_script_and_python_m_both_go_through_the_entry():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["vance"] == "vance_cli.entry:script"
    assert "from vance_cli.entry import script" in (REPO / "vance_cli" / "__main__.py").read_text()


def test_a_quick_command_exits_at_once_despite_the_timer(vance_home):
    import time

    probe = (
        "import sys\nfrom vance_cli import entry\nentry.STARTUP_SECONDS = 120\n"
        "sys.argv = ['vance', '--version']\nentry.main()\n"
    )
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=100,
    )
    assert r.returncode == 0 and r.stdout.startswith("vance ")
    assert time.monotonic() - t0 < 60  # the timer thread is a daemon: nothing waits out its 120 s


# A module imported at start-up (sitecustomize) whose object says when the interpreter's teardown
# frees it, what ``atexit`` runs, and (with THREAD=1) a thread that is not a daemon, still working
# when the command ends.
SITE = """
import atexit, os, threading, time
MARKS = os.environ["MARKS"]

def mark(name):
    with open(os.path.join(MARKS, name), "w"):
        pass

class Freed:
    def __del__(self, _open=open, _where=os.path.join(MARKS, "torn-down")):  # builtins may be gone by then
        with _open(_where, "w"):
            pass

kept = Freed()
atexit.register(mark, "atexit")
if os.environ.get("THREAD") == "1":
    def late():  # long after the command's end (a quick one ends in ~0.3 s), so it is waited for
        time.sleep(3)
        mark("thread")
    threading.Thread(target=late).start()
"""


def _vance(tmp_path, *args, thread=False, **kw):
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITE)
    marks = tmp_path / "marks"
    marks.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]), "MARKS": str(marks),
           "THREAD": "1" if thread else "0"}
    r = subprocess.run([sys.executable, "-m", "vance_cli", *args], capture_output=True, timeout=120, env=env, **kw)
    return r, sorted(p.name for p in marks.iterdir())


def test_the_process_ends_without_the_teardown_after_atexit_and_with_all_its_output(tmp_path, vance_home):
    r, marks = _vance(tmp_path, "recipes", "list", "--json")
    assert r.returncode == 0, r.stderr
    assert marks == ["atexit"]  # atexit ran; the module's object was never freed one by one
    assert r.stdout.decode().rstrip().endswith(("]", "}"))
    for args in (["show", "no-such-process"], ["--no-such-flag"], ["structure", "--schema", str(tmp_path / "missing.json"), "x"]):
        ended, _ = _vance(tmp_path, *args)
        inside = run_cli(*args)  # the same command in this process: never through end()
        assert (ended.returncode, ended.stderr.decode()) == (inside.returncode, inside.stderr), args
        assert ended.returncode != 0


def _buffered(tmp_path, *args, **kw):
    """``python -m vance_cli ARGS`` with stdout block-buffered (CI exports PYTHONUNBUFFERED=1)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED" and not k.startswith("VANCE_")}
    env.update(PYTHONPATH=str(REPO), VANCE_HOME=str(tmp_path / "home"))
    return subprocess.run([sys.executable, "-m", "vance_cli", *args], timeout=120, env=env, cwd=tmp_path, **kw)


def test_output_waiting_in_a_buffer_arrives_whole(tmp_path):
    buffered = _buffered(tmp_path, "recipes", "list", capture_output=True, text=True)
    inside = run_cli("recipes", "list")
    assert buffered.returncode == 0 and buffered.stdout.strip(), buffered.stderr
    assert buffered.stdout == inside.stdout


def test_a_stdout_that_cannot_be_written_ends_with_120_and_says_why(tmp_path):
    with open("/dev/full", "w") as full:
        r = _buffered(tmp_path, "recipes", "list", stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 120
    assert "No space left on device" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_tools_that_act_after_the_program_still_can(tmp_path):
    """Review: os._exit ended cProfile's run before it wrote its file, and `python -i` never
    opened its prompt; a profiler, tracer (coverage), debugger or -i gets the usual exit."""
    out = tmp_path / "vance.prof"
    r = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "vance_cli", "--version"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(REPO), "VANCE_HOME": str(tmp_path / "home")})
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 0
    r = subprocess.run([sys.executable, "-i", "-m", "vance_cli", "--version"], input='print("IN THE REPL")\n',
                       capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(REPO), "VANCE_HOME": str(tmp_path / "home")})
    assert "IN THE REPL" in r.stdout + r.stderr


def test_the_script_called_in_process_returns_to_its_caller(tmp_path):
    """A program that calls the console script's function (pytest-console-scripts does, in process)
    gets SystemExit back, as from ``main``: the process is not ended under it."""
    host = (
        "import sys\nfrom vance_cli import entry\n"
        "def run(argv):\n    sys.argv = ['vance', *argv]\n"
        "    try:\n        entry.script()\n    except SystemExit as exc:\n        return exc.code\n"
        "print('caught', run(['--version']))\nprint('STILL HERE')\n"
    )
    r = subprocess.run([sys.executable, "-c", host], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(REPO), "VANCE_HOME": str(tmp_path / "home")})
    assert "caught 0" in r.stdout and "STILL HERE" in r.stdout, (r.returncode, r.stdout, r.stderr)


def test_a_thread_still_working_is_waited_for_as_the_interpreter_does(tmp_path, vance_home):
    r, marks = _vance(tmp_path, "--version", thread=True)
    assert r.returncode == 0, r.stderr
    assert "thread" in marks and "atexit" in marks


def test_a_stdout_that_cannot_be_flushed_ends_with_120(tmp_path):
    probe = (
        "import os, sys\n"
        "from vance_cli import entry\n"
        "r, w = os.pipe()\n"
        "os.close(r)\n"
        "os.dup2(w, 1)\n"
        "sys.stdout.write('x' * 10)\n"
        "entry.end(0)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the text waits in the buffer
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60, env={**env, "PYTHONPATH": str(REPO)})
    assert r.returncode == 120, r.stderr
    assert b"Traceback" not in r.stderr
