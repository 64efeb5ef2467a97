"""What the suite imports is declared: a fresh `pip install ".[test]"` (the README's, CI's) has it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Not installed packages: modules of bench/realmodel put on sys.path by the test that uses them,
# and tests/structure/corpus/gather.py, a maintainer's script (openai, from the bench extra).
LOCAL = {"cases", "eval", "tests", "vance_cli"}
SCRIPTS = {REPO / "tests" / "structure" / "corpus" / "gather.py"}


def _requirement_names(specs: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in specs}


def _imported_modules() -> dict[str, str]:
    """Top-level module -> a test file importing it, also inside the Python a test runs in a child
    (an ``import x`` line in a string constant)."""
    found: dict[str, str] = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path in SCRIPTS:
            continue
        names: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.append(node.module)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "import " in node.value:
                names += re.findall(r"^\s*(?:import|from)\s+([A-Za-z_][\w.]*)", node.value, flags=re.M)
        for name in names:
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top not in LOCAL:
                found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_package_the_tests_import_is_declared_for_them():
    # Found by review of issue 14: tests/llm/test_lean_imports.py imports h2, which no requirement
    # named; it was there only because another package happened to bring it.
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = _requirement_names(project["dependencies"] + project["optional-dependencies"]["test"])
    distributions = packages_distributions()
    imported = _imported_modules()
    assert "h2" in imported and "pytest" in imported
    # A name no installed distribution provides is a fixture's module (`from fizzbuzz import`) or
    # prose in a string; a test importing it would fail here anyway.
    missing = {
        module: where
        for module, where in imported.items()
        if module in distributions and not {d.lower().replace("_", "-") for d in distributions[module]} & declared
    }
    assert missing == {}, f"declare these in pyproject.toml (dependencies or the test extra): {missing}"
