"""What every command needs: the scopes, the settings with CLI overrides, and the output helpers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings


def load_context(overrides: dict[str, Any] | None = None) -> tuple[Scopes, Settings]:
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings

    scopes = Scopes.discover()
    settings = Settings.load(scopes, overrides={k: v for k, v in (overrides or {}).items() if v is not None})
    announce(scopes, settings)
    return scopes, settings


_announced: set[str] = set()


def announce(scopes: Scopes, settings: Settings) -> None:
    """Config warnings and the untrusted-folder line on stderr, each once per invocation."""
    from vance_cli.config.trust import check

    lines = [f"warning: {w}" for w in settings.warnings]
    notice = check(scopes).notice()
    if notice:
        lines.append(notice)
    for line in lines:
        if line not in _announced:
            _announced.add(line)
            err(line)


def read_stdin_text() -> str:
    """All of stdin as text; input that is not UTF-8 text is a usage error (nothing is created)."""
    from vance_cli.errors import UsageError

    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"the input on stdin is not valid UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            hint="pipe UTF-8 text, e.g. convert it first with: iconv -f latin1 -t utf-8",
        ) from None
    return require_text(text, "the input on stdin")


def require_text(value: str, what: str) -> str:
    """``value`` (from argv or stdin) when it is UTF-8 text without NUL bytes; else a UsageError."""
    from vance_cli.errors import UsageError
    from vance_cli.sanitize import check_utf8_input

    problem = check_utf8_input(value, what)
    if problem is None and "\x00" in value:
        problem = f"{what} contains NUL bytes (binary data?)"
    if problem:
        raise UsageError(problem, hint="pass UTF-8 text; convert it first, e.g. with iconv -f latin1 -t utf-8")
    return value


def emit_json(obj: Any) -> None:
    from vance_cli.sanitize import json_text

    sys.stdout.write(json_text(obj, default=str) + "\n")
    sys.stdout.flush()


def out(text: str) -> None:
    """A line on stdout that carries text a model or a file wrote: control sequences stripped."""
    from vance_cli.sanitize import for_terminal

    sys.stdout.write(for_terminal(text) + "\n")


def err(text: str) -> None:
    """A line on stderr (diagnostics often quote file or model text: control sequences stripped)."""
    from vance_cli.sanitize import for_terminal

    sys.stderr.write(for_terminal(text) + "\n")
    sys.stderr.flush()


def fmt_time(ts: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
