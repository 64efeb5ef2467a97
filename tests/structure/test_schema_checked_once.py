"""`vance structure --schema FILE` checks the schema once (issue 20: the request copied the dict, so
the checked-once memo missed and a 5.8 MB schema was checked and prepared twice, 1.5 s of CPU
each; bench/bench_schemas.py --only file times it)."""

from __future__ import annotations

import json

from tests.helpers import run_cli
from vance_cli.schema import dialects, refs
from vance_cli.structure.service import StructureRequest

SCHEMA = {"title": "checked-once", "type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"],
          "$defs": {"unused": {"type": "string"}}}


def test_a_schema_file_is_checked_and_prepared_once(fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("VANCE_MODEL", "openai/test-model")
    monkeypatch.setenv("VANCE_API_BASE", fake_openai.url)
    checked, prepared = [], []
    unknown, prepare = dialects.unknown_dialect, refs._prepare_uncached  # past the checked-once memo
    monkeypatch.setattr(dialects, "unknown_dialect", lambda schema: checked.append(schema.get("title")) or unknown(schema))
    monkeypatch.setattr(refs, "_prepare_uncached", lambda schema: prepared.append(schema.get("title")) or prepare(schema))
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCHEMA))
    fake_openai.enqueue(text=json.dumps({"kind": "x"}))
    r = run_cli("structure", "a thing of kind x", "--schema", str(path))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"kind": "x"}
    assert checked.count("checked-once") == 1
    assert prepared.count("checked-once") == 1


def test_the_request_keeps_the_callers_schema_object():
    schema = dict(SCHEMA)
    assert StructureRequest(prompt="p", schema=schema).schema_ is schema
    assert StructureRequest.model_validate({"prompt": "p", "schema": "contact"}).schema_ == "contact"
