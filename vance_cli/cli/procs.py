"""`vance ps` and `vance show`: list processes and show one, straight from the process files."""

from __future__ import annotations

from datetime import UTC

import typer


def _iso(ts: float) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


def _row(p) -> dict:
    return {
        "id": p.id,
        "engine": p.engine,
        "recipe": p.recipe_name,
        "status": p.status.value,
        "parent": p.parent,
        "title": p.title,
        "model": p.model,
        "created": _iso(p.created),
        "updated": _iso(p.updated),
    }


def register(app: typer.Typer) -> None:
    @app.command()
    def ps(
        json_out: bool = typer.Option(False, "--json", help="One JSON object per line."),
        all_: bool = typer.Option(True, "--all/--active", help="All processes, or only those not DONE."),
    ) -> None:
        """List processes, newest first."""
        from vance_cli.cli.common import fmt_time
        from vance_cli.config.context import load_context
        from vance_cli.output.tree import tree_label, tree_order
        from vance_cli.runtime.checks import engine_problem, recipe_problem
        from vance_cli.store.files import ProcessStore, is_future_dated
        from vance_cli.store.listing import list_processes
        from vance_cli.terminal import emit_json, err, out

        scopes, _ = load_context()
        store = ProcessStore.for_scopes(scopes)
        # what ps shows of each file, not its history (store/listing.py)
        listing = list_processes(store.root, home=scopes.user)
        processes = listing.processes
        for path, reason in listing.unreadable:
            err(f"warning: unreadable process file {path} (kept untouched): {reason}")
        recipe_problems = {key: recipe_problem(recipe) for key, recipe in listing.recipes.items()}
        for p in processes:
            problem = engine_problem(p.engine) or recipe_problems[p.recipe]
            if problem:
                err(f"warning: process {p.id} cannot be resumed: {problem}")
            if is_future_dated(p):
                err(f"warning: process {p.id} was updated in the future ({fmt_time(p.updated)}); --continue skips it")
        if not all_:
            processes = [p for p in processes if p.status.value != "DONE"]
        # RUNNING on disk with nobody holding the lock: the vance that drove it was killed.
        stale = {p.id for p in processes if p.status.value == "RUNNING" and store.holder(p.id) is None}
        ordered = tree_order(processes)
        if json_out:
            for p, depth in ordered:
                emit_json({**_row(p), "depth": depth, "interrupted": p.id in stale})
            return
        if not processes:
            err("no processes yet; start one with: vance chat")
            return
        header = f"{'ID':<27} {'ENGINE':<7} {'RECIPE':<16} {'STATUS':<9} {'UPDATED':<19} TITLE"
        out(header)
        for p, depth in ordered:
            status = p.status.value + ("*" if p.id in stale else "")
            ident = tree_label(p.id, depth)
            out(
                f"{ident:<27} {p.engine:<7} {(p.recipe_name or '-'):<16} {status:<9} "
                f"{fmt_time(p.updated):<19} {p.title or ''}"
            )
        if stale:
            err("* interrupted mid-turn (no vance holds it): continue with `vance chat --resume ID`")

    @app.command()
    def show(
        pid: str = typer.Argument(..., metavar="ID", help="Process id or unique prefix."),
        json_out: bool = typer.Option(False, "--json", help="The whole process file as JSON."),
    ) -> None:
        """Show one process: status, usage and the transcript."""
        from vance_cli.config.context import load_context
        from vance_cli.store.files import ProcessStore
        from vance_cli.store.listing import list_processes
        from vance_cli.terminal import emit_json, out

        scopes, _ = load_context()
        store = ProcessStore.for_scopes(scopes)
        process = store.load(store.resolve_id(pid))
        if json_out:
            emit_json(process.model_dump(mode="json"))
            return
        u = process.usage
        out(f"process  {process.id}")
        if process.title:
            out(f"title    {process.title}")
        out(f"engine   {process.engine} (recipe {process.recipe_name}, model {process.model})")
        out(f"status   {process.status.value}" + (f" — {process.status_reason}" if process.status_reason else ""))
        if process.parent:
            out(f"parent   {process.parent}")
        children = [p.id for p in list_processes(store.root, home=scopes.user).processes if p.parent == process.id]
        if children:
            out(f"children {', '.join(sorted(children))}")
        out(f"usage    {u.calls} calls, {u.prompt_tokens}+{u.completion_tokens} tokens, ${u.cost:.4f}")
        if process.todos:
            out("todos")
            for t in process.todos:
                out(f"  [{t.status}] {t.text}")
        out("")
        for line in transcript_lines(process):
            out(line)


def transcript_lines(process) -> list[str]:
    """The history as a person reads it (store/transcript.py), one line per entry."""
    from vance_cli.store.transcript import entries

    out: list[str] = []
    for e in entries(process):
        if e.kind == "user":
            out.append(f"you: {e.text}")
        elif e.kind == "note" and e.tag == "summary":
            out.append(f"  [summary of the earlier conversation, sent instead of it] {e.text}")
        elif e.kind == "note":
            out.append(f"  [system note] {e.text}")
        elif e.kind == "journal":
            out.append("  " + e.text.replace("\n\n", "\n  "))
        elif e.kind == "message":
            out.append(f"{process.engine}: {e.text}")
        elif e.kind == "unshown":
            out.append(f"{process.engine} [{e.tag}, not shown]: {e.text}")
        elif e.kind == "call":
            out.append(f"  → {e.name} {e.text[:200]}")
        elif e.kind == "rejected":
            out.append(f"  ✗ respond rejected: {e.text[:200]}")
        elif e.kind == "result":
            out.append(f"  {'✓' if e.ok else '✗'} {e.name}: {' '.join(e.text.split())[:200]}")
    return out
