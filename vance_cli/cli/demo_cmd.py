"""`vance demo`: the whole product, offline, on a scripted model, in a state folder of its own."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        home: Path | None = typer.Option(None, "--home", help="State folder for the demo (default: a new temporary folder)."),
        json_out: bool = typer.Option(False, "--json", help="No narration; one JSON object saying what the demo did."),
    ) -> None:
        """Show chat, structure and Benjy working, offline: only the model's words are scripted."""
        import sys

        from vance_cli.demo.run import run_demo
        from vance_cli.terminal import emit_json

        live = sys.stdin.isatty() and sys.stdout.isatty()  # the Benjy part in the console on a terminal
        report = run_demo(home=home, json_out=json_out, out=sys.stdout, err=sys.stderr, live=live)
        if json_out:
            emit_json(report)
        if not report["ok"]:  # a part did not do what the demo shows: say so with the exit code
            raise typer.Exit(1)
