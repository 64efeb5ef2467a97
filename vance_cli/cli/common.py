"""What commands share beside their context (``config.context``) and output (``terminal``): text from argv
or stdin checked, and times as they print them."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

MAX_STDIN_BYTES = 16 * 1024 * 1024  # a prompt, a goal or an answer; more is a mistake (`< /dev/zero`)
MAX_LINE_CHARS = 1024 * 1024  # one line the plain chat reads; more is not typed (`vance chat < /dev/zero`)
STDIN_WAS_CLOSED = False  # set by cli/main.py when it put /dev/null in place of a closed stdin


def read_stdin_text() -> str:
    """All of stdin as text, at most MAX_STDIN_BYTES; input that is not UTF-8 text, a closed stdin
    or more than that is a usage error (nothing is created)."""
    from vance_cli.errors import UsageError

    if sys.stdin is None or STDIN_WAS_CLOSED:
        raise UsageError("stdin is closed, so there is no text to read from it ('-')", hint="pipe the text in, or pass it as an argument")
    try:
        data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read stdin: {exc.strerror or exc}", hint="pipe the text in, or pass it as an argument") from None
    if len(data) > MAX_STDIN_BYTES:
        raise UsageError(
            f"the input on stdin is longer than {MAX_STDIN_BYTES // (1024 * 1024)} MiB; it was not read to its end",
            hint="pass a shorter text (a file's path in the text lets the tools read the file itself)",
        )
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
    from vance_cli.text import check_utf8_input

    problem = check_utf8_input(value, what)
    if problem is None and "\x00" in value:
        problem = f"{what} contains NUL bytes (binary data?)"
    if problem:
        raise UsageError(problem, hint="pass UTF-8 text; convert it first, e.g. with iconv -f latin1 -t utf-8")
    return value


def fmt_time(ts: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def model_factory(model: str, settings):
    """The ChatModel for any model string a command may meet: a process the demo made (``demo:``,
    resumed with `vance chat --resume`) gets the demo's brain, everything else the model layer's.

    The commands are the one place that knows both; the model layer knows no demo."""
    from vance_cli.names import DEMO_PREFIX

    if model.startswith(DEMO_PREFIX):
        from vance_cli.demo import brain  # only for a demo model: every other chat -p skips it

        return brain.model_factory(model, settings)
    from vance_cli.llm.factory import make_model

    return make_model(model, settings)


def read_stdin_line() -> str | None:
    """One line of stdin for the plain chat, at most MAX_LINE_CHARS; None at its end. A longer
    line (``< /dev/zero`` has no end of line) is a usage error, not a read until memory runs out."""
    from vance_cli.errors import UsageError

    if sys.stdin is None:
        return None
    try:
        line = sys.stdin.readline(MAX_LINE_CHARS + 1)
    except OSError as exc:
        raise UsageError(f"cannot read stdin: {exc.strerror or exc}", hint="pipe the text in, or run vance chat on a terminal") from None
    if len(line) > MAX_LINE_CHARS:
        raise UsageError(
            f"a line on stdin is longer than {MAX_LINE_CHARS:,} characters; stopped reading (the chat is saved)",
            hint="send one message per line, or pass a long text with `vance chat -p -`",
        )
    return line or None


def structure_service(settings, registry=None):
    """The StructureService of `vance structure` and `vance schemas infer`: its models come from
    ``model_factory``, so a ``demo:`` model is the demo's brain and stays offline."""
    from vance_cli.structure.service import StructureService

    return StructureService(settings, registry=registry, model_factory=lambda name: model_factory(name, settings))


@contextlib.contextmanager
def needs_sdk(package: str, message: str, hint: str) -> Iterator[None]:
    """An import in the block that misses ``package`` (the SDK of an optional extra: acp, mcp)
    becomes a ConfigError saying how to install it; any other ImportError is a bug and stays one."""
    from vance_cli.errors import ConfigError

    try:
        yield
    except ImportError as exc:
        if exc.name != package and not (exc.name or "").startswith(package + "."):
            raise
        raise ConfigError(message, hint=hint) from None
