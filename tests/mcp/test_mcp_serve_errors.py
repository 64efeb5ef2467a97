"""What `vance mcp serve`'s tools answer to bad input: the MCP argument names (not the CLI's
flags), and for structure the very error object `vance structure --json` prints (the review of
issue 19)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.helpers import run_cli

pytest.importorskip("mcp")


@pytest.fixture
def served(fake_openai, monkeypatch):
    monkeypatch.setenv("VANCE_MODEL", "openai/fake-model")
    monkeypatch.setenv("VANCE_API_BASE", fake_openai.url)
    from vance_cli.cli.common import model_factory
    from vance_cli.config.context import load_context
    from vance_cli.mcp_server import server

    vance = server.VanceMcp(*load_context(), model_factory)
    return lambda name, args: asyncio.run(vance.call(name, args))


def test_benjy_run_errors_name_its_arguments_not_cli_flags(served, tmp_path):
    both = served("benjy_run", {"goal": "g", "workspace": str(tmp_path), "target": "t"})
    criteria = served("benjy_run", {"goal": "g", "workspace": str(tmp_path), "criteria": str(tmp_path / "nope.md")})
    missing = served("benjy_run", {"goal": "g", "workspace": str(tmp_path / "nope")})
    for r in (both, criteria, missing):
        assert not r.ok and "--" not in r.content, r.content  # "--workspace and --target exclude each other" before
    assert "workspace and target exclude each other" in both.content
    assert "check the criteria path" in criteria.content
    assert "or pass target" in missing.content


@pytest.mark.parametrize("schema", [{"type": 5}, "nosuch-schema-name"])
def test_a_bad_schema_gives_the_object_vance_structure_json_prints(schema, served):
    got = served("structure", {"prompt": "Ada", "schema": schema, "schemaMode": "json" if isinstance(schema, dict) else "named"})
    cli = run_cli("structure", "Ada", "--schema", json.dumps(schema) if isinstance(schema, dict) else schema,
                  "--mode", "json" if isinstance(schema, dict) else "named", "--json")
    printed = json.loads(cli.stdout)
    assert printed["status"] == "error"
    assert not got.ok and got.data == printed  # an isError text before, no object
    assert json.loads(got.content) == printed
