"""The names table (vance_cli/names.py) against the modules it names: every entry loads, none is missing."""

from __future__ import annotations

import importlib
import inspect

from vance_cli import names


def _load(target: str):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def test_every_engine_name_loads_the_engine_of_that_name():
    for name, target in names.ENGINES.items():
        engine = _load(target)
        assert inspect.isclass(engine)
        assert engine.name == name
    assert names.KNOWN_ENGINES == ("ford", "arthur", "benjy")


def test_every_tool_name_builds_the_tool_of_that_name():
    for name, target in names.TOOLS.items():
        assert _load(target)().name == name
    assert list(names.KNOWN_TOOLS) == sorted(names.TOOLS)


def test_the_registry_offers_exactly_the_named_tools():
    from vance_cli.tools.base import builtin_registry

    assert builtin_registry().names() == list(names.KNOWN_TOOLS)


def test_the_table_is_data_only():
    source = inspect.getsource(names)
    assert "import vance_cli" not in source and "from vance_cli" not in source
    assert all(isinstance(v, str) for v in names.ENGINES.values())
    assert dict(names.DEFAULT_RETRIES) == {"attempts": 4, "base_delay": 0.5, "max_delay": 4.0, "max_total": 180.0}
    assert names.DEFAULT_MODEL_TIMEOUT == 120.0
