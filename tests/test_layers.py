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
    ("errors", "events", "text", "names", "crashpoints", "terminal"),  # leaf modules
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
    ("demo",),
    ("cli",),  # commands only
    ("entry", "__main__"),
]

# The redesign (issue 14) is landing in steps: what main still had when this check arrived. The
# lists may only shrink: a new upward import or circle fails at once, and so does an entry here
# that the code no longer has (delete it). Both are empty when the redesign is done.
KNOWN_UPWARD: set[str] = {
    "vance_cli.engines.benjy.engine -> vance_cli.runtime.crashpoints",
    "vance_cli.engines.benjy.engine -> vance_cli.runtime.scheduler",
    "vance_cli.store.files -> vance_cli.config.scopes",
    "vance_cli.store.process -> vance_cli.llm.base",
    "vance_cli.store.transcript -> vance_cli.llm.base",
    "vance_cli.tools.process_tools -> vance_cli.engines.benjy.config",
    "vance_cli.tools.process_tools -> vance_cli.runtime.scheduler",
    "vance_cli.tui -> vance_cli.cli.session",
    "vance_cli.tui.controller -> vance_cli.cli.session",
}
KNOWN_IN_CIRCLES: set[str] = {
    "vance_cli.config.scopes -> vance_cli.config.trust",
    "vance_cli.config.trust -> vance_cli.config.scopes",
    "vance_cli.engines.ford -> vance_cli.engines.stream_view",
    "vance_cli.engines.ford -> vance_cli.tools.base",
    "vance_cli.engines.ford -> vance_cli.tools.respond",
    "vance_cli.engines.stream_view -> vance_cli.tools.respond",
    "vance_cli.runtime.runner -> vance_cli.engines.ford",
    "vance_cli.runtime.runner -> vance_cli.tools.base",
    "vance_cli.runtime.scheduler -> vance_cli.runtime.runner",
    "vance_cli.tools.base -> vance_cli.tools.process_tools",
    "vance_cli.tools.base -> vance_cli.tools.respond",
    "vance_cli.tools.base -> vance_cli.tools.structure_tool",
    "vance_cli.tools.base -> vance_cli.tools.workspace",
    "vance_cli.tools.exec_run -> vance_cli.tools.base",
    "vance_cli.tools.exec_run -> vance_cli.tools.workspace",
    "vance_cli.tools.process_tools -> vance_cli.runtime.scheduler",
    "vance_cli.tools.process_tools -> vance_cli.tools.base",
    "vance_cli.tools.respond -> vance_cli.tools.base",
    "vance_cli.tools.structure_tool -> vance_cli.tools.base",
    "vance_cli.tools.workspace -> vance_cli.tools.base",
    "vance_cli.tools.workspace -> vance_cli.tools.exec_run",
}

FLOOR_OF: dict[str, int] = {name: i for i, names in enumerate(FLOORS) for name in names}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
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


def _graph() -> tuple[dict[str, Path], dict[str, list[tuple[int, str]]]]:
    files = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
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


def _upward() -> dict[str, list[str]]:
    """'module -> target' for each import that points up a floor, with where it is made."""
    files, edges = _graph()
    upward: dict[str, list[str]] = {}
    for module, targets in edges.items():
        here = _floor(module)
        for line, target in targets:
            there = _floor(target)
            if here is not None and there is not None and there > here:
                where = f"{files[module].relative_to(PACKAGE.parent)}:{line} (floor {here} -> {there})"
                upward.setdefault(f"{module} -> {target}", []).append(where)
    return upward


def _circles() -> tuple[list[list[str]], dict[str, list[str]]]:
    """The circles (strongly connected components of more than one file) and their ties."""
    files, edges = _graph()
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
                    ties.setdefault(f"{a} -> {b}", []).append(f"{files[a].relative_to(PACKAGE.parent)}:{line}")
    return circles, ties


def test_no_import_points_up_a_floor():
    upward = _upward()
    new = sorted(k for k in upward if k not in KNOWN_UPWARD)
    gone = sorted(KNOWN_UPWARD - set(upward))
    assert not new, "imports that point up a floor (see FLOORS in tests/test_layers.py):\n" + "\n".join(
        f"  {k}  at {', '.join(upward[k])}" for k in new
    )
    assert not gone, "no longer in the code; delete from KNOWN_UPWARD in tests/test_layers.py:\n" + "\n".join(
        f"  {k}" for k in gone
    )


def test_no_files_import_each_other_in_a_circle():
    circles, ties = _circles()
    new = sorted(k for k in ties if k not in KNOWN_IN_CIRCLES)
    gone = sorted(KNOWN_IN_CIRCLES - set(ties))
    described = "\n".join(f"  circle of {len(c)}: {', '.join(c)}" for c in circles)
    assert not new, (
        "imports that close a circle:\n"
        + "\n".join(f"  {k}  at {', '.join(ties[k])}" for k in new)
        + "\nthe circles:\n"
        + described
    )
    assert not gone, "no longer in a circle; delete from KNOWN_IN_CIRCLES in tests/test_layers.py:\n" + "\n".join(
        f"  {k}" for k in gone
    )


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
