"""The README's promises that a test can hold it to."""

from __future__ import annotations

import re
from pathlib import Path

from vance_cli.events import _TYPE_NAMES

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_first_screen_has_exactly_the_two_commands():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert first_block == ['pip install . && vance demo', 'pip install ".[test]" && python -m pytest']
    assert README.index("```bash") < README.index("## ")  # before any section: the first screen


def test_ci_runs_the_readme_test_command():
    assert "python -m pytest" in (REPO / ".ci" / "run").read_text()


def test_every_event_type_is_documented():
    for name in _TYPE_NAMES.values():
        assert f"| `{name}`" in README or f"`{name}` /" in README or f"/ `{name}`" in README, name
