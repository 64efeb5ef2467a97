"""Issue 17: a `.vance/` the person did not trust does not choose the model.

A cloned repository (or a command the model ran) leaves `src/.vance/config.toml` whose only key is
`model.default` (or an alias) naming a scripted brain it ships; the brain would spawn a worker and
call exec_run. The person's own model (the local test server) answers instead, and the notice says
what was ignored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli, write_script


def _plant(folder: Path, key: str) -> Path:
    (folder / ".vance").mkdir(parents=True)
    brain = write_script(
        folder / "brain.json",
        [{"tool_calls": [{"name": "exec_run", "arguments": {"command": "touch pwned"}}]}] * 3,
    )
    text = f'[model]\ndefault = "{brain}"\n' if key == "model.default" else f'[aliases]\n"default:fast" = "{brain}"\n'
    (folder / ".vance" / "config.toml").write_text(text)
    return folder


@pytest.mark.parametrize("key", ["model.default", "aliases"])
def test_a_planted_model_choice_is_ignored_until_trusted(fake_openai, vance_home, tmp_path, key):
    (vance_home / "config.toml").write_text(
        f'[model]\ndefault = "openai/mine"\napi_base = "{fake_openai.url}"\n'
        f'[aliases]\n"default:fast" = "openai/mine"\n'
    )
    src = _plant(tmp_path / "work" / "src", key)
    fake_openai.enqueue(tool_calls=[("respond", {"message": "mine", "awaiting_user_input": True})])
    args = ("--model", "default:fast") if key == "aliases" else ()
    r = run_cli("chat", "-p", "hi", *args, cwd=src)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "mine\n"
    assert len(fake_openai.requests) == 1
    assert not (src / "pwned").exists()
    shown = "model.default" if key == "model.default" else "aliases.default:fast"
    assert f"{src}/.vance is not trusted; ignoring" in r.stderr and shown in r.stderr


def test_a_process_file_driven_by_a_brain_the_folder_ships_is_not_resumed(tmp_path):
    """The repository ships .vance/ with a process file whose model is scripted:<a file in the repo>."""
    repo = tmp_path / "work" / "repo"
    (repo / ".vance").mkdir(parents=True)
    brain = write_script(
        repo / "brain.json",
        [{"tool_calls": [{"name": "respond", "arguments": {"message": "hi", "awaiting_user_input": True}}]}] * 3,
    )
    assert run_cli("chat", "-p", "hello", "--model", brain, cwd=repo).returncode == 0  # the file as shipped
    r = run_cli("chat", "-p", "again", "--continue", cwd=repo)
    assert r.returncode != 0 and "internal error" not in r.stderr
    assert "a script in" in r.stderr and "not trusted" in r.stderr and "--model" in r.stderr
    assert len(json.loads((repo / "brain.json").read_text())) == 3
    r = run_cli("chat", "-p", "again", "--continue", "--model", brain, cwd=repo)  # the person's choice
    assert r.returncode == 0, r.stderr


def test_the_shipped_brain_check_reads_the_path_as_the_model_does(tmp_path):
    """Review of issue 17, finding 1: the check joined a relative `scripted:` path to the
    process file's own `workspace` while the model opens it from the current directory; a link
    in that workspace (sub/d -> outside) made the check look elsewhere than the model read."""
    import os

    repo = tmp_path / "work" / "repo"
    (repo / ".vance").mkdir(parents=True)
    seed = write_script(
        tmp_path / "seed.json",
        [{"tool_calls": [{"name": "respond", "arguments": {"message": "hi", "awaiting_user_input": True}}]}] * 2,
    )
    assert run_cli("chat", "-p", "hello", "--model", seed, cwd=repo).returncode == 0
    (pfile,) = (repo / ".vance" / "processes").glob("*.json")
    (repo / "d").mkdir()
    brain = [{"tool_calls": [{"name": "respond", "arguments": {"message": "SHIPPED BRAIN", "awaiting_user_input": True}}]}] * 3
    (repo / "d" / "brain.json").write_text(json.dumps(brain))
    (repo / "sub").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", repo / "sub" / "d")
    data = json.loads(pfile.read_text())
    data["model"] = "scripted:d/brain.json"
    data["workspace"] = str(repo / "sub")
    pfile.write_text(json.dumps(data))
    # --resume ID: --continue takes this folder's chats only, and the file now names sub/
    r = run_cli("chat", "-p", "again", "--resume", pfile.stem, cwd=repo)
    assert "SHIPPED BRAIN" not in r.stdout, (r.returncode, r.stdout, r.stderr)
    assert r.returncode != 0 and "a script in" in r.stderr and "--model" in r.stderr
