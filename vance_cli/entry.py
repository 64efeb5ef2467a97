"""The `vance` console script and `python -m vance_cli`: the CLI with a cheaper start-up.

Python's cyclic garbage collector runs every 700 new container objects; importing typer, pydantic
and httpx and building pydantic's models creates tens of thousands that all live on, so a one-shot
turn (`vance chat -p hi`) spent about 12 ms in some 90 collections that found almost nothing
(bench/bench_startup.py). It is paused while a command starts, and turned back on by a timer after
``STARTUP_SECONDS`` whatever the command is doing, so a long run (the console, a Benjy run) is
collected as usual; reference counting frees everything else meanwhile, as always. The process
also builds its pydantic models without looking for pydantic plugins (llm/lean_imports.py).
Both are for the CLI process only: code that imports vance_cli as a library gets neither.
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
