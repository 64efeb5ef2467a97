"""Issue 17: a `.vance/` the person did not trust does not choose the model.

A cloned repository (or a command the model ran) leaves `src/.vance/config.toml` whose only key is
`model.default` (or an alias) naming a scripted brain it ships; the brain would spawn a worker and
call exec_run. The person's own model (the local test server) answers instead, and the notice says
what was ignored.
"""

from __future__ import annotations

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
