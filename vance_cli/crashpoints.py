"""Named crash points for the kill-anywhere tests: ``VANCE_TEST_CRASH_AT=<name>:<n>``.

When the variable is set, the n-th time (default 1) the code passes ``crashpoint(name)`` the
process SIGKILLs itself: no ``finally``, no atexit, no flush, exactly what a power cut or
``kill -9`` leaves behind. Unset (always, outside the crash test), ``crashpoint`` is one dict
lookup. The names are listed in ``POINTS`` so the test can check it covers them.
"""

from __future__ import annotations

import os
import signal

ENV = "VANCE_TEST_CRASH_AT"

# Where the runtime, Benjy and the structure batch call crashpoint(); "save.<engine>" fires after every process save.
POINTS = (
    "save.benjy",  # after any save of a Benjy process (each queue transition)
    "save.ford",  # after any save of a Ford worker (each step of its turn)
    "benjy.before_spawn",  # the in-flight worker ref is on disk, its process file is not
    "benjy.after_spawn",  # the worker's file exists, Benjy is not IDLE yet
    "benjy.before_check",  # a CHECK task is about to run its command
    "benjy.after_controller",  # a controller call answered, its transition not yet saved
    "deliver.parent_saved",  # the child's reply is in the parent's inbox, the child is not marked
    "deliver.taken_in",  # Benjy saved its worker's reply as taken in; the worker is not closed yet
    "deliver.child_marked",  # the delivery is complete on both sides
    "batch.ids_saved",  # a batch's process ids are on disk, no workspace or process file yet
    "batch.workspace_ready",  # a batch run's workspace is made, its process file is not
    "batch.answered",  # structure --batch: a record's result line is made, not yet appended to OUT
    "batch.appended",  # structure --batch: the line is appended to OUT (written, maybe not fsynced)
    "store.log_written",  # a new history log is on disk, the process file does not name it yet
    "store.log_appended",  # messages appended to the history log, the process file not saved yet
)

_target: tuple[str, int] | None = None
_hits: dict[str, int] = {}


def _parse(raw: str | None) -> tuple[str, int] | None:
    if not raw:
        return None
    name, _, count = raw.partition(":")
    try:
        return name.strip(), max(1, int(count)) if count else 1
    except ValueError:
        return name.strip(), 1


_target = _parse(os.environ.get(ENV))


def crashpoint(name: str) -> None:
    if _target is None or _target[0] != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] >= _target[1]:
        os.kill(os.getpid(), signal.SIGKILL)
