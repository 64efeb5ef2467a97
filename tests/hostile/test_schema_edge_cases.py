"""Issue 17 re-review, finding 9 (LOW): schema inputs that ended in "internal error".

- a valid draft-03 schema (jsonschema's draft-03 meta-schema has schemas inside "type", which the
  compiled meta-check could not hash): Draft 3 is refused by name (its "required", "type" and
  "extends" mean other things than in the drafts Vance upgrades), also as a clone's project schema;
- a property named "\\ud800" (a lone surrogate): `schemas add` refuses it instead of failing to
  write the database;
- the model's answer 10**400 against "multipleOf": 1e308 (OverflowError inside jsonschema): a
  failed check fed back to the model, like any other.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli, write_script

CASES = {
    "draft-03": ({"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"}, {}),
    "surrogate-name": ({"type": "object", "properties": {"\ud800": {"type": "string"}}}, {}),
    "multipleOf-overflow": ({"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 1e308}}, "required": ["a"]}, {"a": 10**400}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_schema_edge_case_is_a_clear_error(tmp_path, name):
    # the reviewer's repro (test_r6_schema_edge_cases.py)
    schema, answer = CASES[name]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(schema))
    script = write_script(tmp_path / "b.json", [json.dumps(answer)] * 4)
    for args in (("structure", "x", "--schema", str(path), "--model", script), ("schemas", "add", "thing", str(path))):
        r = run_cli(*args)
        assert "internal error" not in r.stderr, (args[:2], r.stderr)


def test_a_draft03_project_schema_in_a_clone_is_skipped_not_a_crash(tmp_path):
    # the reviewer's repro
    clone = tmp_path / "clone"
    (clone / ".vance" / "schemas").mkdir(parents=True)
    (clone / ".vance" / "schemas" / "a.json").write_text(json.dumps(CASES["draft-03"][0]))
    r = run_cli("schemas", "list", cwd=clone)
    assert "internal error" not in r.stderr, r.stderr
    assert r.returncode == 0 and "warning: skipped schema 'a'" in r.stderr and "Draft 3" in r.stderr, r.stderr


def test_draft03_is_refused_by_name(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(CASES["draft-03"][0]))
    r = run_cli("schemas", "add", "thing", str(path))
    assert r.returncode != 0 and "Draft 3" in r.stderr and "fix:" in r.stderr, r.stderr


def test_a_lone_surrogate_is_refused_by_schemas_add(tmp_path, vance_home):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(CASES["surrogate-name"][0]))
    r = run_cli("schemas", "add", "thing", str(path))
    assert r.returncode != 0 and "lone surrogate" in r.stderr and "fix:" in r.stderr, r.stderr
    assert not (vance_home / "data" / "structure.json").exists()


def test_a_number_too_large_for_multiple_of_goes_back_to_the_model(fake_openai, tmp_path):
    schema, answer = CASES["multipleOf-overflow"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(schema))
    fake_openai.enqueue(text=json.dumps(answer))
    fake_openai.enqueue(text=json.dumps({"a": 0}))
    env = {"VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url}
    r = run_cli("structure", "x", "--schema", str(path), env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"a": 0}
    assert "multiple of" in json.dumps(fake_openai.requests[-1]["messages"])
