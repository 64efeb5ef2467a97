"""Configuration: scopes (where things live), the settings cascade and recipes.

Import the submodules directly (``vance_cli.config.settings``, ``vance_cli.config.recipes``);
this package re-exports only the cheap scope helpers so CLI start-up stays fast.
"""

from __future__ import annotations

from vance_cli.config.scopes import Scopes, bundled_dir

__all__ = ["Scopes", "bundled_dir"]
