"""The file tools (file_read, file_list, file_write), all confined to the process's workspace.

Every path goes through the one path gate (tools/paths.py); exec_run lives in exec_run.py. Every
failure becomes an error ToolResult for the model; nothing escapes ``run``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vance_cli.store.atomic import atomic_write_bytes
from vance_cli.text import file_name
from vance_cli.tools.base import Tool, ToolContext, ToolResult
from vance_cli.tools.paths import (
    INCLUDE_PATH,
    PROTECTED_DIRS_WHY,
    display_path,
    guarded,
    is_hidden,
    protected_dir,
    resolve_for_tool,
    secret_paths,
)

# Caps: big enough for real source files and build logs, small enough for a model's context.
MAX_READ_CHARS = 200_000
MAX_LIST_ENTRIES = 5_000
DEFAULT_LIST_ENTRIES = 500

SKIP_DIRS = frozenset({".git", "__pycache__"})
_BINARY_SNIFF_BYTES = 8192
_SKIP_CHUNK = 65_536

# --------------------------------------------------------------------------- file_read

FILE_READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File path relative to the workspace root.",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Number of lines to skip from the start (0 = from the first line).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Maximum number of lines to return.",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


def looks_binary(path: Path) -> bool:
    """The file's first 8 KB hold a NUL byte or are not UTF-8 (file_read and @path attachments refuse it)."""
    with open(path, "rb") as f:
        head = f.read(_BINARY_SNIFF_BYTES)
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the sniff window is still text.
        return not (len(head) == _BINARY_SNIFF_BYTES and exc.start >= len(head) - 3)
    return False


def _skip_lines(f: Any, count: int) -> int:
    """Skip up to `count` lines without holding a huge line in memory; returns lines skipped."""
    skipped = 0
    in_line = False
    while skipped < count:
        chunk = f.readline(_SKIP_CHUNK)
        if not chunk:
            if in_line:  # a last line without a newline
                skipped += 1
            break
        if chunk.endswith("\n"):
            skipped += 1
            in_line = False
        else:
            in_line = True
    return skipped


@dataclass
class _ReadOut:
    text: str
    lines: int  # complete or final lines returned
    cut_in_line: bool  # stopped by the cap in the middle of a line
    more: bool  # content follows what was returned
    skipped: int


def _read_text(path: Path, offset: int, limit: int | None) -> _ReadOut:
    with open(path, encoding="utf-8", errors="replace") as f:
        skipped = _skip_lines(f, offset)
        parts: list[str] = []
        used = 0
        lines = 0
        cut_in_line = False
        eof = False
        while limit is None or lines < limit:
            room = MAX_READ_CHARS - used
            if room <= 0:
                break
            chunk = f.readline(room)
            if not chunk:
                eof = True
                break
            parts.append(chunk)
            used += len(chunk)
            if chunk.endswith("\n"):
                lines += 1
            elif len(chunk) < room:  # final line without a newline
                lines += 1
                eof = True
                break
            else:  # the cap fell inside a line
                if f.read(1):
                    cut_in_line = True
                else:
                    lines += 1
                    eof = True
                break
        more = cut_in_line or (not eof and f.read(1) != "")
    return _ReadOut("".join(parts), lines, cut_in_line, more, skipped)


async def _file_read(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await asyncio.to_thread(_file_read_sync, args, ctx)


def _file_read_sync(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    rel = args["path"]
    offset = max(0, int(args.get("offset") or 0))
    limit = args.get("limit")
    limit = None if limit is None else max(1, int(limit))
    root, target = resolve_for_tool(ctx, rel)
    shown = display_path(root, target)
    if not target.exists():
        return ToolResult.error(f"no such file: {rel!r}; call file_list to see what exists")
    if target.is_dir():
        return ToolResult.error(f"{shown!r} is a folder, not a file; call file_list with path={shown!r}")
    if not target.is_file():
        return ToolResult.error(f"{shown!r} is not a regular file")
    size = target.stat().st_size
    if looks_binary(target):
        return ToolResult.error(f"{shown!r} looks like a binary file ({size:,} bytes); file_read reads text only")

    out = _read_text(target, offset, limit)
    data = {
        "path": shown,
        "size": size,
        "offset": offset,
        "lines": out.lines,
        "truncated": out.more,
    }
    text = out.text
    if not text:
        if offset == 0:
            return ToolResult(content=f"({shown} is empty)", data=data)
        return ToolResult(
            content=f"(offset {offset} is at or past the end: {shown} has {out.skipped} lines)",
            data=data,
        )
    if not out.more:
        return ToolResult(content=text, data=data)

    first = offset + 1
    if out.cut_in_line:
        last = offset + out.lines + 1
        note = (
            f"[truncated: the {MAX_READ_CHARS:,}-character cap fell inside line {last}; showed lines "
            f"{first}-{last} (the last one partly). Continue with file_read offset={last} to read from "
            f"line {last + 1}]"
        )
    else:
        last = offset + out.lines
        why = "limit reached" if limit is not None and out.lines >= limit else f"{MAX_READ_CHARS:,}-character cap"
        note = (
            f"[truncated ({why}): showed lines {first}-{last} of {shown} ({size:,} bytes); more follow. "
            f"Continue with file_read offset={last}]"
        )
    sep = "" if text.endswith("\n") else "\n"
    return ToolResult(content=f"{text}{sep}{note}", data=data)


def make_file_read() -> Tool:
    return Tool(
        name="file_read",
        description=(
            "Read a UTF-8 text file from the workspace. Paths are relative to the workspace root. "
            f"Returns at most {MAX_READ_CHARS:,} characters; use offset/limit (in lines) to page "
            "through larger files. Binary files are refused."
        ),
        parameters=FILE_READ_PARAMETERS,
        run=guarded("file_read", _file_read),
    )


# --------------------------------------------------------------------------- file_list

FILE_LIST_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "default": ".",
            "description": "Folder relative to the workspace root; '.' or '' is the root.",
        },
        "recursive": {
            "type": "boolean",
            "default": False,
            "description": "List sub-folders too (skips .git and __pycache__).",
        },
        "max_entries": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIST_ENTRIES,
            "default": DEFAULT_LIST_ENTRIES,
            "description": "Stop after this many entries.",
        },
    },
    "additionalProperties": False,
}


_NOT_UTF8_NOTE = (
    "[some names are not valid UTF-8 and are shown with \\xNN escapes; the file tools cannot open them by these names]"
)


def _entry(entry: os.DirEntry[str], rel: str) -> dict[str, Any]:
    if entry.is_symlink():
        # Not followed: the target may be outside the workspace, and following could loop.
        try:
            target = os.readlink(entry.path)
        except OSError:
            target = "?"
        return {"path": rel, "type": "symlink", "target": file_name(target), "size": None}
    if entry.is_dir(follow_symlinks=False):
        return {"path": rel, "type": "dir", "size": None}
    try:
        size = entry.stat(follow_symlinks=False).st_size
    except OSError:
        size = None
    kind = "file" if entry.is_file(follow_symlinks=False) else "other"
    return {"path": rel, "type": kind, "size": size}


def _hidden_entry(entry: os.DirEntry[str], hidden: Callable[[Path], bool]) -> bool:
    """The deny-list's gate for one entry: by its own path, and a symlink by where it leads."""
    path = Path(entry.path)
    if hidden(path):
        return True
    if entry.is_symlink():
        try:
            return hidden(path.resolve())
        except (OSError, RuntimeError):
            return False
    return False


def _scan(
    folder: Path,
    prefix: str,
    recursive: bool,
    out: list[dict[str, Any]],
    cap: int,
    notes: list[str],
    hidden: Callable[[Path], bool] = lambda _path: False,
    counts: dict[str, int] | None = None,
    skip: frozenset[str] = SKIP_DIRS,
) -> bool:
    """Append entries in sorted order (a folder's contents right after it); True when capped.

    An entry ``hidden`` says is a secret (what file_read refuses) is left out, and counted; folders
    named in ``skip`` are not entered when ``recursive``."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        notes.append(f"[cannot list {prefix or '.'}: {exc.strerror or exc}]")
        return False
    for entry in entries:
        is_dir = entry.is_dir(follow_symlinks=False)
        if recursive and is_dir and entry.name in skip:
            continue
        if _hidden_entry(entry, hidden):
            if counts is not None:
                counts["hidden"] = counts.get("hidden", 0) + 1
            continue
        if len(out) >= cap:
            return True
        shown = file_name(entry.name)  # a non-UTF-8 name is shown with \xNN escapes
        if shown != entry.name and _NOT_UTF8_NOTE not in notes:
            notes.append(_NOT_UTF8_NOTE)
        rel = f"{prefix}{shown}"
        out.append(_entry(entry, rel))
        if recursive and is_dir and _scan(Path(entry.path), f"{rel}/", recursive, out, cap, notes, hidden, counts, skip):
            return True
    return False


def workspace_paths(ctx: ToolContext, *, cap: int, skip: frozenset[str] = SKIP_DIRS) -> list[str]:
    """The workspace's files and folders (a folder as ``name/``), as file_list walks it: sorted,
    secrets left out, folders in ``skip`` not entered, at most ``cap``."""
    root, target = resolve_for_tool(ctx, ".")
    entries: list[dict[str, Any]] = []
    secrets = secret_paths(ctx)
    _scan(target, "", True, entries, cap, [], lambda path: is_hidden(root, path, secrets), None, skip)
    return [e["path"] + ("/" if e["type"] == "dir" else "") for e in entries]


def _format_entry(e: dict[str, Any]) -> str:
    if e["type"] == "dir":
        return f"{e['path']}/"
    if e["type"] == "symlink":
        return f"{e['path']} -> {e['target']}  (symlink)"
    size = "" if e["size"] is None else f"  ({e['size']:,} bytes)"
    other = "  (special file)" if e["type"] == "other" else ""
    return f"{e['path']}{size}{other}"


async def _file_list(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await asyncio.to_thread(_file_list_sync, args, ctx)


def _file_list_sync(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    rel = args.get("path", ".")
    recursive = bool(args.get("recursive", False))
    cap = min(MAX_LIST_ENTRIES, max(1, int(args.get("max_entries") or DEFAULT_LIST_ENTRIES)))
    root, target = resolve_for_tool(ctx, rel)
    shown = display_path(root, target)
    if not target.exists():
        return ToolResult.error(f"no such folder: {rel!r}; call file_list with path='.' to see the workspace root")
    if not target.is_dir():
        return ToolResult.error(f"{shown!r} is a file, not a folder; call file_read with path={shown!r}")

    entries: list[dict[str, Any]] = []
    notes: list[str] = []
    secrets = secret_paths(ctx)
    counts: dict[str, int] = {}
    capped = _scan(target, "", recursive, entries, cap, notes, lambda path: is_hidden(root, path, secrets), counts)
    if counts.get("hidden"):
        notes.append(
            f"[{counts['hidden']} entries left out: they hold credentials ($VANCE_HOME, ~/.ssh, ~/.aws and the like) "
            "and are hidden from the tools]"
        )
    mode = ", recursive, skipping .git and __pycache__" if recursive else ""
    label = "." if shown == "." else f"{shown}/"
    lines = [f"Contents of {label} ({len(entries)} entries{mode}):"]
    lines += [_format_entry(e) for e in entries] or ["(empty folder)"]
    lines += notes
    if capped:
        lines.append(
            f"[capped at {cap} entries; more exist. List a sub-folder, or raise max_entries (up to {MAX_LIST_ENTRIES})]"
        )
    return ToolResult(
        content="\n".join(lines),
        data={"path": shown, "entries": entries, "capped": capped},
    )


def make_file_list() -> Tool:
    return Tool(
        name="file_list",
        description=(
            "List a folder of the workspace: sorted entries, folders end with '/', files show their size. "
            "Set recursive=true to include sub-folders."
        ),
        parameters=FILE_LIST_PARAMETERS,
        run=guarded("file_list", _file_list),
    )


# --------------------------------------------------------------------------- file_write

FILE_WRITE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File path relative to the workspace root; parent folders are created.",
        },
        "content": {"type": "string", "description": "Text to write (UTF-8)."},
        "append": {
            "type": "boolean",
            "default": False,
            "description": "Append to the file instead of replacing it.",
        },
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}


async def _file_write(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Write locally, or through ``ctx.extra["file_writer"]`` where a host offers one (an editor's
    fs/write_text_file under `vance acp`): an async (process_id, path, text) that writes the file."""
    writer = (ctx.extra or {}).get("file_writer")
    if writer is None:
        return await asyncio.to_thread(_file_write_sync, args, ctx)
    planned = await asyncio.to_thread(_plan_write, args, ctx)
    if isinstance(planned, ToolResult):
        return planned
    try:
        text = planned.data.decode("utf-8")
    except UnicodeDecodeError:  # an append to a file that is not UTF-8: the editor takes text only
        return await asyncio.to_thread(_write_planned, planned)
    await writer(ctx.process_id, planned.target, text)
    return planned.result()


@dataclass
class _Write:
    target: Path
    shown: str
    data: bytes  # the whole new content of the file
    added: int
    existed: bool
    append: bool

    def result(self) -> ToolResult:
        total = len(self.data)
        if self.append and self.existed:
            text = f"appended {self.added:,} bytes to {self.shown} (now {total:,} bytes)"
        else:
            text = f"{'replaced' if self.existed else 'created'} {self.shown} ({total:,} bytes)"
        return ToolResult(content=text, data={"path": self.shown, "bytes": total, "created": not self.existed})


def _plan_write(args: dict[str, Any], ctx: ToolContext) -> _Write | ToolResult:
    """The checks of a file_write and what it would write; a ToolResult error when it may not."""
    rel = args["path"]
    content: str = args["content"]
    append = bool(args.get("append", False))
    root, target = resolve_for_tool(ctx, rel)
    if target == root:
        return ToolResult.error("file_write needs a file path, not the workspace root")
    shown = display_path(root, target)
    guarded = protected_dir(root, target)
    if guarded is not None:
        where = f"is {PROTECTED_DIRS_WHY[guarded]}" if guarded == INCLUDE_PATH else f"is under {guarded}/, {PROTECTED_DIRS_WHY[guarded]}"
        return ToolResult.error(
            f"file_write refused: {shown!r} {where}; "
            f"the tools may read there but not write. Write elsewhere in the workspace, or ask the "
            f"user to make this change themselves"
        )
    if target.is_dir():
        return ToolResult.error(f"{shown!r} is a folder; choose a file path inside it")
    if target.exists() and not target.is_file():
        return ToolResult.error(f"{shown!r} is not a regular file")
    new = content.encode("utf-8")
    existed = target.exists()
    old = target.read_bytes() if append and existed else b""
    return _Write(target, shown, old + new, len(new), existed, append)


def _write_planned(planned: _Write) -> ToolResult:
    # `target` is fully resolved and inside the root, so every missing parent is a plain name in it.
    planned.target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(planned.target, planned.data, sync_folder=True)
    return planned.result()


def _file_write_sync(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    planned = _plan_write(args, ctx)
    return planned if isinstance(planned, ToolResult) else _write_planned(planned)


MAX_DIFF_SOURCE = 1_000_000  # bytes of the old file read for the approval diff
MAX_DIFF_LINES = 2_000


async def _file_write_preview(args: dict[str, Any], ctx: ToolContext):
    return await asyncio.to_thread(_file_write_preview_sync, args, ctx)


def _file_write_preview_sync(args: dict[str, Any], ctx: ToolContext):
    """What the person sees before a file_write: the path and a unified diff of the change."""
    import difflib

    from vance_cli.tools.approval import Preview
    from vance_cli.tools.paths import WorkspaceError

    rel = str(args.get("path", ""))
    content = str(args.get("content", ""))
    append = bool(args.get("append", False))
    try:
        root, target = resolve_for_tool(ctx, rel)
    except WorkspaceError as exc:
        return Preview(title="write a file", subject=rel, fields=[("path", rel), ("refused", exc.message)])
    shown = display_path(root, target)
    old_text: str | None = ""
    existed = target.is_file()
    if existed:
        with open(target, "rb") as f:
            raw = f.read(MAX_DIFF_SOURCE + 1)
        try:
            old_text = raw[:MAX_DIFF_SOURCE].decode("utf-8")
        except UnicodeDecodeError:
            old_text = None
        size = target.stat().st_size
    new_text = (old_text or "") + content if append else content
    what = ("append to" if append else "replace") if existed else "create"
    fields = [("path", shown), ("change", f"{what} ({len(content.encode('utf-8')):,} bytes written)")]
    if old_text is None:
        return Preview(title="write a file", subject=shown, fields=[*fields, ("old file", f"not UTF-8 text ({size:,} bytes)")])
    lines = list(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"a/{shown}" if existed else "/dev/null",
            tofile=f"b/{shown}",
        )
    )
    if existed and len(raw) > MAX_DIFF_SOURCE:
        fields.append(("note", f"the diff covers the first {MAX_DIFF_SOURCE:,} bytes of the old file"))
    if len(lines) > MAX_DIFF_LINES:
        cut = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"... {cut:,} more diff lines\n"]
    diff = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return Preview(title="write a file", subject=shown, fields=fields, diff=diff or "(no change)")


def make_file_write() -> Tool:
    return Tool(
        name="file_write",
        description=(
            "Write a UTF-8 text file in the workspace (replaces it, or appends with append=true). "
            "Missing parent folders are created. The write is atomic."
        ),
        parameters=FILE_WRITE_PARAMETERS,
        run=guarded("file_write", _file_write),
        side_effects=True,
        preview=_file_write_preview,
    )
