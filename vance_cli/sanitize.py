"""Text from outside (a model, a file, a file name) made safe to store and to print.

One place for the three boundaries where odd characters do harm:

- ``safe_text``: lone surrogates (a non-UTF-8 file name read with surrogateescape, a ``\\ud800``
  escape in a model's JSON) cannot be encoded as UTF-8, so a process file holding one could never
  be saved again. They become U+FFFD.
- ``for_terminal``: escape and control sequences a model or a file wrote (OSC 52 clipboard writes,
  OSC 0 window titles, CSI 2J screen clears, 8-bit C1 controls, a carriage return that overwrites
  the line) are removed before the text reaches a terminal. Tabs and newlines stay.
- ``json_text``: JSON output keeps every character of the data; the ones a terminal or a strict
  UTF-8 reader would choke on (C1 controls, DEL, lone surrogates, U+2028/9) are written as
  ``\\uXXXX`` escapes, which every JSON parser reads back to the same string.

Standard library only: the CLI imports this on every command.
"""

from __future__ import annotations

import json
import re
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
        what_char = f"byte 0x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else f"lone surrogate U+{ord(ch):04X}"
        return f"{what} is not valid UTF-8 ({what_char} at character {exc.start + 1})"
    return None
