"""The workspace fingerprint (engines/benjy/engine.py): the same digest as the os.walk it replaced
(issue 20: that walk cost ~3x per file), so a run in flight across an upgrade compares equal."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from vance_cli.engines.benjy.engine import FINGERPRINT_SKIP, workspace_fingerprint


def _os_walk_fingerprint(root: Path) -> str:
    """The digest as the os.walk version computed it (the reference)."""
    digest = hashlib.sha1()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in FINGERPRINT_SKIP)
        for name in sorted(files):
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            digest.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _tree(root: Path) -> None:
    for rel in ("a.txt", "B.txt", "z/y/x.py", "z/a.md", "m/n.txt", "m-1/o.txt", ".git/HEAD", "pkg/__pycache__/c.pyc",
                "node_modules/d/index.js", ".hidden"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel * 3)
    (root / "link-to-dir").symlink_to(root / "z")  # listed as a folder, not walked
    (root / "link-to-file").symlink_to(root / "a.txt")
    (root / "dangling").symlink_to(root / "nowhere")
    os.mkdir(os.fsencode(root / "odd") + b"\xe9")  # a name that is not UTF-8
    (Path(os.fsdecode(os.fsencode(root / "odd") + b"\xe9")) / "f").write_text("x")


def test_the_fingerprint_is_the_digest_the_os_walk_gave(tmp_path):
    _tree(tmp_path)
    assert workspace_fingerprint(tmp_path) == _os_walk_fingerprint(tmp_path)
    # and it still sees a change: a new file, a changed size, a file in a skipped folder does not count
    before = workspace_fingerprint(tmp_path)
    (tmp_path / ".git" / "index").write_text("x")
    assert workspace_fingerprint(tmp_path) == before
    (tmp_path / "z" / "y" / "x.py").write_text("changed, longer")
    assert workspace_fingerprint(tmp_path) != before
    assert workspace_fingerprint(tmp_path) == _os_walk_fingerprint(tmp_path)


def test_a_relative_root_and_a_missing_root(tmp_path, monkeypatch):
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert workspace_fingerprint(Path(".")) == _os_walk_fingerprint(Path("."))
    assert workspace_fingerprint(tmp_path / "missing") == _os_walk_fingerprint(tmp_path / "missing")
