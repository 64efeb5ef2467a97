"""`vance trust`, `--list`, `--revoke`, and the one line an untrusted folder prints."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import json_lines, run_cli, write_script


def make_project(tmp_path: Path) -> Path:
    root = tmp_path / "cloned"
    (root / ".vance" / "recipes").mkdir(parents=True)
    (root / ".vance" / "config.toml").write_text('[model]\napi_base = "http://127.0.0.1:9/v1"\n')
    (root / ".vance" / "recipes" / "arthur.yaml").write_text("engine: arthur\ntools: {add: [exec_run]}\n")
    return root.resolve()


def test_trust_outside_a_project_is_a_usage_error(tmp_path):
    r = run_cli("trust")
    assert r.returncode == 2
    assert "no .vance/ folder" in r.stderr and "nothing to trust" in r.stderr
    assert "Traceback" not in r.stderr


def test_trust_list_revoke_round_trip(tmp_path):
    root = make_project(tmp_path)
    r = run_cli("recipes", "list", cwd=root)
    assert r.returncode == 0
    lines = [line for line in r.stderr.splitlines() if "not trusted" in line]
    assert lines == [
        f"vance: {root}/.vance is not trusted; ignoring model.api_base, recipes/arthur.yaml "
        f"(apply them with: vance trust {root})"
    ]
    assert "project" not in r.stdout  # the project's arthur is not listed while untrusted

    r = run_cli("trust", cwd=root / ".vance" / "recipes")  # from a sub-folder: the project around it
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"trusted {root}: its .vance/ settings apply (model.api_base, recipes/arthur.yaml)\n"
    assert f"vance trust --revoke {root}" in r.stderr

    r = run_cli("recipes", "list", cwd=root)
    assert "not trusted" not in r.stderr and "arthur           project" in r.stdout

    assert run_cli("trust", cwd=root).stdout == f"already trusted, unchanged: {root}\n"
    (root / ".vance" / "config.toml").write_text('[model]\napi_base = "http://127.0.0.1:10/v1"\n')
    r = run_cli("recipes", "list", cwd=root)
    assert "changed since you trusted it" in r.stderr
    rows = json_lines(run_cli("trust", "--list", "--json").stdout)
    assert [(row["folder"], row["state"]) for row in rows] == [(str(root), "changed")]
    assert run_cli("trust", str(root)).stdout.startswith(f"trusted again {root}")
    assert run_cli("trust", "--list").stdout.split()[0] == "trusted"

    r = run_cli("trust", "--revoke", str(root))
    assert r.returncode == 0 and r.stdout.startswith(f"revoked {root}")
    assert run_cli("trust", "--list", "--json").stdout == ""
    r = run_cli("trust", "--revoke", str(root))
    assert r.returncode == 0 and "not trusted: nothing to revoke" in r.stderr


def test_trust_list_takes_no_path():
    r = run_cli("trust", "--list", "somewhere")
    assert r.returncode == 2 and "--list takes no PATH" in r.stderr


def test_chat_in_an_untrusted_folder_says_so_once_and_uses_the_bundled_recipe(tmp_path):
    root = make_project(tmp_path)
    model = write_script(tmp_path / "s.json", [{"tool_calls": [{"name": "respond", "arguments": {"message": "ok"}}]}])
    r = run_cli("chat", "-p", "hi", env={"VANCE_MODEL": model}, cwd=root)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "ok\n"
    assert r.stderr.count("is not trusted; ignoring model.api_base, recipes/arthur.yaml") == 1
    shown = run_cli("show", json_lines(run_cli("ps", "--json", cwd=root).stdout)[0]["id"], "--json", cwd=root)
    assert "exec_run" not in json.dumps(json.loads(shown.stdout)["recipe"])
