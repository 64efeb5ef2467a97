"""Kept for imports not yet moved: everything here lives in tests/helpers.py."""

from __future__ import annotations

from tests.helpers import REPO, json_lines, run_cli, vance, write_script

__all__ = ["REPO", "json_lines", "run_cli", "vance", "write_script"]
