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
    from vance_cli.tools.registry import builtin_registry

    assert builtin_registry().names() == list(names.KNOWN_TOOLS)


def test_the_table_is_data_only():
    source = inspect.getsource(names)
    assert "import vance_cli" not in source and "from vance_cli" not in source
    assert all(isinstance(v, str) for v in names.ENGINES.values())
    assert dict(names.DEFAULT_RETRIES) == {"attempts": 4, "base_delay": 0.5, "max_delay": 4.0, "max_total": 180.0}
    assert names.DEFAULT_MODEL_TIMEOUT == 120.0


def _package_files():
    from pathlib import Path

    package = Path(names.__file__).parent
    return [p for p in sorted(package.rglob("*.py")) if p != Path(names.__file__)]


def test_no_other_module_defines_or_spells_a_name_of_the_table():
    # The table is only worth having if it is the one place: a constant defined again elsewhere
    # (KNOWN_ENGINES, TRANSPORTS, SANDBOX_MODES, DEFAULT_RETRIES ... were, two or three times), or
    # its value spelled out ("demo:" in doctor.py, "default:" in config/recipes.py), drifts.
    import ast

    table = {k: v for k, v in vars(names).items() if k.isupper() and not k.startswith("_")}
    scalars = {v: k for k, v in table.items() if isinstance(v, str)}
    sequences = {tuple(v): k for k, v in table.items() if isinstance(v, tuple)}
    found = []
    for path in _package_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # A typing.Literal needs its values spelled out: ChatRequest.purpose is checked equal instead.
        literals = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript) and getattr(n.value, "id", None) == "Literal"}
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            found += [f"{path}:{node.lineno} defines {t.id}" for t in targets if isinstance(t, ast.Name) and t.id in table]
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in scalars:
                found.append(f"{path}:{node.lineno} spells {scalars[node.value]} ({node.value!r})")
            if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
                try:
                    value = tuple(ast.literal_eval(node))
                    name = sequences.get(value)
                except (ValueError, TypeError, SyntaxError):
                    continue
                if name is not None and id(node) not in literals:
                    found.append(f"{path}:{node.lineno} spells {name} {value}")
    assert found == [], "use vance_cli.names instead:\n" + "\n".join(found)


def test_the_call_type_literal_is_the_tables():
    from typing import get_args

    from vance_cli.llm.base import ChatRequest

    (literal, _none) = get_args(ChatRequest.model_fields["purpose"].annotation)
    assert get_args(literal) == names.CALL_TYPES
