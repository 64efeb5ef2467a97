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


# Each top-level command and the module whose register(app) adds it; add a new one on its own line.
# A run registers only the module of the command it was given (building every command's options
# costs start-up time a one-shot turn should not pay); help, completion and typos get them all.
COMMANDS: dict[str, str] = {
    "chat": "chat",
    "ps": "procs",
    "show": "procs",
    "recipes": "recipes_cmd",
    "trust": "trust_cmd",
    "structure": "structure_cmd",
    "schemas": "schemas_cmd",
    "doctor": "doctor_cmd",
    "demo": "demo_cmd",
    "benjy": "benjy_cmd",
    "mcp": "mcp_cmd",
}
_registered: set[str] = set()


def _command_in(argv: list[str]) -> str | None:
    """The top-level command ``argv`` names, when Vance can tell without parsing it."""
    if os.environ.get("_VANCE_COMPLETE"):  # shell completion needs every command
        return None
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def register_commands(argv: list[str] | None = None) -> None:
    """Add the command ``argv`` names to the app, or every command when it names none."""
    import importlib

    command = _command_in(list(sys.argv[1:] if argv is None else argv))
    modules = [COMMANDS[command]] if command else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        if name not in _registered:
            _registered.add(name)
            importlib.import_module(f"vance_cli.cli.{name}").register(app)


def _leave_splash() -> None:
    splash = sys.modules.get("vance_cli.tui.splash")
    if splash is not None:
        splash.leave()


_INTERRUPTED = "interrupted; the process state is saved (continue with: vance chat --continue, or --resume ID)"


def run(argv: list[str] | None = None) -> None:
    """Run the app; VanceError → its message and exit code, no traceback unless VANCE_DEBUG=1."""
    try:  # typer ≥ 0.20 vendors click; older releases use the click package
        from typer._click import exceptions as cx
    except ImportError:  # pragma: no cover
        from click import exceptions as cx

    debug = os.environ.get("VANCE_DEBUG") == "1"
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["chat"]:  # the chat's first frame, before parsing (see tui/splash.py)
        from vance_cli.tui import splash

        splash.early(args)
    register_commands(argv)
    try:
        _run_app(args, argv, cx, debug)
    finally:
        mcp = sys.modules.get("vance_cli.tools.mcp_client")
        if mcp is not None:  # stop the MCP servers this command started
            mcp.shutdown()


def _run_app(args, argv, cx, debug) -> None:
    from vance_cli.errors import EXIT_ERROR, VanceError

    try:
        try:
            code = app(args=argv, standalone_mode=False, prog_name="vance")
        except BaseException:
            _leave_splash()  # an error before the app ran: print it on the normal screen
            raise
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
        from vance_cli.terminal import err

        err(exc.render())  # messages quote file names, file contents and model output: no control sequences
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo(_INTERRUPTED, err=True)
        sys.exit(130)
    except OSError as exc:  # a file or folder we could not use, met outside the translated paths
        if debug:
            raise
        from vance_cli.terminal import err

        where = f": {exc.filename}" if exc.filename else ""
        err(
            f"error: {exc.strerror or exc}{where}\n  fix: check that the file or folder exists, is "
            "writable and its disk has space (VANCE_DEBUG=1 shows where it happened)"
        )
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # a bug: say so briefly, traceback only on request
        if debug:
            raise
        from vance_cli.terminal import err

        err(f"internal error: {type(exc).__name__}: {exc}\n  (set VANCE_DEBUG=1 for a traceback)")
        sys.exit(EXIT_ERROR)
