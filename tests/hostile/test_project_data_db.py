"""Issue 17 re-review, finding 5 (MED): a clone's `.vance/data/structure.json` that is broken (nested
deep, a 5,000-digit integer, not UTF-8, tables of the wrong shape) is skipped with a warning, never
an internal error.

Read, not ignored, in an untrusted folder: schemas are not a restricted setting (they neither send
keys nor widen tools, so `.vance/schemas/` applies untrusted too), and this file is where
`vance schemas add` keeps the schemas the person adds in this folder: ignoring it would hide their
own additions. A broken one is treated as a broken project schema file is: `schemas list` warns and
lists the rest (exit 0); a lookup that reaches it fails with a clear error naming the file.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli, write_script

BODIES = {
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "big-int": b'{"structure_schemas": {"1": {"name": "a", "schema": {"maximum": ' + b"9" * 5000 + b"}}}}",
    "not-utf8": b'{"structure_schemas": {"1": {"name": "caf\xe9"}}}',
    "table-is-a-string": b'{"structure_schemas": "x"}',
    "row-is-an-int": b'{"structure_schemas": {"1": 5}}',
    # beyond the reviewer's five
    "top-is-a-list": b"[1, 2]",
    "table-is-a-list": b'{"structure_schemas": [1]}',
}


def _clone(tmp_path, body: str):
    clone = tmp_path / "clone"
    (clone / ".vance" / "data").mkdir(parents=True)
    (clone / ".vance" / "data" / "structure.json").write_bytes(BODIES[body])
    return clone


@pytest.mark.parametrize("body", list(BODIES))
def test_a_planted_structure_db_is_not_an_internal_error(tmp_path, body):
    # the reviewer's repro (test_r6_project_data_db.py)
    clone = _clone(tmp_path, body)
    script = write_script(tmp_path / "b.json", ['{"x": 1}'] * 3)
    for args in (("schemas", "list"), ("structure", "x", "--schema", '{"type": "object"}', "--model", script)):
        r = run_cli(*args, cwd=clone)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr, (args[:2], r.stderr)


@pytest.mark.parametrize("body", list(BODIES))
def test_schemas_list_warns_and_lists_the_rest(tmp_path, body):
    clone = _clone(tmp_path, body)
    r = run_cli("schemas", "list", cwd=clone)
    assert r.returncode == 0, r.stderr
    assert "warning: skipped" in r.stderr and str(clone / ".vance" / "data" / "structure.json") in r.stderr, r.stderr
    assert "benjy-route" in r.stdout, r.stdout  # the bundled schemas are still listed


@pytest.mark.parametrize("body", ["not-utf8", "table-is-a-string", "row-is-an-int"])
def test_an_inline_schema_does_not_need_the_broken_db(tmp_path, body):
    clone = _clone(tmp_path, body)
    script = write_script(tmp_path / "b.json", ['{"x": 1}'] * 3)
    r = run_cli("structure", "x", "--schema", '{"type": "object"}', "--model", script, "--json", cwd=clone)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["data"] == {"x": 1}


def test_the_persons_own_additions_in_an_untrusted_folder_are_read(tmp_path):
    clone = tmp_path / "clone"
    (clone / ".vance").mkdir(parents=True)
    (tmp_path / "s.json").write_text('{"type": "object", "properties": {"a": {"type": "string"}}}')
    assert run_cli("schemas", "add", "mine", str(tmp_path / "s.json"), cwd=clone).returncode == 0
    r = run_cli("schemas", "list", cwd=clone)
    assert "mine" in r.stdout, (r.stdout, r.stderr)


def test_a_named_schema_behind_a_broken_db_is_a_clear_error(tmp_path):
    """The broken table may hold the person's override of that name: falling through to the
    bundled schema would answer with another schema, so the lookup says what is broken instead."""
    clone = _clone(tmp_path, "row-is-an-int")
    script = write_script(tmp_path / "b.json", ['{"x": 1}'] * 3)
    r = run_cli("structure", "x", "--schema", "benjy-route", "--model", script, cwd=clone)
    assert r.returncode == 1 and "internal error" not in r.stderr, r.stderr
    assert "structure.json does not hold TinyDB tables" in r.stderr and "fix: move" in r.stderr, r.stderr
