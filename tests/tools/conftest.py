"""Fixtures shared by the tool tests."""

from pathlib import Path

import pytest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace folder (test_protected_dirs and test_sandbox build their own with .vance/ and .git/)."""
    root = tmp_path / "ws"
    root.mkdir()
    return root
