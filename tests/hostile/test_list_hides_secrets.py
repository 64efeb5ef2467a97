"""Issue 17 review: file_list leaves out what file_read refuses (one gate: paths.is_hidden).

A chat started in the home folder: a listing of `.`, recursive or not, never names `~/.ssh`,
`~/.aws`, `$VANCE_HOME` or what is in them, nor a symlink that leads there.
"""

from __future__ import annotations

import json
import os

from tests.hostile.test_sandbox_holes import KEY, _chat, _script, _tool_results


def _entries(listing: str) -> list[str]:
    return [line for line in listing.splitlines()[1:] if not line.startswith("[")]


def _home(tmp_path, fake_openai):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519_work_github").write_text("PRIVATE")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials_of_acme").write_text("AWS")
    (home / "project").mkdir()
    (home / "project" / "notes.txt").write_text("hello")
    os.symlink(home / ".ssh" / "id_ed25519_work_github", home / "project" / "deploy_key_link")
    vhome = home / ".vance"
    vhome.mkdir()
    (vhome / "config.toml").write_text(
        f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\napi_key = "{KEY}"\n'
    )
    return home, {"HOME": str(home), "VANCE_HOME": str(vhome)}


def test_a_recursive_list_of_home_leaves_out_the_secrets(fake_openai, tmp_path):
    home, env = _home(tmp_path, fake_openai)
    _script(fake_openai, ("file_list", {"path": ".", "recursive": True}))
    _chat(home, env=env)
    (listing,) = _tool_results(fake_openai)
    assert "project/notes.txt" in listing
    assert "left out: they hold credentials" in listing
    sent = json.dumps(fake_openai.requests[-1]["messages"])
    for name in ("id_ed25519_work_github", "credentials_of_acme", "config.toml", "deploy_key_link"):
        assert name not in sent, (name, listing)
    entries = _entries(listing)
    assert not [e for e in entries if ".ssh" in e or ".aws" in e or ".vance" in e], entries


def test_a_flat_list_of_home_leaves_out_the_secret_folders(fake_openai, tmp_path):
    home, env = _home(tmp_path, fake_openai)
    _script(fake_openai, ("file_list", {"path": "."}), ("file_read", {"path": ".ssh/id_ed25519_work_github"}))
    _chat(home, env=env)
    listing, read = _tool_results(fake_openai)
    assert "project/" in listing
    assert _entries(listing) == ["project/"], listing
    assert "is hidden from the tools" in read
