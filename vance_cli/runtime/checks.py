"""Whether this vance can run a process file: its engine is known, its embedded recipe valid and
what its engine saved (engine_params) of the shape the engine reads.

A process file can be valid JSON of the right shape and still name an engine this vance does not
have (written by a newer vance, or edited by hand) or carry a recipe snapshot that no longer
validates. ``vance ps`` warns about such a file and lists the rest; ``--resume`` explains instead
of failing with a raw KeyError or ValidationError.
"""

from __future__ import annotations

from typing import Any

from vance_cli.names import KNOWN_ENGINES
from vance_cli.store.process import Process


def unrunnable_reason(process: Process) -> str | None:
    """Why the runtime cannot drive ``process`` (one line), or None when it can."""
    if problem := engine_problem(process.engine) or recipe_problem(process.recipe):
        return problem
    from vance_cli.engines import params_problem

    return params_problem(process)


def engine_problem(engine: str) -> str | None:
    """Why this vance cannot run a process of ``engine``, or None."""
    if engine not in KNOWN_ENGINES:
        return f"its engine {engine!r} is unknown to this vance (known: {', '.join(KNOWN_ENGINES)})"
    return None


def recipe_problem(recipe: dict[str, Any]) -> str | None:
    """Why a process's embedded recipe snapshot does not validate, or None (a listing checks each
    distinct snapshot once: store/listing.py)."""
    from pydantic import ValidationError

    from vance_cli.config.recipes import Recipe, describe_validation_error

    try:
        Recipe.model_validate(recipe)
    except ValidationError as exc:
        return f"its embedded recipe is invalid: {describe_validation_error(exc)}"
    return None
