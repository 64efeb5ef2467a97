"""Engines and their one registry: ford (tool loop + respond), arthur (chat hub), benjy (queue engine).

Adding an engine is a line in ``vance_cli.names.ENGINES`` (its name and its class) plus its
module; the questions below need a line here only when the engine answers them from its own state.
Engine modules are imported on first use, so recipe validation and `vance ps` never pay for them.

What the local scheduler (vance_cli.runtime.scheduler) asks of an engine, answered here from the
process file alone:

- ``has_work(process)``: would a run of the engine do something now (an inbox to drain, an open
  turn, a queue to pop)?
- ``waiting_on(process)``: the id of the child process it waits for (IDLE), or None.
- ``awaits_workers(process)``: whether that record is the engine's own proof of delivery.
- ``pending_question(process)``: the question it waits on a person's answer to, or None.

And what a worker of an engine starts with (``worker_params``), for the delegation tools.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from vance_cli.names import ENGINES, KNOWN_ENGINES

if TYPE_CHECKING:
    from vance_cli.store.process import Process

__all__ = [
    "KNOWN_ENGINES",
    "ask_again",
    "awaiting_approval",
    "awaits_workers",
    "engine_class",
    "has_work",
    "params_problem",
    "pending_question",
    "validate_recipe",
    "waiting_on",
    "worker_params",
]
WORKER_ENGINES = ("benjy", "ford")


def engine_class(name: str) -> Any:
    """The engine class for ``name``; KeyError for an engine this vance does not know."""
    module, _, attr = ENGINES[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def has_work(process: Process) -> bool:
    """True when driving ``process`` now would do something."""
    if process.status.value == "DONE":
        return False
    if process.inbox:
        return True
    if process.engine == "benjy":
        from vance_cli.engines.benjy.state import has_work as benjy_has_work

        return benjy_has_work(process)
    # ford / arthur: an open turn (a crash or Ctrl+C mid-turn) is finished on the next drive;
    # one paused on an approval nobody gave waits for the person (ask_again), not for the scheduler
    from vance_cli.engines.base import turn_open, turn_state  # the contract (pydantic): on use only

    return turn_open(process) and not turn_state(process).get("awaiting_approval")


def params_problem(process: Process) -> str | None:
    """Why the engine cannot use what ``process`` saved for it (its engine_params, the chat's
    summary marker), in one line; None when it can (runtime/checks.py asks before a run)."""
    if process.engine == "benjy":
        from vance_cli.engines.benjy.state import params_problem as benjy_problem

        return benjy_problem(process)
    from vance_cli.engines.base import turn_problem
    from vance_cli.engines.compact import summary_problem

    return turn_problem(process) or summary_problem(process.history)


def awaiting_approval(process: Process) -> str | None:
    """The tool whose call waits for the person's approval (the turn paused, kept open), or None."""
    from vance_cli.engines.base import turn_state

    return turn_state(process).get("awaiting_approval") or None


def ask_again(process: Process) -> bool:
    """The person drives ``process`` again (resume, a message): a paused approval is asked again."""
    from vance_cli.engines.base import turn_state

    turn = turn_state(process)  # the saved dict itself, so the change below is saved with it
    if turn.get("awaiting_approval"):
        turn["awaiting_approval"] = None
        return True
    return False


def waiting_on(process: Process) -> str | None:
    """The child process id ``process`` waits for, or None."""
    if process.engine == "benjy":
        from vance_cli.engines.benjy.state import waiting_on as benjy_waiting_on

        return benjy_waiting_on(process)
    return None


def awaits_workers(process: Process) -> bool:
    """True when the engine records the one worker it waits on (``waiting_on``) in its own state,
    and stops waiting in the same save that takes the worker's reply in (Benjy)."""
    return process.engine == "benjy"


def pending_question(process: Process) -> str | None:
    """The question ``process`` waits on a person's answer to, as its engine records it (Benjy)."""
    if process.engine == "benjy":
        from vance_cli.engines.benjy.state import pending_question as benjy_question

        return benjy_question(process)
    return None


def worker_params(recipe: Any, scopes: Any, *, check: str | None = None, name: str | None = None) -> dict[str, Any]:
    """The engine params a worker of ``recipe`` starts with (raises VanceError when it cannot be one).

    A worker is a Benjy run (its recipe's config checked now, its check command ``check``) or a
    Ford worker (no check). ``name``: the recipe as the caller named it (for the message).
    """
    from vance_cli.errors import VanceError

    if recipe.engine not in WORKER_ENGINES:
        raise VanceError(
            f"recipe {name or recipe.name!r} runs the {recipe.engine} engine; a worker needs a Benjy or a Ford recipe "
            "(e.g. benjy-coding, coding)"
        )
    if recipe.engine == "benjy":
        from vance_cli.engines.benjy.config import resolve
        from vance_cli.engines.benjy.state import OPTIONS_KEY

        resolve(recipe, scopes)
        return {OPTIONS_KEY: {"check": check, "allowExec": False, "criteriaFiles": [], "model": None}}
    if check:
        raise VanceError("check applies to Benjy recipes only; drop it or use benjy-coding")
    return {}


def validate_recipe(recipe: Any, scopes: Any) -> None:
    """Engine-specific checks of a recipe beyond its schema (fail-fast; raises RecipeError)."""
    if recipe.engine == "benjy":
        from vance_cli.engines.benjy.config import validate_benjy_recipe

        validate_benjy_recipe(recipe, scopes)
