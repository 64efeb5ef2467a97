"""Text helpers every floor may use: text from outside made safe, and text made short.

Safe text, for the three boundaries where odd characters do harm:

- ``safe_text``: lone surrogates (a non-UTF-8 file name read with surrogateescape, a ``\\ud800``
  escape in a model's JSON) cannot be encoded as UTF-8, so a process file holding one could never
  be saved again. They become U+FFFD.
- ``for_terminal``: escape and control sequences a model or a file wrote (OSC 52 clipboard writes,
  OSC 0 window titles, CSI 2J screen clears, 8-bit C1 controls, a carriage return that overwrites
  the line) are removed before the text reaches a terminal. Tabs and newlines stay.
- ``json_text``: JSON output keeps every character of the data; the ones a terminal or a strict
  UTF-8 reader would choke on (C1 controls, DEL, lone surrogates, U+2028/9) are written as
  ``\\uXXXX`` escapes, which every JSON parser reads back to the same string.

Short text, one copy each: ``shorten`` (a cut marked with "…"), ``json_pointer`` (RFC 6901 paths
in messages) and ``did_you_mean`` (the closest known name for a misspelt one).

Standard library only: the CLI imports this on every command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")

# ESC-introduced sequences (7-bit) and their 8-bit C1 twins, then any other control character.
_TERMINAL_UNSAFE = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]?                       # CSI ... final byte (ESC [ 2 J)
  | \x9b[0-?]*[ -/]*[@-~]?                         # 8-bit CSI
  | \x1b[\]PX^_][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?   # OSC, DCS, SOS, PM, APC ... BEL or ST
  | [\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?  # their 8-bit forms
  | \x1b[ -/]*[0-~]?                               # other escapes (ESC c, ESC ( B, ESC 7 ...)
  | [\x00-\x08\x0b-\x1f\x7f-\x9f]                  # remaining C0 (not \t \n), DEL, C1
    """,
    re.VERBOSE,
)

_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def safe_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (encodable as UTF-8); unchanged otherwise."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def safe_data(value: Any) -> Any:
    """``safe_text`` applied to every string (keys included) of a JSON-like value."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_data(k): safe_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_data(v) for v in value]
    return value


def for_terminal(text: str) -> str:
    """``text`` without terminal control sequences and with lone surrogates replaced."""
    if text.isprintable() or not _TERMINAL_UNSAFE.search(text):
        return safe_text(text)
    return safe_text(_TERMINAL_UNSAFE.sub("", text))


def json_text(obj: Any, **kwargs: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False)`` with terminal-unsafe characters as ``\\uXXXX``."""
    text = json.dumps(obj, ensure_ascii=False, **kwargs)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def file_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (surrogateescape) shown as ``\\xNN``."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raw = name.encode("utf-8", "surrogateescape") if _only_escaped(name) else safe_text(name).encode("utf-8")
        return raw.decode("utf-8", "backslashreplace")
    return name


def _only_escaped(text: str) -> bool:
    """Every surrogate in ``text`` stands for a raw byte (surrogateescape's U+DC80..U+DCFF)."""
    return all("\udc80" <= ch <= "\udcff" for ch in _SURROGATE.findall(text))


def check_utf8_input(text: str, what: str) -> str | None:
    """Why ``text`` (decoded with surrogateescape, as argv is) is not UTF-8, or None when it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        ch = text[exc.start]
        what_char = (
            f"byte 0x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else f"lone surrogate U+{ord(ch):04X}"
        )
        return f"{what} is not valid UTF-8 ({what_char} at character {exc.start + 1})"
    return None


ELLIPSIS = "…"


def shorten(
    text: str, limit: int, *, one_line: bool = False, keep_end: bool = False, mark: str = ELLIPSIS, tidy: bool = False
) -> str:
    """``text`` in at most ``limit`` characters; what is cut off is shown as ``mark``.

    ``one_line`` first turns every run of whitespace (newlines too) into one space. ``keep_end``
    keeps the end of the text instead of its start (the last lines of an output). ``tidy`` drops
    the whitespace the cut leaves beside ``mark``.
    """
    if one_line:
        text = " ".join(text.split())
    if len(text) <= limit:
        return text
    keep = max(limit - len(mark), 0)
    if keep_end:
        part = text[len(text) - keep :] if keep else ""
        return mark + (part.lstrip() if tidy else part)
    part = text[:keep]
    return (part.rstrip() if tidy else part) + mark


def json_pointer(parts: Iterable[object], root: str = "") -> str:
    """The RFC 6901 pointer of a path (``["a", "b/c", 0]`` -> ``/a/b~1c/0``); ``root`` for the empty path.

    Messages show the root as words ("(root)", "the root") so a line never starts with ":".
    """
    tokens = [str(p).replace("~", "~0").replace("/", "~1") for p in parts]
    return "/" + "/".join(tokens) if tokens else root


def pointer_token(token: str) -> str:
    """One reference token of a JSON pointer read back: ``~1`` is ``/``, ``~0`` is ``~`` (RFC 6901 order)."""
    return token.replace("~1", "/").replace("~0", "~")


def did_you_mean(word: str, choices: Iterable[str], *, n: int = 1) -> str:
    """``"; did you mean 'api_base'?"`` for the closest choices (up to ``n``, "or" between), or ``""``."""
    import difflib  # only when a name was misspelt

    close = difflib.get_close_matches(word, list(choices), n=n, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def json_depth(value: Any) -> int:
    """How many JSON levels ``value`` nests (a scalar is 0), without recursion."""
    best = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            best = max(best, depth)
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            best = max(best, depth)
            stack.extend((v, depth + 1) for v in node)
    return best


class HeadTail:
    """Keeps the first third and the last two thirds of a stream within ``cap`` characters, the
    cut marked in the middle (exec_run's output, an MCP tool's result).

    The tail gets more room because errors and summaries come at the end of build output.
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head_cap = cap // 3
        self.tail_cap = cap - self.head_cap
        self.head = ""
        self._tail: list[str] = []
        self._tail_len = 0
        self.total = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        if len(self.head) < self.head_cap:
            take = self.head_cap - len(self.head)
            self.head += text[:take]
            text = text[take:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            # Compact now and then, not per chunk.
            if self._tail_len > 2 * self.tail_cap:
                kept = "".join(self._tail)[-self.tail_cap :]
                self._tail = [kept]
                self._tail_len = len(kept)

    @property
    def cut(self) -> int:
        return max(0, self.total - self.cap)

    def text(self) -> str:
        tail = "".join(self._tail)
        if self.total <= self.cap:
            return self.head + tail
        return f"{self.head}\n[... {self.cut:,} chars cut ...]\n{tail[-self.tail_cap :]}"


def shown_url(url: str | None) -> str | None:
    """``url`` as messages show it: a password in it (``user:pass@``) and its query (``?key=…``)
    are left out, so an error line, the retry line, `vance doctor` or `vance mcp list` never
    prints a credential (a model's api_base, an MCP server's url)."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "(a URL that does not parse)"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, netloc, parts.path, "…" if parts.query else "", ""))
