"""The `vance` entry point: the Typer app, its sub-commands, and the one place errors become exit codes.

Only typer and the tiny command modules are imported at start-up; every command imports what it
needs inside its function, so `vance --help` and `vance ps` never pay for litellm or textual.
"""

from __future__ import annotations

import os
import sys

import typer
from typer.core import TyperGroup

from vance_cli import __version__


class WholeHelpGroup(TyperGroup):
    """A command group whose --help lists each command's first sentence whole (click cuts it to
    ~45 characters with "..."); the help formatter wraps it to the terminal instead."""

    def format_commands(self, ctx, formatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


EXAMPLES = """Examples:

\b
  vance chat                          the full-screen chat, in this folder
  vance chat -p "explain app.py"      one turn; the reply on stdout
  vance chat --resume                 pick one of this folder's chats
  vance benjy run "make the tests pass" --check "pytest -q" --workspace .
  vance demo                          all of it, offline, scripted

Exit codes: 0 ok, 1 error, 2 usage, 10 waiting for you (an approval, a Benjy question), 130 interrupted;
structure: 3 need-more-input, 4 stale, 5 refused, 6 a --batch record failed."""

app = typer.Typer(
    name="vance",
    help="Vance: a terminal-first agent console. Chat engines, structured extraction, headless tasks.",
    epilog=EXAMPLES,
    cls=WholeHelpGroup,
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
    """Exit codes: 0 ok, 1 error, 2 usage; structure: 3 need-more-input, 4 stale, 5 refused, 6 a --batch record failed."""


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
    "acp": "acp_cmd",
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


def _devnull_at(fd: int, mode: str, errors: str):
    """/dev/null opened at descriptor ``fd`` (closed: Python has no stream for it) and a text
    stream on it, or None when that fails. While ``fd`` is closed, the next file opened takes it."""
    try:
        devnull = os.open(os.devnull, os.O_RDONLY if mode == "r" else os.O_WRONLY)  # the lowest free: fd
        if devnull != fd:
            os.dup2(devnull, fd)
            os.close(devnull)
        return open(fd, mode, encoding="utf-8", errors=errors, closefd=False)  # noqa: SIM115 - lives as long as the process
    except OSError:
        return None


def _closed_stdin_reads_as_empty() -> None:
    """A closed stdin (``0<&-``: Python then has no sys.stdin) becomes /dev/null, so every command
    behaves as with ``</dev/null`` (the chat ends at once, nothing waits for input); reading text
    from it (``-``) stays a usage error that says stdin is closed (cli/common.py)."""
    if sys.stdin is not None:
        return
    from vance_cli.cli import common

    stream = _devnull_at(0, "r", "surrogateescape")
    if stream is not None:
        sys.stdin = stream
        common.STDIN_WAS_CLOSED = True


def _closed_output_goes_nowhere() -> None:
    """A closed stdout or stderr (``>&-``, ``2>&-``: Python then has no sys.stdout / sys.stderr)
    becomes /dev/null, said once on stderr when it is stdout. Else a command failed with an
    internal error at its first output, and the next file the command opened took descriptor 1,
    so what a child process (a check, exec_run) wrote to its stdout went into that file."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        stream = _devnull_at(fd, "w", "backslashreplace")
        if stream is None:
            continue
        setattr(sys, name, stream)
        if name == "stdout" and sys.stderr is not None:
            sys.stderr.write("vance: stdout is closed; what the command prints is discarded\n")


def run(argv: list[str] | None = None) -> None:
    """Run the app; VanceError → its message and exit code, no traceback unless VANCE_DEBUG=1."""
    try:  # typer ≥ 0.20 vendors click; older releases use the click package
        from typer._click import exceptions as cx
    except ImportError:  # pragma: no cover
        from click import exceptions as cx

    debug = os.environ.get("VANCE_DEBUG") == "1"
    _closed_stdin_reads_as_empty()
    _closed_output_goes_nowhere()
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["chat"]:  # the chat's first frame, before parsing (see tui/splash.py)
        from vance_cli.cli.chat import resume_argv
        from vance_cli.tui import splash

        args = argv = resume_argv(args)  # a bare --resume: the picker
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
