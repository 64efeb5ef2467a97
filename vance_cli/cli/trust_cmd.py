"""`vance trust [PATH] | --list | --revoke [PATH]`: which project folders may use their own settings."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def trust(
        path: Path | None = typer.Argument(None, help="The project folder (default: the current one)."),
        list_: bool = typer.Option(False, "--list", help="List the trusted folders and whether they changed."),
        revoke: bool = typer.Option(False, "--revoke", help="Stop trusting PATH (default: the current folder)."),
        json_out: bool = typer.Option(False, "--json", help="--list as one JSON object per line."),
    ) -> None:
        """Trust a project's .vance/ settings (api_base, api_key, transport, [models], [exec], recipes).

        Until then they are ignored, so a cloned repository cannot send your keys elsewhere or
        give the model more tools. A change to .vance/ later makes Vance ask again.
        """
        from vance_cli.cli.common import fmt_time
        from vance_cli.config import trust as t
        from vance_cli.config.scopes import Scopes
        from vance_cli.errors import UsageError
        from vance_cli.terminal import emit_json, err

        if list_ and (revoke or path is not None):
            raise UsageError("--list takes no PATH and no --revoke", hint="run `vance trust --list` alone")
        user = Scopes.discover().user
        target = path if path is not None else Path.cwd()

        if list_:
            rows = t.list_records(user)
            if not rows and not json_out:
                err("no trusted folders yet; trust one with: vance trust PATH")
            for record, state in rows:
                if json_out:
                    emit_json({"folder": str(record.folder), "state": state, "digest": record.digest,
                               "trusted_at": record.trusted_at})
                else:
                    typer.echo(f"{state:<9} {fmt_time(record.trusted_at)}  {record.folder}")
            return

        if revoke:
            record = t.revoke(target, user)
            if record is None:
                err(f"{target.resolve()} is not trusted: nothing to revoke (see `vance trust --list`)")
                return
            typer.echo(f"revoked {record.folder}: its .vance/ settings that can send keys elsewhere "
                       "or widen tools are ignored again")
            return

        root = t.project_root_for(target, user)
        if root is None:
            raise UsageError(
                f"there is no .vance/ folder in {target.resolve()} or above it: nothing to trust",
                hint="run `vance trust` inside the project folder (the one with .vance/), or pass it as PATH",
            )
        before = t.folder_state(root / ".vance", user)
        items = t.restricted_settings(root / ".vance") + t.project_recipe_files(root / ".vance")
        record = t.trust_folder(root, user)
        what = f" ({', '.join(items)})" if items else ""
        if before == t.TRUSTED:
            typer.echo(f"already trusted, unchanged: {record.folder}")
        else:
            again = " again" if before == t.CHANGED else ""
            typer.echo(f"trusted{again} {record.folder}: its .vance/ settings apply{what}")
        err(f"a change to {record.folder}/.vance makes Vance ask again; undo with: vance trust --revoke {record.folder}")
