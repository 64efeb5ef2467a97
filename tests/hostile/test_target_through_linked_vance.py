"""Issue 17 third review (17d, finding 4): with a .vance that links out, `--target NAME` is refused
before anything is made through the link (state_folder checks the state folder first)."""

from __future__ import annotations

import os

from tests.engines.benjy_brain import Brain
from tests.helpers import run_cli


def test_d1_vance_link_out_with_target(fake_openai, tmp_path, vance_home):
    outside = tmp_path / "persons-notes"
    outside.mkdir()
    clone = tmp_path / "work"
    clone.mkdir(exist_ok=True)
    os.symlink(outside, clone / ".vance")
    fake_openai.responder = Brain(items=1, worker_files=lambda n, p: [("pwned.txt", "x\n")]).reply_body
    env = {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    r = run_cli("benjy", "run", "update the docs", "--target", "docs", env=env, cwd=clone)
    made = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))
    assert made == [], (r.returncode, r.stderr[-400:], made)
    assert "internal error" not in r.stderr
