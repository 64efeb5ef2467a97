"""`vance schemas plan SCHEMA --model M [--json]` through the real CLI: what a structure call would
send to the model's provider (schema, format, downgrades, strict or why not), with no model call
(the suite forbids model requests: VANCE_ALLOW_MODEL_REQUESTS=0) and no litellm import
(tests/cli/test_cli_misc.py)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli
from tests.structure.suite_driver import FAMILIES, cases, suite_files
from vance_cli.llm.base import Capabilities
from vance_cli.llm.output.plan import build_plan
from vance_cli.schema.refs import prepare_schema

ONE_OF = {"oneOf": [
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
]}
OPEN_OBJECT = {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}}
OPENAI = Capabilities(family="openai", json_schema=True, strict_json_schema=True, json_object=True)


def plan_json(*args: str, env: dict | None = None) -> dict:
    r = run_cli("schemas", "plan", *args, "--json", env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1  # one JSON document
    return json.loads(lines[0])


def contact_schema() -> dict:
    r = run_cli("schemas", "show", "contact")
    assert r.returncode == 0
    return json.loads(r.stdout)


def write_config(home, text: str) -> None:
    (home / "config.toml").write_text(text, encoding="utf-8")


# -- what it shows ---------------------------------------------------------------------------------


def test_a_registry_schema_for_openai_is_strict_with_its_downgrades_and_the_schema_sent():
    doc = plan_json("contact", "--model", "openai/gpt-4o-mini")
    expected = build_plan(contact_schema(), OPENAI, allow_need=True)
    assert doc["model"] == "openai/gpt-4o-mini" and doc["family"] == "openai" and doc["schemaOrigin"] == "registry:bundled"
    assert doc["format"] == "strict json_schema" and doc["strict"] is True and doc["strictOff"] is None
    assert doc["schema"] == expected.schema
    assert {"pointer": "/properties/name", "in": "schema", "reason": "minLength removed (not enforced by openai; checked locally)"} in doc["downgrades"]
    assert len(doc["downgrades"]) == len(expected.downgrades)

    human = run_cli("schemas", "plan", "contact", "--model", "openai/gpt-4o-mini")
    assert human.returncode == 0
    out = human.stdout
    assert "format      strict json_schema\n" in out and "strict      on\n" in out
    assert "  /properties/name: minLength removed (not enforced by openai; checked locally)\n" in out
    assert json.loads(out.split("schema sent\n", 1)[1]) == expected.schema


def test_strict_off_names_the_pointer_and_reason_and_every_downgrade_has_its_pointer():
    doc = plan_json(json.dumps(ONE_OF), "--model", "gpt-4o-mini")
    assert doc["format"] == "json_schema" and doc["strict"] is False
    assert doc["strictOff"]["pointer"] == "(root)"
    assert doc["strictOff"]["reason"].startswith("an anyOf/oneOf whose alternative 0 allows any value for 'b'")
    assert doc["downgrades"] == [{"pointer": "(root)", "in": "schema", "reason": "oneOf relaxed to anyOf (exactly-one checked locally)"}]
    assert doc["schema"] == build_plan(ONE_OF, OPENAI, allow_need=True).schema
    human = run_cli("schemas", "plan", json.dumps(ONE_OF), "--model", "gpt-4o-mini").stdout
    assert "strict      off: (root) is an anyOf/oneOf whose alternative 0 allows any value for 'b'" in human


def test_every_closed_object_is_listed_with_its_pointer(tmp_path):
    schema = {"type": "object", "properties": {f"p{i}": OPEN_OBJECT for i in range(10)}, "required": ["p0"]}
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    doc = plan_json(str(path), "--model", "openai/gpt-4o-mini")
    assert doc["schemaOrigin"] == "inline" and doc["strict"] is True
    closed = {d["pointer"] for d in doc["downgrades"] if d["reason"].startswith("additionalProperties set to false")}
    # The plan's own line shows 8 and "2 more"; the command lists all 11.
    assert closed == {"(root)"} | {f"/properties/p{i}" for i in range(10)}


@pytest.mark.parametrize(
    "config, model, fmt, family, why",
    [
        ("", "anthropic/claude-sonnet-4-5", "json_schema", "anthropic", "(family anthropic) does not enforce strict schemas"),
        ("", "gemini/gemini-2.5-flash", "json_schema", "gemini", "(family gemini) does not enforce strict schemas"),
        ('[models."openai/local"]\napi_base = "http://127.0.0.1:9/v1"\n[models."openai/local".capabilities]\n'
         "json_schema = false\njson_object = true\n", "openai/local", "json_object", "other", "no schema is sent (json_object"),
        ('[models."openai/local"]\napi_base = "http://127.0.0.1:9/v1"\n[models."openai/local".capabilities]\n'
         "json_schema = false\njson_object = false\n", "openai/local", "prompt", "other", "no schema is sent (prompt"),
        ('[structure]\nrequireProviderStrictOutput = false\n', "openai/gpt-4o-mini", "json_schema", "openai",
         "structure.requireProviderStrictOutput is false"),
    ],
    ids=["anthropic", "gemini", "json_object", "prompt", "strict not required"],
)
def test_each_format_and_why_strict_is_off(vance_home, config, model, fmt, family, why):
    write_config(vance_home, config)
    doc = plan_json(json.dumps(OPEN_OBJECT), "--model", model)
    assert doc["format"] == fmt and doc["family"] == family and doc["strict"] is False
    assert doc["strictOff"]["pointer"] is None and why in doc["strictOff"]["reason"]
    if fmt in ("json_object", "prompt"):
        assert doc["schema"] is None
        assert doc["downgrades"] == [{"pointer": "(schema)", "in": "schema", "reason": f"not enforced by the provider ({fmt}); checked locally"}]
    else:
        assert doc["schema"]["properties"]["result"]["anyOf"][0]["properties"]["a"]["type"] == "string"


def test_a_server_claiming_strict_gets_openais_rules_and_an_alias_resolves_through_the_settings(vance_home):
    write_config(
        vance_home,
        '[aliases]\n"default:fast" = "openai/local"\n'
        '[models."openai/local"]\napi_base = "http://127.0.0.1:9/v1"\n'
        '[models."openai/local".capabilities]\nstrict_json_schema = true\n',
    )
    doc = plan_json(json.dumps(OPEN_OBJECT))  # no --model: structure.model, default:fast
    assert doc["model"] == "openai/local" and doc["family"] == "other" and doc["rules"] == "openai"
    assert doc["format"] == "strict json_schema" and doc["strict"] is True
    assert {"pointer": "/properties/a", "in": "schema", "reason": "minLength removed (not enforced by openai; checked locally)"} in doc["downgrades"]
    human = run_cli("schemas", "plan", json.dumps(OPEN_OBJECT), "--model", "default:fast").stdout
    assert human.startswith("model       openai/local (family other, openai rules)\n")


# -- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, code, message, hint",
    [
        (["contcat", "--model", "gpt-4o-mini"], 1, "error: unknown schema 'contcat'; did you mean 'contact'?",
         "fix: run `vance schemas list`, or add one with `vance schemas add NAME FILE`"),
        (["contact", "--model", "gtp-4o-mini"], 1, "error: unknown model 'gtp-4o-mini'; did you mean 'gpt-4o-mini'?",
         "fix: pass a litellm model string"),
        (["contact", "--model", "default:fsat"], 1, "error: unknown model alias 'default:fsat' (known: ", "fix: use one of the known aliases"),
        (["name (string), age (integer)", "--model", "gpt-4o-mini"], 2,
         "error: SCHEMA is a registry name, a schema file or JSON text, not a description",
         "fix: build a schema from a description with `vance schemas infer DESCRIPTION`"),
        (["missing.json", "--model", "gpt-4o-mini"], 1, "error: schema file missing.json does not exist", "fix: check the path"),
        (['{"type": "objekt"}', "--model", "gpt-4o-mini"], 1, "error: ", "fix: "),
        (["contact", "--model", " "], 2, "error: --model is empty", "fix: "),
    ],
    ids=["unknown schema", "unknown model", "unknown alias", "a description", "no such file", "invalid schema", "empty model"],
)
def test_bad_input_is_one_error_line_with_a_fix_and_the_documented_exit_code(args, code, message, hint):
    r = run_cli("schemas", "plan", *args)
    assert r.returncode == code
    lines = r.stderr.splitlines()
    assert lines[0].startswith(message) and lines[1].strip().startswith(hint), r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert "--mode" not in r.stderr.replace("--model", "")  # structure's option: plan has none
    if "alias" in message:
        assert "did you mean 'default:fast'?" in lines[0]


def test_json_failures_print_one_error_object():
    r = run_cli("schemas", "plan", "contcat", "--model", "gpt-4o-mini", "--json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["status"] == "error" and doc["exitCode"] == 1 and doc["errorType"] == "SchemaNotFound"
    assert "did you mean 'contact'?" in doc["errors"][0]


# -- the pointers ----------------------------------------------------------------------------------------


def test_a_downgrade_inside_a_oneof_points_at_the_oneof_alternative():
    schema = {"type": "object", "properties": {"v": {"oneOf": [
        {"type": "string", "minLength": 2}, {"type": "integer", "minimum": 1},
    ]}}, "required": ["v"]}
    doc = plan_json(json.dumps(schema), "--model", "anthropic/claude-sonnet-4-5")
    pointers = {(d["pointer"], d["reason"].split(" ")[0]) for d in doc["downgrades"]}
    assert {("/properties/v", "oneOf"), ("/properties/v/oneOf/0", "minLength"), ("/properties/v/oneOf/1", "minimum")} <= pointers


def test_an_enum_gemini_cannot_take_points_into_the_schema_sent():
    doc = plan_json(json.dumps({"type": "object", "properties": {"k": {"enum": [True, "x"]}}}), "--model", "gemini/gemini-2.5-flash")
    (line,) = [d for d in doc["downgrades"] if d["reason"].startswith("enum values")]
    assert line["in"] == "sent" and line["pointer"] == "/properties/result/anyOf/0/properties/k"
    node = doc["schema"]
    for token in line["pointer"].split("/")[1:]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    assert node["anyOf"][0]["enum"] == ["x"]


# Keywords the walk merges or rewrites: a downgrade under them may name the merged place.
MERGING = ("allOf", "prefixItems", "patternProperties", "$dynamicRef")


def test_every_downgrade_line_of_the_suite_carries_pointers_that_exist():
    """Every downgrade line build_plan writes (every vendored suite schema, every capability set)
    keeps its JSON pointers: one marked ``sent`` names a node of the provider schema; any other
    "(root)", "(schema)" or a node of the caller's schema (its 2020-12 form), except under
    keywords the walk merges (allOf parts, prefixItems), where it may name the merged object."""
    from vance_cli.text import pointer_token

    def has_key(node, keys) -> bool:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, dict):
                if any(k in n for k in keys):
                    return True
                stack.extend(v for k, v in n.items() if k not in ("enum", "const"))
            elif isinstance(n, list):
                stack.extend(n)
        return False

    def resolves(doc, pointer: str) -> bool:
        node = doc
        for token in pointer.split("/")[1:]:
            token = pointer_token(token)
            if isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            elif isinstance(node, dict) and token in node:
                node = node[token]
            else:
                return False
        return True

    checked = exact = 0
    for path in suite_files():
        for case in cases(path):
            schema = case.schema if isinstance(case.schema, dict) else {"allOf": [case.schema]}
            try:
                prepared = prepare_schema(schema)
            except Exception:  # noqa: BLE001 - refused before any call (remote refs)
                continue
            body = prepared.body if isinstance(prepared.body, dict) else {}
            doc = {**body, "$defs": prepared.defs}
            merging = any(has_key(n, MERGING) for n in (body, *prepared.defs.values()))
            for caps in FAMILIES.values():
                plan = build_plan(schema, caps, allow_need=True)
                for line in plan.downgrades:
                    assert line.pointers, line
                    for p in line.pointers:
                        checked += 1
                        if line.sent:
                            assert resolves(plan.schema, p), (case.where, line)
                        elif p not in ("(root)", "(schema)"):
                            assert p.startswith("/") and (resolves(doc, p) or merging), (case.where, line)
                            exact += resolves(doc, p)
    assert checked > 4000 and exact > 500  # 656 pointers below the root resolve as written


def test_bad_json_hint_names_only_what_this_command_takes():
    """Issue 15 review F9: the hint named `--mode` options (`vance structure`'s) this command lacks."""
    import typer
    from typer.testing import CliRunner

    from vance_cli.cli import schemas_cmd

    app = typer.Typer()
    schemas_cmd.register(app)
    result = CliRunner().invoke(app, ["schemas", "plan", "{bad json", "--model", "openai/gpt-4o-mini"])
    assert result.exit_code == 1 and "not valid JSON" in result.stderr
    assert "mode" not in result.stderr, result.stderr


def test_ollama_shows_llama_cpp_rules_and_their_downgrades(vance_home, tmp_path):
    """Ollama's plan (ollama.py): open objects sent open, a pattern anchored, one llama.cpp cannot
    take removed, a number bound removed; never strict, and the reason says why (even where the
    capabilities claim strict, since Ollama has no strict mode to ask for)."""
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "[A-Z]{3}"},
            "d": {"type": "string", "pattern": "^\\d+$"},
            "n": {"type": "number", "minimum": 1},
        },
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    for config in ("", '[models."ollama/llama3".capabilities]\nstrict_json_schema = true\n'):
        write_config(vance_home, config)
        doc = plan_json(str(path), "--model", "ollama/llama3")
        assert doc["family"] == "ollama" and doc["rules"] == "ollama" and doc["strict"] is False
        assert "llama.cpp" in doc["strictOff"]["reason"] and "strict_json_schema" not in doc["strictOff"]["reason"]
        target = doc["schema"]["properties"]["result"]["anyOf"][0]  # (the _need envelope)
        assert target["additionalProperties"] is True
        assert target["properties"]["code"]["pattern"] == "^(.|\\n|\\r)*([A-Z]{3})(.|\\n|\\r)*$"
        reasons = {(d["pointer"], d["in"]): d["reason"] for d in doc["downgrades"]}
        sent = "/properties/result/anyOf/0/properties"
        assert reasons[(f"{sent}/code", "sent")].startswith("pattern sent as ^(.|\\n|\\r)*([A-Z]{3})")
        assert reasons[("/properties/d", "schema")] == "pattern removed (not enforced by ollama; checked locally)"
        assert reasons[(f"{sent}/n", "sent")].startswith("minimum removed (llama.cpp bounds only integers")
