"""`@path` attachments (tools/attach.py): what is attached, what is refused as file_read refuses
it, what stays text, and completion's ranking."""

from __future__ import annotations

import os

import pytest

from vance_cli.tools.attach import (
    MAX_ATTACH_BYTES,
    AttachmentRefused,
    at_word,
    attach_files,
    complete_word,
    path_matches,
    split_attached,
    workspace_listing,
)
from vance_cli.tools.base import ToolContext


@pytest.fixture
def ctx(ws):
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('hi')\n")
    (ws / "notes.md").write_text("# notes\nline two")
    return ToolContext(workspace=ws)


def test_a_file_is_attached_after_the_typed_text_and_split_off_again(ctx):
    out = attach_files("explain @src/app.py, please", ctx)  # trailing punctuation is not the name
    assert out.files == [("src/app.py", 12)] and out.notes == []
    assert out.message == 'explain @src/app.py, please\n\n<attached file="src/app.py" bytes="12">\nprint(\'hi\')\n</attached>'
    assert split_attached(out.message) == ("explain @src/app.py, please", [("src/app.py", 12)])
    assert out.summary() == "attached src/app.py (12 bytes)"


def test_several_files_once_each_a_quoted_name_and_an_absolute_path_inside(ctx, ws):
    (ws / "my notes.txt").write_text("spaced")
    out = attach_files(f'@notes.md and @"my notes.txt" and @{ws}/notes.md', ctx)
    assert [p for p, _ in out.files] == ["notes.md", "my notes.txt"]
    assert "line two\n</attached>" in out.message  # a file without a final newline still closes its block
    assert split_attached(out.message)[1] == [("notes.md", 16), ("my notes.txt", 6)]


def test_words_that_name_no_file_stay_text(ctx):
    for text in ("ask @alice about it", "mail bob@example.com", "@ alone", "no at sign"):
        out = attach_files(text, ctx)
        assert out.message == text and out.files == [] and out.notes == []
        assert split_attached(text) == (text, [])


def test_a_folder_a_binary_and_a_big_file_are_not_attached_with_a_note(ctx, ws):
    (ws / "logo.png").write_bytes(b"\x89PNG\x00\x01")
    (ws / "big.log").write_text("x" * (MAX_ATTACH_BYTES + 1))
    out = attach_files("look at @src @logo.png @big.log", ctx)
    assert out.files == []
    assert [n.split(" ")[0] for n in out.notes] == ["@src", "@logo.png", "@big.log"]
    assert "folder" in out.notes[0] and "binary" in out.notes[1] and "too big" in out.notes[2]
    for note in out.notes:  # the model is told too
        assert f"[not attached: {note}]" in out.message
    assert split_attached(out.message)[0] == "look at @src @logo.png @big.log"


def test_a_path_outside_the_workspace_is_refused_as_the_file_tools_refuse_it(ctx, ws):
    (ws.parent / "secret.txt").write_text("s3cret")
    with pytest.raises(AttachmentRefused) as exc:
        attach_files("read @../secret.txt", ctx)
    assert "contains '..'" in exc.value.message and "nothing was sent" in exc.value.message
    assert exc.value.exit_code == 2
    with pytest.raises(AttachmentRefused, match="outside the workspace"):
        attach_files(f"read @{ws.parent}/secret.txt", ctx)
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    with pytest.raises(AttachmentRefused, match="through a symlink"):
        attach_files("read @link.txt", ctx)


def test_a_secret_on_the_deny_list_is_refused(ctx, ws, monkeypatch):
    monkeypatch.setenv("HOME", str(ws))  # the workspace is the home folder: ~/.ssh lies inside it
    (ws / ".ssh").mkdir()
    (ws / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    with pytest.raises(AttachmentRefused, match="hidden from the tools: it holds credentials"):
        attach_files("what is @.ssh/id_ed25519", ctx)
    assert ".ssh/" not in workspace_listing(ctx)  # completion never offers it


def test_completion_ranks_prefix_then_a_part_then_anywhere(ctx):
    paths = workspace_listing(ctx)
    assert paths == ["notes.md", "src/", "src/app.py"]
    assert path_matches("s", paths) == ["src/", "src/app.py", "notes.md"]
    assert path_matches("app", paths) == ["src/app.py"]
    assert path_matches("APP", paths) == []  # a capital: exact case
    assert complete_word("s", path_matches("s", paths)) == "src/"
    assert complete_word("zzz", []) is None
    assert at_word("read @sr") == "sr" and at_word("read @") == "" and at_word("mail a@b") is None
    assert at_word('see @"my no') == "my no"
