"""The delegation manual for orchestrators (spec benjy-engine §7: benjy-delegation.md) ships and stays true."""

from __future__ import annotations

import fnmatch
import inspect
import re

from vance_cli.config.scopes import bundled_dir
from vance_cli.tools.process_tools import SPAWN_PARAMETERS


def _manual() -> str:
    return (bundled_dir("recipes") / "benjy-delegation.md").read_text(encoding="utf-8")


def test_the_manual_ships_with_the_bundled_recipes():
    from tests.config.test_packaging import CONFIG

    patterns = CONFIG["package-data"]["vance_cli._bundled.recipes"]
    assert any(fnmatch.fnmatch("benjy-delegation.md", p) for p in patterns)
    assert _manual().startswith("# Delegating to Benjy")


def test_the_manual_names_what_exists():
    from vance_cli.cli.benjy_cmd import EXIT_BLOCKED, EXIT_INTERRUPTED, run_cmd
    from vance_cli.names import MODEL_ALIASES

    text = _manual()
    for recipe in ("benjy-coding", "benjy-research", "benjy-batch", "coding"):
        assert (bundled_dir("recipes") / f"{recipe}.yaml").is_file() and f"`{recipe}`" in text
    assert set(SPAWN_PARAMETERS["properties"]) <= {"goal", "recipe", "check"} and "`check` of `process_spawn`" in text
    flags = set(re.findall(r"`(--[a-z-]+)", text))
    options = {o for p in inspect.signature(run_cmd).parameters.values() for o in (getattr(p.default, "param_decls", None) or ())}
    assert flags and flags <= options, flags - options
    assert f"(exit {EXIT_BLOCKED})" in text and f"**{EXIT_INTERRUPTED}**" in text
    for alias in MODEL_ALIASES:
        assert f"`{alias}`" in text


def test_the_manual_is_not_taken_for_a_recipe():
    from vance_cli.config.recipes import list_recipes
    from vance_cli.config.scopes import Scopes

    names = [r.name for r in list_recipes(Scopes.discover())]
    assert "benjy-delegation" not in names and "benjy-coding" in names
