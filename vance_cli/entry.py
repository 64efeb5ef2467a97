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
stdout and stderr are flushed (a closed stdout ends with 120, as Python ends). Where a thread that
is not a daemon is still alive, the interpreter exits as usual, waiting for it.
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
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    end(code)


def end(code: object) -> None:
    """Exit with ``code`` (as ``sys.exit`` takes it) without the interpreter's teardown; see the
    module's docstring. Raises SystemExit instead where the teardown must run."""
    import os
    import sys
    import threading

    main_thread = threading.main_thread()
    waiting = any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main_thread)
    if waiting or not (code is None or isinstance(code, int)):
        raise SystemExit(code)  # a thread to wait for, or a message to print: the usual way
    import atexit

    atexit._run_exitfuncs()  # as the interpreter would (each failure is printed, the rest still run)
    status = code or 0
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            if stream is sys.stdout and status == 0:
                status = 120  # what Python exits with when stdout cannot be flushed at the end
    os._exit(status & 0xFF)
