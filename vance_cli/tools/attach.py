"""``@path`` in a message: a file of the workspace attached to what the model gets (issue 16).

One function for the console and the line mode (``attach_files``, called by runtime/session.py's
``ChatSession.attach``). A word ``@path`` (at the start or after a space; ``@"a b.txt"`` for a
name with spaces) names a file when that path exists; anything else (``@alice``, an e-mail
address) stays text. The path goes through the file tools' own gate (tools/paths.py
``resolve_for_tool``): a path outside the workspace, through a symlink out of it, or on the
deny-list of secrets is refused as file_read refuses it, and the message is not sent
(``AttachmentRefused``). A folder, a binary file or one over ``MAX_ATTACH_BYTES`` (or past
``MAX_ATTACH_TOTAL`` for the message) is not attached: a note says so, to the person and to the
model. The attached text follows the typed text in ``<attached>`` blocks; ``split_attached``
takes them off again for the screen.

Completion (the console's Tab after ``@``): ``path_matches`` ranks the workspace's paths
(``tools/files.py`` ``workspace_paths``: the file_list walk, secrets left out) for a fragment.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from vance_cli.errors import UsageError
from vance_cli.tools.base import ToolContext
from vance_cli.tools.files import SKIP_DIRS, looks_binary, workspace_paths
from vance_cli.tools.paths import WorkspaceError, display_path, resolve_for_tool

MAX_ATTACH_BYTES = 100_000  # one file
MAX_ATTACH_TOTAL = 200_000  # all the files of one message
MAX_COMPLETION_PATHS = 5_000  # the workspace walk for completion stops here
# Not entered for completion (a path in them is still attached when typed in full).
COMPLETION_SKIP = SKIP_DIRS | {"node_modules", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}

_WORD = re.compile(r'(?<!\S)@("(?:[^"\\\n]|\\.)+"|[^\s"]+)')
_TRAILING = ".,;:!?)]}'"
_BLOCK = re.compile(r'\n\n<attached file="((?:[^"\\]|\\.)*)" bytes="(\d+)">\n')
_NOTE = "\n\n[not attached: @"


class AttachmentRefused(UsageError):
    """An ``@path`` the file tools would refuse (outside the workspace, a secret): nothing is sent."""


@dataclass
class Attached:
    message: str  # what the model gets: the typed text, then the attached files and the notes
    files: list[tuple[str, int]] = field(default_factory=list)  # (path as shown, bytes)
    notes: list[str] = field(default_factory=list)  # an @path that was not attached, and why

    def summary(self) -> str:
        """One line for the person ("" when nothing was named)."""
        parts = []
        if self.files:
            parts.append("attached " + ", ".join(f"{path} ({size:,} bytes)" for path, size in self.files))
        parts += [f"not attached: {note}" for note in self.notes]
        return " · ".join(parts)


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def mention(path: str) -> str:
    """``@path`` as the prompt takes it back (quoted when it holds a space or a quote)."""
    return "@" + (_quote(path) if any(c.isspace() or c == '"' for c in path) else path)


def _candidates(word: str) -> list[str]:
    """The paths a word may name: quoted as is; else itself, then without trailing punctuation."""
    if word.startswith('"'):
        return [re.sub(r"\\(.)", r"\1", word[1:-1])]
    out = [word]
    while word and word[-1] in _TRAILING:
        word = word[:-1]
        out.append(word)
    return [w for w in out if w]


def _existing(root: Path, word: str) -> str | None:
    """The candidate of ``word`` that exists on disk (relative to the workspace, absolute, ~), or None."""
    for candidate in _candidates(word):
        path = Path(os.path.expanduser(candidate))
        if os.path.lexists(path if path.is_absolute() else root / path):
            return str(path) if candidate.startswith("~") else candidate
    return None


def attach_files(text: str, ctx: ToolContext) -> Attached:
    """``text`` with every ``@path`` of the workspace attached (see the module's docstring).

    Raises AttachmentRefused (a UsageError, exit 2) for a path the file tools refuse."""
    if "@" not in text:
        return Attached(text)
    root = Path(ctx.workspace)
    found: list[tuple[str, Path]] = []  # (shown, target), in order, once each
    notes: list[str] = []
    for match in _WORD.finditer(text):
        name = _existing(root, match.group(1))
        if name is None:
            continue
        try:
            workspace, target = resolve_for_tool(ctx, name)
        except WorkspaceError as exc:
            raise AttachmentRefused(f"@{name} cannot be attached: {exc.message}; nothing was sent",
                                    hint=exc.hint or "name a file of the workspace") from exc
        shown = display_path(workspace, target)
        if all(t != target for _, t in found):
            found.append((shown, target))
    out = Attached(text)
    total = 0
    blocks: list[str] = []
    for shown, target in found:
        note = None
        if target.is_dir():
            note = f"@{shown} is a folder (the model can list it with file_list)"
        elif not target.is_file():
            note = f"@{shown} is not a regular file"
        else:
            size = target.stat().st_size
            if size > MAX_ATTACH_BYTES:
                note = (f"@{shown} is too big to attach ({size:,} bytes; the limit is {MAX_ATTACH_BYTES:,}); "
                        "the model can read it in parts with file_read")
            elif total + size > MAX_ATTACH_TOTAL:
                note = f"@{shown} would take the message past {MAX_ATTACH_TOTAL:,} bytes of attached files"
            elif looks_binary(target):
                note = f"@{shown} looks like a binary file ({size:,} bytes); only text is attached"
            else:
                content = target.read_text(encoding="utf-8", errors="replace")
                total += size
                out.files.append((shown, size))
                blocks.append(f'\n\n<attached file={_quote(shown)} bytes="{size}">\n{content}'
                              f'{"" if content.endswith(chr(10)) or not content else chr(10)}</attached>')
        if note is not None:
            out.notes.append(note)
            blocks.append(f"\n\n[not attached: {note}]")
    out.message = text + "".join(blocks)
    return out


def split_attached(message: str) -> tuple[str, list[tuple[str, int]]]:
    """(the typed text, the attached files) of a message ``attach_files`` made; a message without
    attachments is all typed text."""
    block, note = _BLOCK.search(message), message.find(_NOTE)
    starts = ([block.start()] if block else []) + ([note] if note >= 0 else [])
    if not starts:
        return message, []
    files = [(re.sub(r"\\(.)", r"\1", m.group(1)), int(m.group(2))) for m in _BLOCK.finditer(message)]
    return message[: min(starts)], files


def at_word(before_cursor: str) -> str | None:
    """The fragment of an ``@path`` being typed at the end of ``before_cursor`` (may be ""), or None."""
    m = re.search(r'(?<!\S)@(?:"([^"\n]*)|([^\s"]*))$', before_cursor)
    return None if m is None else (m.group(1) if m.group(1) is not None else m.group(2))


def workspace_listing(ctx: ToolContext) -> list[str]:
    """The paths completion offers: the workspace as file_list walks it, heavy tool folders skipped."""
    try:
        return workspace_paths(ctx, cap=MAX_COMPLETION_PATHS, skip=COMPLETION_SKIP)
    except (WorkspaceError, OSError):
        return []


def path_matches(fragment: str, paths: list[str], limit: int = 8) -> list[str]:
    """The paths ``fragment`` may be completing, best first: a path that starts with it, then one
    with a part (after a ``/``) that starts with it, then one that holds it; shorter first. Case
    matters only when the fragment has a capital letter."""
    fold = fragment == fragment.lower()
    needle = fragment.lower() if fold else fragment
    ranked: list[tuple[int, int, str]] = []
    for path in paths:
        hay = path.lower() if fold else path
        if hay.startswith(needle):
            rank = 0
        elif f"/{needle}" in hay:
            rank = 1
        elif needle in hay:
            rank = 2
        else:
            continue
        ranked.append((rank, len(path), path))
    ranked.sort()
    return [path for _, _, path in ranked[:limit]]


def complete_word(fragment: str, matches: list[str]) -> str | None:
    """What ``@fragment`` becomes on Tab: the one match; else the matches' common start when it
    is longer than the fragment; else the best match. None: no match."""
    if not matches:
        return None
    if len(matches) == 1:
        return matches[0]
    common = os.path.commonprefix(matches)
    if len(common) > len(fragment) and common.lower().startswith(fragment.lower()):
        return common
    return matches[0]
