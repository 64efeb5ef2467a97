"""The `vance` entry point: the Typer app, its sub-commands, and the one place errors become exit codes.

Only typer and the tiny command modules are imported at start-up; every command imports what it
needs inside its function, so `vance --help` and `vance ps` never pay for litellm or textual.
"""

from __future__ import annotations

import os
import sys

import typer

from vance_cli import __version__

app = typer.Typer(
    name="vance",
    help="Vance: a terminal-first agent console. Chat engines, structured extraction, headless tasks.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"vance {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """Exit codes: 0 ok, 1 error, 2 usage; structure: 3 need-more-input, 4 stale."""


# One module per command group, each with register(app); add a new one on its own line.
COMMAND_MODULES = (
    "chat",
    "procs",
    "recipes_cmd",
    "trust_cmd",
    "structure_cmd",
    "schemas_cmd",
    "doctor_cmd",
    "demo_cmd",
    "benjy_cmd",
)


def _register_all() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"vance_cli.cli.{name}").register(app)


_register_all()


_INTERRUPTED = "interrupted; the process state is saved (continue with: vance chat --continue, or --resume ID)"


def run(argv: list[str] | None = None) -> None:
    """Run the app; VanceError → its message and exit code, no traceback unless VANCE_DEBUG=1."""
    try:  # typer ≥ 0.20 vendors click; older releases use the click package
        from typer._click import exceptions as cx
    except ImportError:  # pragma: no cover
        from click import exceptions as cx

    from vance_cli.errors import EXIT_ERROR, VanceError

    debug = os.environ.get("VANCE_DEBUG") == "1"
    try:
        code = app(args=argv, standalone_mode=False, prog_name="vance")
        if isinstance(code, int) and code:
            if code == 130:
                typer.echo(_INTERRUPTED, err=True)
            sys.exit(code)
    except typer.Exit as exc:
        if exc.exit_code == 130:  # typer turns Ctrl+C inside a command into Exit(130)
            typer.echo(_INTERRUPTED, err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except cx.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except VanceError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        from vance_cli.sanitize import for_terminal

        # messages quote file names, file contents and model output: no control sequences
        typer.echo(for_terminal(exc.render()), err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo(_INTERRUPTED, err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: say so briefly, traceback only on request
        if debug:
            raise
        from vance_cli.sanitize import for_terminal

        typer.echo(for_terminal(f"internal error: {type(exc).__name__}: {exc}\n  (set VANCE_DEBUG=1 for a traceback)"), err=True)
        sys.exit(EXIT_ERROR)
