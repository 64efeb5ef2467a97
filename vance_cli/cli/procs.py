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
        from vance_cli.cli.common import emit_json, err, fmt_time, load_context
        from vance_cli.store.files import ProcessStore

        scopes, _ = load_context()
        store = ProcessStore.for_scopes(scopes)
        processes, corrupt = store.list()
        for path, reason in corrupt:
            err(f"warning: unreadable process file {path} (kept untouched): {reason}")
        if not all_:
            processes = [p for p in processes if p.status.value != "DONE"]
        # RUNNING on disk with nobody holding the lock: the vance that drove it was killed.
        stale = {p.id for p in processes if p.status.value == "RUNNING" and store.holder(p.id) is None}
        if json_out:
            for p in processes:
                emit_json({**_row(p), "interrupted": p.id in stale})
            return
        if not processes:
            err("no processes yet; start one with: vance chat")
            return
        header = f"{'ID':<23} {'ENGINE':<7} {'RECIPE':<10} {'STATUS':<9} {'UPDATED':<19} TITLE"
        typer.echo(header)
        for p in processes:
            status = p.status.value + ("*" if p.id in stale else "")
            typer.echo(
                f"{p.id:<23} {p.engine:<7} {(p.recipe_name or '-'):<10} {status:<9} "
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
        from vance_cli.cli.common import emit_json, load_context
        from vance_cli.store.files import ProcessStore

        scopes, _ = load_context()
        store = ProcessStore.for_scopes(scopes)
        process = store.load(store.resolve_id(pid))
        if json_out:
            emit_json(process.model_dump(mode="json"))
            return
        u = process.usage
        typer.echo(f"process  {process.id}")
        typer.echo(f"engine   {process.engine} (recipe {process.recipe_name}, model {process.model})")
        typer.echo(f"status   {process.status.value}" + (f" — {process.status_reason}" if process.status_reason else ""))
        typer.echo(f"usage    {u.calls} calls, {u.prompt_tokens}+{u.completion_tokens} tokens, ${u.cost:.4f}")
        if process.todos:
            typer.echo("todos")
            for t in process.todos:
                typer.echo(f"  [{t.status}] {t.text}")
        typer.echo("")
        for line in transcript_lines(process):
            typer.echo(line)


def transcript_lines(process) -> list[str]:
    """The history as a person reads it (store/transcript.py), one line per entry."""
    from vance_cli.store.transcript import entries

    out: list[str] = []
    for e in entries(process):
        if e.kind == "user":
            out.append(f"you: {e.text}")
        elif e.kind == "note":
            out.append(f"  [system note] {e.text}")
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
