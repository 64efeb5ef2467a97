"""The layers hold: every import in vance_cli/ points down a floor or stays on its own, and no files
import each other in a circle.

Every import counts: at the top of a module, inside a function (the lazy imports that keep
start-up fast) and under ``TYPE_CHECKING``. Python never complains about an upward import made
inside a function, which is how the layers drifted before; this test reads them all.

``FLOORS`` is the one place the floor order is written (docs/ARCHITECTURE.md draws it).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "vance_cli"

# Bottom to top. A module may import its own floor and every floor below it, never one above.
# An entry is a module ("errors") or a package ("store", everything under vance_cli/store/).
FLOORS: list[tuple[str, ...]] = [
    ("errors", "events", "text", "names", "messages", "crashpoints", "terminal", "ray_cluster"),  # leaf modules
    ("store",),  # process files, atomic writes, locks, the transcript walk
    ("config",),  # scopes (where), trust (policy), settings, recipes, context
    ("schema",),  # JSON Schema without model knowledge
    ("llm",),  # ChatModel, ModelProfile, transports, scripted models; output/ provider schemas
    ("structure",),  # StructureService, registry, builder
    ("tools",),  # Tool, ToolContext, the built-in tools and their registry
    ("engines",),  # engine contract, ford, arthur, benjy
    ("runtime",),  # runtime, scheduler, the chat session, the Benjy service
    ("output",),  # printers and the process tree, for cli and demo
    ("doctor",),
    ("tui",),  # the Textual console
    ("acp", "mcp_server"),  # the protocol front ends over runtime: `vance acp` (ACP), `vance mcp serve` (MCP)
    ("demo",),
    ("cli",),  # commands only
    ("entry", "__main__"),
]

FLOOR_OF: dict[str, int] = {name: i for i, names in enumerate(FLOORS) for name in names}


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _floor(module: str) -> int | None:
    """The floor of ``vance_cli.<top>...``; None for vance_cli itself and bundled data."""
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "vance_cli" or parts[1].startswith("_"):
        return None if len(parts) < 2 or parts[1] != "__main__" else FLOOR_OF["__main__"]
    return FLOOR_OF.get(parts[1], -1)


def _imports(path: Path, module: str, known: set[str]) -> list[tuple[int, str]]:
    """(line, imported vance_cli module) for every import statement in the file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("vance_cli")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("vance_cli"):
                continue
            # `from vance_cli.tools import respond` imports the module vance_cli.tools.respond
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            found += [(node.lineno, s) for s in subs] or [(node.lineno, target)]
    return found


def _graph(package: Path = PACKAGE) -> tuple[dict[str, Path], dict[str, list[tuple[int, str]]]]:
    files = {_module_name(p, package): p for p in sorted(package.rglob("*.py"))}
    known = set(files)
    edges = {}
    for module, path in files.items():
        resolved = []
        for line, target in _imports(path, module, known):
            # an import of a name inside a module counts as an import of that module
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known and target != module:
                resolved.append((line, target))
        edges[module] = resolved
    return files, edges


def test_every_module_is_on_a_floor():
    files, _ = _graph()
    lost = sorted(m for m in files if _floor(m) == -1)
    assert not lost, (
        f"modules on no floor: {lost}; add their top-level name to FLOORS in tests/test_layers.py "
        "(and to docs/ARCHITECTURE.md)"
    )


def _upward(package: Path = PACKAGE) -> dict[str, list[str]]:
    """'module -> target' for each import that points up a floor, with where it is made."""
    files, edges = _graph(package)
    upward: dict[str, list[str]] = {}
    for module, targets in edges.items():
        here = _floor(module)
        for line, target in targets:
            there = _floor(target)
            if here is not None and there is not None and there > here:
                where = f"{files[module].relative_to(package.parent)}:{line} (floor {here} -> {there})"
                upward.setdefault(f"{module} -> {target}", []).append(where)
    return upward


def _circles(package: Path = PACKAGE) -> tuple[list[list[str]], dict[str, list[str]]]:
    """The circles (strongly connected components of more than one file) and their ties."""
    files, edges = _graph(package)
    graph = {m: sorted({t for _, t in ts}) for m, ts in edges.items()}
    # Tarjan's strongly connected components, iteratively (no recursion limit on a deep chain)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    circles: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, []))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        members.append(m)
                        if m == node:
                            break
                    if len(members) > 1:
                        circles.append(sorted(members))
    ties: dict[str, list[str]] = {}
    for members in circles:
        for a in members:
            for line, b in edges[a]:
                if b in members:
                    ties.setdefault(f"{a} -> {b}", []).append(f"{files[a].relative_to(package.parent)}:{line}")
    return circles, ties


def upward_problems(package: Path = PACKAGE) -> str:
    """What the check reports of upward imports; empty when there are none."""
    upward = _upward(package)
    return "\n".join(f"  {k}  at {', '.join(upward[k])}" for k in sorted(upward))


def circle_problems(package: Path = PACKAGE) -> str:
    """What the check reports of circles; empty when there are none."""
    circles, ties = _circles(package)
    if not circles:
        return ""
    return (
        "\n".join(f"  {k}  at {', '.join(ties[k])}" for k in sorted(ties))
        + "\nthe circles:\n"
        + "\n".join(f"  circle of {len(c)}: {', '.join(c)}" for c in circles)
    )


def test_no_import_points_up_a_floor():
    # No list of tolerated exceptions: the redesign (issue 14) took the last ones out.
    found = upward_problems()
    assert not found, "imports that point up a floor (see FLOORS in tests/test_layers.py):\n" + found


def test_no_files_import_each_other_in_a_circle():
    found = circle_problems()
    assert not found, "imports that close a circle:\n" + found


def test_every_floor_names_a_module_or_a_package():
    # A name left in FLOORS after its module went would hide nothing today but let a new module of
    # that name land on a floor nobody chose for it.
    missing = [
        name
        for names in FLOORS
        for name in names
        if not (PACKAGE / f"{name}.py").is_file() and not (PACKAGE / name / "__init__.py").is_file()
    ]
    assert not missing, f"in FLOORS but not in vance_cli/: {missing}; delete them from FLOORS"
    flat = [name for names in FLOORS for name in names]
    assert len(flat) == len(set(flat)), "a name is on two floors in FLOORS"


def private_imports(package: Path = PACKAGE) -> list[str]:
    """``file:line name`` for each ``from vance_cli.x import _name`` (a private name of another module)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("vance_cli")):
                found += [
                    f"{path.relative_to(package.parent)}:{node.lineno} {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    return found


def test_no_module_imports_a_private_name_of_another():
    # A leading underscore says "only this module relies on it": one that another module needs
    # (doctor.py took exec_run's _probe) gets a public name and a docstring instead.
    found = private_imports()
    assert not found, "private names imported from another module:\n" + "\n".join(f"  {f}" for f in found)


def _sample_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "vance_cli"
    for rel, text in {"__init__.py": "", **files}.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


def test_the_check_fails_on_an_upward_import_even_inside_a_function(tmp_path):
    """The check itself can fail: a store module reaching up to llm/ in a function is reported."""
    package = _sample_package(
        tmp_path,
        {
            "store/__init__.py": "",
            "store/process.py": "def load():\n    from vance_cli.llm.base import Message\n    return Message\n",
            "llm/__init__.py": "",
            "llm/base.py": "from vance_cli.store import process\nMessage = object\n",
        },
    )
    found = upward_problems(package)
    assert "vance_cli.store.process -> vance_cli.llm.base" in found
    assert "vance_cli/store/process.py:2" in found
    # downward imports are not reported
    assert "vance_cli.llm.base -> vance_cli.store.process" not in found
    # and the same import pointing down is clean
    (package / "store" / "process.py").write_text("Message = object\n")
    assert upward_problems(package) == ""
    (package / "store" / "files.py").write_text("from vance_cli.store.process import _TREE_KEYS\n")
    assert private_imports(package) == ["vance_cli/store/files.py:1 _TREE_KEYS"]


def test_the_check_fails_on_a_circle_within_one_floor(tmp_path):
    package = _sample_package(
        tmp_path,
        {
            "config/__init__.py": "",
            "config/scopes.py": "from vance_cli.config import trust\n",
            "config/trust.py": "def decide():\n    from vance_cli.config.scopes import where\n",
        },
    )
    found = circle_problems(package)
    assert "vance_cli.config.scopes -> vance_cli.config.trust" in found
    assert "vance_cli.config.trust -> vance_cli.config.scopes" in found
    assert "circle of 2" in found
    assert upward_problems(package) == ""


def test_the_check_reads_imports_inside_functions(tmp_path):
    """The reader itself: lazy, TYPE_CHECKING and relative imports are all seen."""
    pkg = tmp_path / "vance_cli" / "tools"
    pkg.mkdir(parents=True)
    source = pkg / "sample.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from vance_cli.engines.base import EngineHost\n"
        "def later():\n"
        "    from ..runtime import scheduler\n"
        "    import vance_cli.cli.main\n"
        "    from . import base\n"
    )
    known = {"vance_cli.runtime.scheduler", "vance_cli.tools.base"}
    found = {t for _, t in _imports(source, "vance_cli.tools.sample", known)}
    assert found == {
        "vance_cli.engines.base",
        "vance_cli.runtime.scheduler",
        "vance_cli.cli.main",
        "vance_cli.tools.base",
    }


def test_the_architecture_doc_draws_the_floors_in_order():
    # docs/ARCHITECTURE.md's picture is the reader's map: it must name the floors FLOORS names,
    # top to bottom, so a floor added or moved in the check cannot leave the picture behind.
    doc = (PACKAGE.parent / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = doc.split("<!-- floors:", 1)[1].split("```", 2)[1]
    drawn = [tuple(n.strip() for n in line.split("  ", 1)[0].split(",")) for line in block.strip().splitlines()]
    assert drawn == list(reversed(FLOORS))


def test_the_architecture_doc_names_only_files_that_exist():
    # The ways through the house name files (`runtime/session.py`, `llm/output/`): one that moved or
    # never existed sends the reader to the wrong room. (Whether a named file does what the doc says
    # is for a reader to check: review found the Benjy check credited to runtime/checks.py.)
    import re

    doc = (PACKAGE.parent / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[a-z_]+/)+(?:[a-z_]+\.py)?)`", doc))
    assert "runtime/session.py" in named and "llm/output/" in named
    missing = sorted(n for n in named if not (PACKAGE / n).exists() and not (PACKAGE.parent / n).exists())
    assert missing == [], f"docs/ARCHITECTURE.md names files that do not exist: {missing}"
