"""`vance doctor`: check the setup, one line per check, a fix for each failure, exit 1 if any fails."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def doctor(
        offline: bool = typer.Option(False, "--offline", help="Skip the one tiny call to the model's endpoint."),
        json_out: bool = typer.Option(False, "--json", help="One JSON object: {ok, checks: [{name, outcome, detail, fix}]}."),
    ) -> None:
        """Check Python, the model and its key, the endpoint, scopes, state and bundled files."""
        from vance_cli.doctor import FAIL, as_json, run_doctor
        from vance_cli.terminal import emit_json

        checks = []
        for check in run_doctor(offline=offline):
            checks.append(check)
            if not json_out:
                typer.echo(check.line())
        if json_out:
            emit_json(as_json(checks))
        else:
            failed = sum(c.outcome == FAIL for c in checks)
            typer.echo(f"\n{failed} check(s) failed" if failed else "\nall checks passed")
        if any(c.outcome == FAIL for c in checks):
            raise typer.Exit(1)
