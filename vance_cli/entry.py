"""The `vance` console script and `python -m vance_cli`: the CLI with a cheaper start-up.

Python's cyclic garbage collector runs every 700 new container objects; importing typer, pydantic
and httpx and building pydantic's models creates tens of thousands that all live on, so a one-shot
turn (`vance chat -p hi`) spent about 12 ms in some 90 collections that found almost nothing
(bench/bench_startup.py). It is paused while a command starts, and turned back on by a timer after
``STARTUP_SECONDS`` whatever the command is doing, so a long run (the console, a Benjy run) is
collected as usual; reference counting frees everything else meanwhile, as always. The process
also builds its pydantic models without looking for pydantic plugins (llm/lean_imports.py).
Both are for the CLI process only: code that imports vance_cli as a library gets neither.

When the command is done, the console script (``script``) ends the process without the
interpreter's teardown, which takes ~0.85 s of CPU once litellm is imported (its thousands of
modules, classes and functions freed one by one: `python -c "import litellm"` 3.4-3.7 s against
2.6 s with ``os._exit``), the time between the last line of a `vance chat -p` or `vance structure`
on a hosted model and the shell's prompt. What the teardown does that matters is done first: the
functions registered with ``atexit`` (logging's flush, temporary folders, Ray's shutdown) run, and
stdout and stderr are flushed (one that cannot be flushed ends the process with 120, as Python
ends, and a stdout that failed for another reason than a reader gone says why on stderr). The
interpreter exits as usual where a thread that is not a daemon is still alive (it waits for it),
where something acts after the program (``python -i``, a profiler, a tracer such as coverage, a
debugger, ``-X dev``), and where ``script`` is called in-process by another program rather than
being the program.
"""

from __future__ import annotations

STARTUP_SECONDS = 1.0


def main() -> None:
    import gc
    import threading

    if gc.isenabled():
        gc.disable()
        timer = threading.Timer(STARTUP_SECONDS, gc.enable)
        timer.daemon = True  # never keeps the process alive
        timer.start()
    from vance_cli.llm.lean_imports import skip_pydantic_plugins

    skip_pydantic_plugins()  # before the first pydantic model is built (llm/lean_imports.py)
    from vance_cli.cli.main import run

    run()


def script() -> None:
    """The console script and `python -m vance_cli`: ``main``, then the process ends at once."""
    import sys

    caller = sys._getframe(1)
    # Only where the script is the program: its module-level code in __main__ (the console
    # script's wrapper, vance_cli/__main__.py). A host that calls this function in-process
    # (pytest-console-scripts, an embedding program) gets SystemExit, as from ``main``.
    owner = caller.f_code.co_name == "<module>" and caller.f_globals.get("__name__") == "__main__"
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    if not owner:
        raise SystemExit(code)
    end(code)


def _observed() -> bool:
    """Something acts after the program returns, or watches the teardown: python -i, a tracer
    or profiler (coverage run, cProfile, trace, pyinstrument, a debugger), -X dev."""
    import sys

    if sys.flags.inspect or sys.flags.dev_mode or sys.gettrace() is not None or sys.getprofile() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # 3.12+: coverage's sys.monitoring core
    return monitoring is not None and any(monitoring.get_tool(i) is not None for i in range(6))


def end(code: object) -> None:
    """Exit with ``code`` (as ``sys.exit`` takes it) without the interpreter's teardown; see the
    module's docstring. Raises SystemExit instead where the teardown must run."""
    import errno
    import os
    import sys
    import threading

    main_thread = threading.main_thread()
    waiting = any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main_thread)
    if waiting or _observed() or not (code is None or isinstance(code, int)):
        raise SystemExit(code)  # a thread to wait for, a tool to hand back to, a message: the usual way
    import atexit

    atexit._run_exitfuncs()  # as the interpreter would (each failure is printed, the rest still run)
    status = code or 0
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", False):
            continue  # as Python: a closed stream is not flushed
        try:
            stream.flush()
        except Exception as exc:  # noqa: BLE001 - OSError, or whatever a replaced stream raises
            status = 120  # as Python ends when stdout or stderr cannot be flushed
            if stream is sys.stdout and getattr(exc, "errno", None) != errno.EPIPE:
                try:  # a full disk, an I/O error: say so (a reader that went away needs no word)
                    sys.stderr.write(f"vance: cannot write to stdout: {getattr(exc, 'strerror', None) or exc}\n")
                    sys.stderr.flush()
                except Exception:  # noqa: BLE001
                    pass
    os._exit(status & 0xFF)
