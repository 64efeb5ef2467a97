"""`vance structure` and `vance schemas` through a throwaway Typer app (CliRunner) and the local server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from vance_cli.cli import schemas_cmd, structure_cmd

INLINE = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "priority": {"type": "integer", "maximum": 5}},
    "required": ["name", "priority"],
    "additionalProperties": False,
}


@pytest.fixture
def cli():
    app = typer.Typer()
    structure_cmd.register(app)
    schemas_cmd.register(app)
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, env: dict | None = None):
        return runner.invoke(app, list(args), input=input, env=env)

    return invoke


@pytest.fixture
def served(fake_openai, monkeypatch):
    """The CLI's model is the local fake server, reached through the real factory and transport."""
    monkeypatch.setenv("VANCE_MODEL", "openai/test-model")
    monkeypatch.setenv("VANCE_API_BASE", fake_openai.url)
    monkeypatch.setenv("VANCE_API_KEY", "test")
    return fake_openai


def reply(server, data=None, need=None, raw=None):
    server.enqueue(text=raw if raw is not None else json.dumps({"result": data, "_need": need}))


# -- bad input (no model needed) -----------------------------------------------------------------


def test_empty_prompt_is_a_usage_error(cli):
    result = cli("structure", "   ", "--schema", json.dumps(INLINE))
    assert result.exit_code == 2 and "the prompt is empty" in result.stderr and "Traceback" not in result.output


def test_empty_stdin_is_a_usage_error(cli):
    result = cli("structure", "-", "--schema", json.dumps(INLINE), input="")
    assert result.exit_code == 2 and "the prompt is empty" in result.stderr


def test_invalid_inline_schema_exits_1(cli):
    result = cli("structure", "text", "--schema", '{"type": "strin"}')
    assert result.exit_code == 1 and "not a valid JSON Schema" in result.stderr


def test_unreadable_schema_file_exits_1(cli, tmp_path):
    result = cli("structure", "text", "--schema", "missing/schema.json")
    assert result.exit_code == 1 and "does not exist" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    result = cli("structure", "text", "--schema", str(bad))
    assert result.exit_code == 1 and "is not valid JSON" in result.stderr


def test_max_loops_range_and_mode_are_checked(cli):
    result = cli("structure", "t", "--schema", "{}", "--max-loops", "11")
    assert result.exit_code == 2 and "--max-loops must be between 1 and 10" in result.stderr
    result = cli("structure", "t", "--schema", "{}", "--mode", "yaml")
    assert result.exit_code == 2 and "unknown --mode" in result.stderr


def test_unknown_named_schema_exits_1_listing_names(cli):
    result = cli("structure", "t", "--schema", "nope", "--mode", "named")
    assert result.exit_code == 1 and "available:" in result.stderr and "user-action-record" in result.stderr


def test_no_model_configured_names_the_fix(cli):
    result = cli("structure", "t", "--schema", json.dumps(INLINE))
    assert result.exit_code == 1 and "no model configured" in result.stderr and "VANCE_MODEL" in result.stderr


# -- through the local OpenAI-compatible server --------------------------------------------------


def test_ok_prints_the_data_and_exits_0(cli, served):
    reply(served, {"name": "fix", "priority": 2})
    result = cli("structure", "fix the build, prio 2", "--schema", json.dumps(INLINE))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"name": "fix", "priority": 2}
    assert served.requests[0]["response_format"]["type"] == "json_schema"


def test_reason_loop_over_http(cli, served):
    reply(served, {"name": "fix", "priority": 7})
    reply(served, {"name": "fix", "priority": 5})
    result = cli("structure", "fix the build, top prio", "--schema", json.dumps(INLINE), "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["status"] == "ok" and out["iterations"] == 2 and out["usage"]["calls"] == 2
    assert len(served.requests) == 2
    assert all(r["response_format"]["type"] == "json_schema" for r in served.requests)
    second = served.requests[1]["messages"]
    assert second[-2]["role"] == "assistant"
    assert second[-1] == {
        "role": "user",
        "content": "The previous output did not conform to the schema:\n- /priority: value must be ≤ 5 (was 7)\n\n"
        "Please correct these and try again. Do not change fields that were valid.",
    }


def test_need_more_input_exits_3_with_the_need_on_stderr(cli, served):
    reply(served, None, "the priority is missing")
    result = cli("structure", "fix the build", "--schema", json.dumps(INLINE))
    assert result.exit_code == 3 and result.stdout == ""
    assert "need-more-input: the priority is missing" in result.stderr


def test_stale_exits_4_with_the_errors_on_stderr(cli, served):
    for _ in range(2):
        reply(served, {"name": "fix", "priority": 9})
    result = cli("structure", "fix", "--schema", json.dumps(INLINE), "--max-loops", "2")
    assert result.exit_code == 4
    assert "- /priority: value must be ≤ 5 (was 9)" in result.stderr


def test_json_output_in_every_status_keeps_the_exit_code(cli, served):
    reply(served, None, "need the priority")
    result = cli("structure", "fix", "--schema", json.dumps(INLINE), "--json")
    assert result.exit_code == 3
    out = json.loads(result.stdout)
    assert out["status"] == "need-more-input" and out["need"] == "need the priority"
    assert out["schemaMode"] == "json" and out["modeInferred"] is True


def test_prompt_from_stdin_and_schema_from_a_file(cli, served, tmp_path):
    path = tmp_path / "task.json"
    path.write_text(json.dumps(INLINE))
    reply(served, {"name": "x", "priority": 1})
    result = cli("structure", "-", "--schema", str(path), input="from stdin\n")
    assert result.exit_code == 0, result.output
    assert served.requests[0]["messages"][-1]["content"].startswith("from stdin")


def test_named_mode_is_inferred_from_a_known_name(cli, served):
    reply(served, {"userId": "mike", "action": "broke_build", "timestamp": "2026-05-06T14:30:00Z", "status": "failure"})
    result = cli("structure", "Mike broke the build at 14:30 UTC on 2026-05-06", "--schema", "user-action-record", "--json")
    out = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert out["schemaMode"] == "named" and out["modeInferred"] is True and out["schemaOrigin"] == "registry:bundled"
    system = served.requests[0]["messages"][0]["content"]
    assert "Manual for the schema 'user-action-record'" in system


def test_text_mode_is_inferred_and_cached(cli, served):
    built = {
        "schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        "confidence": 0.9,
        "clarifyingQuestions": [],
    }
    served.enqueue(text=json.dumps(built))
    reply(served, {"name": "Ann"})
    result = cli("structure", "Ann", "--schema", "the person's name", "--json")
    out = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert out["schemaMode"] == "text" and out["schemaOrigin"] == "inferred" and out["usage"]["calls"] == 2
    reply(served, {"name": "Bob"})
    result = cli("structure", "Bob", "--schema", "the person's name", "--json")
    assert json.loads(result.stdout)["schemaCached"] is True and len(served.requests) == 3


# -- vance schemas -------------------------------------------------------------------------------


def test_schemas_list_and_show(cli):
    result = cli("schemas", "list")
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert {"user-action-record", "insight-record", "contact", "meeting-note", "bug-report"} <= set(names)
    assert "_meta-schema" not in names
    shown = cli("schemas", "show", "user-action-record")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["title"] == "user-action-record"
    assert "registry:bundled" in shown.stderr
    manual = cli("schemas", "show", "user-action-record", "--manual")
    assert manual.stdout.startswith("# user-action-record")
    assert cli("schemas", "show", "nope").exit_code == 1


def test_schemas_add_shadow_and_rm(cli, tmp_path, vance_home):
    schema_file = tmp_path / "s.json"
    schema_file.write_text(json.dumps(INLINE))
    manual_file = tmp_path / "m.md"
    manual_file.write_text("be brief")
    result = cli("schemas", "add", "contact", str(schema_file), "--manual", str(manual_file), "--scope", "user")
    assert result.exit_code == 0, result.output
    assert "registry:tenant:local" in result.stderr
    listing = cli("schemas", "list", "--json")
    rows = [json.loads(line) for line in listing.stdout.splitlines()]
    contact = [r for r in rows if r["name"] == "contact"]
    assert [(r["origin"], r["shadowedBy"]) for r in contact] == [
        ("registry:tenant:local", None),
        ("registry:bundled", "registry:tenant:local"),
    ]
    assert json.loads(cli("schemas", "show", "contact", "--json").stdout)["manual"] == "be brief"
    removed = cli("schemas", "rm", "contact")
    assert removed.exit_code == 0 and "now resolves to registry:bundled" in removed.stderr


def test_schemas_add_rejects_bad_input(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "nope"}')
    assert cli("schemas", "add", "x", str(bad), "--scope", "user").exit_code == 1
    assert cli("schemas", "add", "x", str(tmp_path / "missing.json")).exit_code == 1
    result = cli("schemas", "add", "x", str(bad), "--scope", "project")
    assert result.exit_code in (1, 2)
    assert cli("schemas", "rm", "user-action-record").exit_code == 1


def test_schemas_infer_previews_without_a_content_call(cli, served):
    served.enqueue(text=json.dumps({"schema": {"type": "object", "properties": {"a": {"type": "string"}}}, "confidence": 0.6, "clarifyingQuestions": []}))
    result = cli("schemas", "infer", "something vague", "--json")
    assert result.exit_code == 3
    out = json.loads(result.stdout)
    assert out["confidence"] == 0.6 and out["status"] == "need-more-input"
    assert len(served.requests) == 1
    served.enqueue(text=json.dumps({"schema": {"type": "object", "properties": {"a": {"type": "string"}}}, "confidence": 0.9, "clarifyingQuestions": []}))
    result = cli("schemas", "infer", "a (string)")
    assert result.exit_code == 0 and json.loads(result.stdout)["properties"]["a"] == {"type": "string"}
    assert "confidence 0.90" in result.stderr


def test_debug_shows_the_traceback(cli):
    result = cli("structure", "   ", "--schema", "{}", env={"VANCE_DEBUG": "1"})
    assert result.exit_code == 1 and result.exception is not None  # re-raised for the traceback


def test_cli_modules_import_only_typer_at_module_level():
    import ast

    for mod in (structure_cmd, schemas_cmd):
        tree = ast.parse(Path(mod.__file__).read_text())
        top = {
            (n.module if isinstance(n, ast.ImportFrom) else a.name).split(".")[0]
            for n in tree.body
            if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in n.names
        }
        assert top <= {"__future__", "typer", "os", "sys", "collections", "typing", "pathlib", "vance_cli"}


def test_missing_schema_is_a_usage_error(cli):
    result = cli("structure", "text")
    assert result.exit_code == 2 and "--schema is required" in result.stderr


# -- review findings: refs, broken registry entries, unreadable paths, odd --schema values -------


@pytest.fixture
def script(tmp_path, monkeypatch):
    """``script(*replies)`` → VANCE_MODEL=scripted:<file> answering those JSON replies in order."""

    def make(*replies) -> Path:
        path = tmp_path / "script.json"
        path.write_text(json.dumps([{"text": r if isinstance(r, str) else json.dumps(r)} for r in replies]))
        monkeypatch.setenv("VANCE_MODEL", f"scripted:{path}")
        return path

    return make


def no_crash(result) -> bool:
    return result.exception is None or isinstance(result.exception, SystemExit)


def test_dangling_ref_schema_exits_1_before_any_model_call(cli, script):
    script()  # no replies: any model call would fail with "ran out of replies"
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}
    result = cli("structure", "text", "--schema", json.dumps(schema))
    assert result.exit_code == 1 and no_crash(result), result.output
    assert "$ref '#/$defs/nope'" in result.stderr and "does not resolve" in result.stderr and "fix:" in result.stderr
    assert "ran out of replies" not in result.stderr


def test_schemas_list_warns_about_a_broken_file_and_exits_0(cli, vance_home):
    (vance_home / "schemas").mkdir()
    broken = vance_home / "schemas" / "broken.json"
    broken.write_text("{oops")
    result = cli("schemas", "list")
    assert result.exit_code == 0, result.output
    assert "user-action-record" in result.stdout and "broken" not in result.stdout
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and str(broken) in warning[0] and "not valid JSON" in warning[0]
    as_json = cli("schemas", "list", "--json")
    assert as_json.exit_code == 0 and str(broken) in as_json.stderr
    assert all(json.loads(line)["name"] != "broken" for line in as_json.stdout.splitlines())


def test_a_broken_file_breaks_only_its_own_name(cli, vance_home, script):
    (vance_home / "schemas").mkdir()
    (vance_home / "schemas" / "broken.json").write_text("{oops")
    assert cli("schemas", "show", "contact").exit_code == 0
    shown = cli("schemas", "show", "broken")
    assert shown.exit_code == 1 and "broken.json is not valid JSON" in shown.stderr
    script({"result": None, "_need": "the e-mail address"})
    named = cli("structure", "Ann", "--schema", "contact", "--json")  # mode inferred: named
    assert named.exit_code == 3, named.output
    assert json.loads(named.stdout)["schemaMode"] == "named"
    asked = cli("structure", "Ann", "--schema", "broken")  # inferred named, then the file's own error
    assert asked.exit_code == 1 and "broken.json is not valid JSON" in asked.stderr


def test_a_schema_path_behind_an_unreadable_folder_exits_1_naming_it(cli, tmp_path, monkeypatch):
    locked = tmp_path / "locked" / "s.json"
    real_stat = Path.stat

    def stat(self, *a, **kw):
        if str(self).startswith(str(tmp_path / "locked")):
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *a, **kw)

    monkeypatch.setattr(Path, "stat", stat)
    result = cli("structure", "text", "--schema", str(locked))
    assert result.exit_code == 1 and no_crash(result), result.output
    assert f"cannot access schema file {locked}: Permission denied" in result.stderr


def test_an_unreadable_schema_file_exits_1_naming_it(cli, tmp_path, monkeypatch):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(INLINE))
    real_open = os.open

    def open_(file, flags, *a, **kw):  # schema files are read through store/reading.py read_regular
        if os.fspath(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, flags, *a, **kw)

    monkeypatch.setattr(os, "open", open_)
    result = cli("structure", "text", "--schema", str(path))
    assert result.exit_code == 1 and no_crash(result)
    assert f"cannot read schema file {path}: Permission denied" in result.stderr


def test_an_unreadable_manual_file_exits_1_naming_it(cli, tmp_path, monkeypatch):
    schema_file = tmp_path / "s.json"
    schema_file.write_text(json.dumps(INLINE))
    manual = tmp_path / "m.md"
    manual.write_text("be brief")
    real_read = Path.read_text

    def read_text(self, *a, **kw):
        if self == manual:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self, *a, **kw)

    monkeypatch.setattr(Path, "read_text", read_text)
    result = cli("schemas", "add", "x", str(schema_file), "--manual", str(manual), "--scope", "user")
    assert result.exit_code == 1 and no_crash(result)
    assert f"cannot read manual file {manual}" in result.stderr


def test_a_description_longer_than_a_file_name_is_still_a_description(cli):
    long = "a record of " + "very " * 80 + "long things"  # one path component > 255 bytes
    result = cli("structure", "text", "--schema", long)
    assert no_crash(result), result.output
    assert result.exit_code == 1 and "no model configured" in result.stderr  # it got as far as the builder


def test_schema_naming_a_directory_is_an_error(cli, tmp_path, script):
    script()
    folder = tmp_path / "schemas-dir"
    folder.mkdir()
    for args in (("--schema", str(folder)), ("--schema", str(folder), "--mode", "json")):
        result = cli("structure", "text", *args)
        assert result.exit_code == 1 and no_crash(result), result.output
        assert f"--schema {folder} is a directory" in result.stderr and "ran out of replies" not in result.stderr


@pytest.mark.parametrize("value", ["[1,2]", "[]", "42", "null"])
def test_inline_json_that_is_not_an_object_is_an_error(cli, script, value):
    script()
    result = cli("structure", "text", "--schema", value)
    assert result.exit_code == 1 and no_crash(result), result.output
    assert "must be a JSON object" in result.stderr and "ran out of replies" not in result.stderr


def test_a_builder_failure_says_the_builder_failed_and_after_how_many_attempts(cli, script):
    bad = {"schema": {"type": "list"}, "confidence": 0.9, "clarifyingQuestions": []}
    script(bad, bad)
    result = cli("structure", "text", "--schema", "a list of things", "--mode", "text")
    assert result.exit_code == 4
    assert "stale: the schema builder gave no valid schema after 2 attempt(s); last errors:" in result.stderr
    assert "0 iteration(s)" not in result.stderr
    script(bad, bad)
    out = json.loads(cli("structure", "text", "--schema", "a list of things", "--mode", "text", "--json").stdout)
    assert out["stage"] == "builder" and out["builderIterations"] == 2 and out["usage"]["calls"] == 2


# -- a mistyped name ---------------------------------------------------------------------------


def test_a_mistyped_schema_name_is_an_error_with_did_you_mean(cli):
    result = cli("structure", "Ann, ann@example.com", "--schema", "contcat")
    assert result.exit_code == 1 and no_crash(result), result.output
    assert "unknown schema 'contcat'; did you mean 'contact'?" in result.stderr
    assert "--mode text" in result.stderr
    other = cli("structure", "Ann", "--schema", "invoice")
    assert other.exit_code == 1 and "unknown schema 'invoice'; available: " in other.stderr and "contact" in other.stderr


def test_a_single_word_description_needs_mode_text(cli):
    result = cli("structure", "Ann", "--schema", "contcat", "--mode", "text")
    assert no_crash(result), result.output
    assert result.exit_code == 1 and "no model configured" in result.stderr  # it went on to the builder
    spaced = cli("structure", "Ann", "--schema", "name and email")
    assert spaced.exit_code == 1 and "no model configured" in spaced.stderr  # a description, inferred


def test_structure_with_a_named_schema_never_checks_the_other_schemas(cli, vance_home, monkeypatch):
    folder = vance_home / "schemas"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "huge.json").write_text(json.dumps({"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(20000)}}))
    from vance_cli.schema import check as errors

    checked: list[str] = []
    real = errors.check_schema

    def spy(schema, where="the schema"):
        checked.append(where)
        return real(schema, where)

    monkeypatch.setattr("vance_cli.structure.registry.check_schema", spy)
    result = cli("structure", "Ann", "--schema", "contact")
    assert no_crash(result) and "no model configured" in result.stderr
    assert checked and all("contact.json" in w for w in checked)


def test_a_draft7_schema_file_is_checked_sent_and_validated_as_draft7(cli, served, tmp_path):
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}], "additionalItems": False}, "card": {"type": "string"}, "cvc": {"type": "string"}},
        "required": ["point"],
        "dependencies": {"card": ["cvc"]},
    }
    path = tmp_path / "draft7.json"
    path.write_text(json.dumps(schema))
    reply(served, {"point": [1, 2, 3], "card": "4111", "cvc": None})  # too many items; cvc is required with card
    reply(served, {"point": [1, 2], "card": "4111", "cvc": "123"})
    result = cli("structure", "point 1,2; card 4111 cvc 123", "--schema", str(path), "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["data"] == {"point": [1, 2], "card": "4111", "cvc": "123"} and out["iterations"] == 2
    # a loopback server is an "other" provider: it gets the schema as it is, in its 2020-12 form
    sent = served.requests[0]["response_format"]["json_schema"]["schema"]
    target = sent["properties"]["result"]["anyOf"][0]
    assert target["properties"]["point"]["prefixItems"] == [{"type": "number"}, {"type": "number"}]
    assert target["properties"]["point"]["items"] is False and target["dependentRequired"] == {"card": ["cvc"]}
    correction = served.requests[1]["messages"][-1]["content"]
    assert "/point" in correction and ("cvc" in correction)
