"""The process tree as the plain terminal lists it: each worker under the run that started it."""

from __future__ import annotations


def tree_order(processes: list) -> list[tuple]:
    """(process, depth) with each child right under its parent (children oldest first).

    Roots keep the given order (newest first); a child whose parent is not in the list is a root.
    """
    ids = {p.id for p in processes}
    children: dict[str, list] = {}
    roots = []
    for p in processes:
        if p.parent and p.parent in ids and p.parent != p.id:
            children.setdefault(p.parent, []).append(p)
        else:
            roots.append(p)
    out: list[tuple] = []
    seen: set[str] = set()

    def walk(p, depth: int) -> None:
        if p.id in seen:
            return
        seen.add(p.id)
        out.append((p, depth))
        for child in sorted(children.get(p.id, []), key=lambda c: c.created):
            walk(child, depth + 1)

    for root in roots:
        walk(root, 0)
    for p in processes:  # a parent cycle in hand-edited files: still list everything once
        walk(p, 0)
    return out


def tree_label(process_id: str, depth: int) -> str:
    """The id as a tree row shows it: indented by depth, a child marked with "└"."""
    return ("  " * (depth - 1) + "└ " if depth else "") + process_id
