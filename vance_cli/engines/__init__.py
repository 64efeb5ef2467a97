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
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from vance_cli.names import ENGINES, KNOWN_ENGINES

if TYPE_CHECKING:
    from vance_cli.store.process import Process

__all__ = ["KNOWN_ENGINES", "awaits_workers", "engine_class", "has_work", "validate_recipe", "waiting_on"]


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
    # ford / arthur: an open turn (a crash or Ctrl+C mid-turn) is finished on the next drive
    return bool((process.engine_params.get("turn") or {}).get("open"))


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


def validate_recipe(recipe: Any, scopes: Any) -> None:
    """Engine-specific checks of a recipe beyond its schema (fail-fast; raises RecipeError)."""
    if recipe.engine == "benjy":
        from vance_cli.engines.benjy.config import validate_benjy_recipe

        validate_benjy_recipe(recipe, scopes)
