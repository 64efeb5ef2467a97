"""The chat's first frame, written before Textual (or the session) is imported: stdlib only.

It is the app's own first frame as far as it is known this early: an empty transcript, the
prompt box with its placeholder where the app puts it, and the status bar with what the command
line says (recipe, model, the process to resume); the app paints over it a moment later with the
process id and the rest. So the terminal shows the chat within the CLI's own start-up time while
the command line is parsed, the process is opened and Textual loads (the entry point calls
``early`` before any of it; ``vance chat`` calls ``show`` when ``early`` could not tell).

Typing during that moment is kept: echo is off while the splash is up (the keys wait in the
terminal and the app reads them), and ``leave()`` / ``restore()`` give the terminal back as it was.
``leave()`` also restores the normal screen when the app never starts (an error before it runs).
"""

from __future__ import annotations

import os
import sys

_ENTER = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"
_LEAVE = "\x1b[?25h\x1b[?1049l"

# The prompt's placeholder (widgets/prompt_input.py uses the same constant).
PLACEHOLDER = "Message vance · Enter sends · /help lists commands"

_shown = False
_saved_tty = None  # termios attributes before echo was turned off


def status_line(*, recipe: str | None = None, model: str | None = None, resume: str | None = None,
                continue_last: bool = False) -> str:
    """The status bar's fields known from the command line alone (the app fills in the rest)."""
    if resume:
        parts = [resume]
    elif continue_last:
        parts = ["the last chat"]
    else:
        parts = ["new chat"]
        if recipe:
            parts.append(recipe)
    if model:
        parts.append(model)
    parts.append("starting…")
    return "".join(ch for ch in " · ".join(parts) if ch.isprintable())  # argv may hold anything


# `vance chat` options after which the app does not start (or which may say so): no early frame.
_NOT_THE_APP = ("-p", "--p", "--j", "-h", "--h")


def early(argv: list[str]) -> bool:
    """`vance chat` on a terminal: show the frame before the command line is even parsed.

    Parsing costs more than the rest of the CLI's start-up (typer coerces every parameter with a
    pydantic TypeAdapter, and importing pydantic alone takes longer than `vance --help`), so the
    entry point calls this first. Conservative: anything that might not open the app (-p,
    --plain, --json, --help, or an option this does not know) leaves it to the chat command,
    which decides for sure and shows the frame itself (or ``leave()``s this one).
    """
    if not argv or argv[0] != "chat" or os.environ.get("_VANCE_COMPLETE"):
        return False
    if sys.stdin is None or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    known = {"--recipe": "recipe", "-m": "model", "--model": "model", "--resume": "resume", "-r": "resume"}
    values: dict[str, str] = {}
    continue_last = False
    args = iter(argv[1:])
    for arg in args:
        if arg.startswith(_NOT_THE_APP):
            return False
        name, eq, value = arg.partition("=")
        if name in known:
            value = value if eq else next(args, "")
            if value.startswith("-"):
                return False
            if value.startswith("\x00"):  # a bare --resume (cli/chat.py PICK): the picker opens
                value = "pick a chat"
            values[known[name]] = value
        elif arg in ("-c", "--continue", "-q", "--quiet", "--all"):
            continue_last = continue_last or arg in ("-c", "--continue")
        else:
            return False  # a positional or an unknown option: the command will say what it is
    show(status_line(recipe=values.get("recipe", "arthur"), model=values.get("model"), resume=values.get("resume"),
                     continue_last=continue_last))
    return True


def shown() -> bool:
    return _shown


def frame(cols: int, rows: int, status: str) -> str:
    """The escape sequences of the frame for a ``cols`` × ``rows`` terminal."""
    inner = max(0, cols - 4)
    text = PLACEHOLDER[: max(0, inner - 2)]
    dim = "" if os.environ.get("NO_COLOR") else "\x1b[2m"
    reset = "" if os.environ.get("NO_COLOR") else "\x1b[0m"
    return "".join([
        _ENTER,
        f"\x1b[{max(1, rows - 3)};2H╭{'─' * inner}╮",
        f"\x1b[{max(1, rows - 2)};2H│ {dim}{text}{reset}{' ' * (inner - 1 - len(text))}│",
        f"\x1b[{max(1, rows - 1)};2H╰{'─' * inner}╯",
        f"\x1b[{rows};2H{status[: max(0, cols - 2)]}",
    ])


def show(status: str = "starting…") -> None:
    global _shown
    if _shown or os.environ.get("VANCE_NO_SPLASH") == "1":
        return
    import shutil  # here: `vance chat -p` imports this module and never draws

    cols, rows = shutil.get_terminal_size((80, 24))
    _quiet_keys()
    sys.stdout.write(frame(cols, rows, status))
    sys.stdout.flush()
    _shown = True


def _quiet_keys() -> None:
    """Echo off while the splash is up, so early keys wait for the app instead of smearing it."""
    global _saved_tty
    try:
        import termios

        fd = sys.stdin.fileno()
        attrs = termios.tcgetattr(fd)
        quiet = list(attrs)
        quiet[0] &= ~termios.ICRNL  # Enter stays "\r" (Enter), not "\n" (Ctrl+J, a new line)
        quiet[3] &= ~(termios.ECHO | termios.ICANON)
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        _saved_tty = attrs
    except (ImportError, OSError, ValueError, AttributeError):
        _saved_tty = None  # not a POSIX terminal: nothing to quiet


def restore() -> None:
    """The terminal's modes as before the splash (after the app, which restores what it found)."""
    global _saved_tty
    if _saved_tty is None:
        return
    try:
        import termios

        termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, _saved_tty)
    except (ImportError, OSError, ValueError, termios.error):  # termios.error: the terminal is gone
        pass
    _saved_tty = None


def leave() -> None:
    global _shown
    if _shown:
        _shown = False
        try:
            sys.stdout.write(_LEAVE)
            sys.stdout.flush()
        except OSError:  # the terminal is gone: nothing to give back
            pass
    restore()


def hand_over() -> None:
    """The app takes the screen over (it leaves the alternate screen itself on exit)."""
    global _shown
    _shown = False
