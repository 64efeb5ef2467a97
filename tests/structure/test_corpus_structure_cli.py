"""`vance structure` end to end over the real-world schema corpus (issue 15).

Every usable schema of tests/structure/corpus (SchemaStore and check-jsonschema schemas with their
positive test documents, pydantic models with their samples, the openai SDK's types; SOURCES.md),
with each of its documents (generated valid values for the 16 schemas that have none: 196 in all
for 106 schemas; taskfile has none), goes through the real CLI
(typer's CliRunner in this process, a real subprocess for a few), the real transport and the
local OpenAI-compatible fake server, with the model configured as an OpenAI-family model with
strict output (``[models."openai/strict-fake".capabilities]`` in config.toml). The server's
responder answers each document the way a provider holding the request's schema would: where the
request asks for strict ``json_schema``, the faithful strict answer (instances.provider_reply:
null for each absent field, keys a closed object does not declare left out), otherwise the
document itself; inside the envelope when the format instructions ask for one. It checks the
answer against the schema it was sent, as a provider would enforce it: a valid document the sent
schema rejects is a valid answer the provider could never give.

Each document must end ``ok`` (exit 0) in one iteration, in the format that was sent, as exactly
the document except for the README's way back (an absent optional field whose schema accepts null
comes back as an explicit null) and keys the caller's schema never declares, left out by an
object strict mode closed (said by a downgrade line). Where strict is off, the first downgrade
line says why. test_schema_corpus.py checks the plans of every family; this is the whole path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from tests.fakeserver import FakeOpenAIServer
from tests.structure.corpus import pydantic_models
from tests.structure.instances import provider_reply
from tests.structure.suite_driver import undeclared_keys
from tests.structure.test_json_schema_suite_calls import ENVELOPE_ASKED, comes_back_as_sent
from tests.structure.test_schema_corpus import CORPUS, VALID, corpus, examples, instances
from vance_cli.cli import structure_cmd

REPO = Path(__file__).resolve().parents[2]
STRICT_MODEL = "openai/strict-fake"
LITELLM_MODEL = "openai/strict-fake-litellm"
CONFIG = f"""
[models."{STRICT_MODEL}".capabilities]
family = "openai"
strict_json_schema = true
json_object = true

[models."{LITELLM_MODEL}"]
transport = "litellm"

[models."{LITELLM_MODEL}".capabilities]
family = "openai"
strict_json_schema = true
json_object = true
"""


@cache
def documents(name: str) -> list[Any]:
    """The schema's documents and samples; for a schema without any (the openai SDK types, a few
    SchemaStore schemas), the values generated from it that its validator accepts."""
    given = examples(name) + pydantic_models.SAMPLES.get(name.removeprefix("pydantic-"), [])
    return given or list(instances(name))


# Every usable corpus schema (the four check_schema refuses: test_schema_corpus.py).
NAMES = VALID
NO_DOCUMENTS = {"taskfile"}  # nothing to answer with (skipped, saying so)


def document(key: str) -> Any:
    name, _, i = key.rpartition("#")
    return documents(name)[int(i)]


class Answers:
    """The server's responder: the document a prompt names, as a provider holding the sent schema
    sends it; what it did is kept per document for the assertions."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, Any]] = {}
        self._validators: dict[str, Any] = {}

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        key = body["messages"][-1]["content"].removeprefix("corpus document ")
        value = document(key)
        system = " ".join(m["content"] for m in body["messages"] if m["role"] == "system")
        envelope = any(phrase in system for phrase in ENVELOPE_ASKED)
        answer = {"result": value, **({"_need": None} if '"_need"' in system else {})} if envelope else value
        fmt = body.get("response_format") or {}
        strict = fmt.get("type") == "json_schema" and fmt["json_schema"].get("strict") is True
        dropped: list[str] = []
        problems: list[str] = []
        if fmt.get("type") == "json_schema":
            sent = fmt["json_schema"]["schema"]
            if strict:
                answer, dropped = provider_reply(value, sent, envelope=envelope)
            text = json.dumps(sent, sort_keys=True)
            validator = self._validators.get(text) or self._validators.setdefault(text, Draft202012Validator(sent))
            problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:120]}" for e in validator.iter_errors(answer)][:3]
        self.seen[key] = {"mode": "json_schema:strict" if strict else fmt.get("type", "prompt"), "dropped": dropped, "rejected": problems}
        return {"text": json.dumps(answer)}


@pytest.fixture(scope="module")
def server():
    answers = Answers()
    with FakeOpenAIServer() as fake:
        fake.responder = answers
        fake.answers = answers
        yield fake


@pytest.fixture(scope="module")
def schema_files(tmp_path_factory) -> dict[str, Path]:
    """The corpus file of each schema; the pydantic models' schemas written out."""
    folder = tmp_path_factory.mktemp("corpus-schemas")
    out = {}
    for name in NAMES:
        path = CORPUS / "schemas" / f"{name}.json"
        if not path.is_file():
            path = folder / f"{name}.json"
            path.write_text(json.dumps(corpus()[name]), encoding="utf-8")
        out[name] = path
    return out


@pytest.fixture
def configured(server, vance_home, monkeypatch):
    (vance_home / "config.toml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("VANCE_MODEL", STRICT_MODEL)
    monkeypatch.setenv("VANCE_API_BASE", server.url)
    monkeypatch.setenv("VANCE_API_KEY", "test")
    return server


@pytest.fixture(scope="module")
def cli():
    app = typer.Typer()
    structure_cmd.register(app)

    @app.callback()
    def _group() -> None:  # keeps "structure" a subcommand
        pass

    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def check_result(server: Any, name: str, key: str, out: dict[str, Any]) -> list[str]:
    """What is wrong with the result of one document (nothing: [])."""
    seen = server.answers.seen.get(key)
    doc = document(key)
    if seen is None:
        return [f"{key}: no request reached the server ({out.get('status')}: {out.get('errors')})"]
    if seen["rejected"]:
        return [f"{key}: the schema sent ({seen['mode']}) rejects the faithful answer: {seen['rejected']}"]
    if out.get("status") != "ok" or out.get("iterations") != 1:
        return [f"{key}: {out.get('status')} after {out.get('iterations')}: {out.get('errors')}"]
    problems = []
    if out["outputMode"] != seen["mode"]:
        problems.append(f"{key}: outputMode {out['outputMode']} but the request was {seen['mode']}")
    if not comes_back_as_sent(out["data"], doc, Counter(seen["dropped"])):
        problems.append(f"{key}: came back as {json.dumps(out['data'])[:200]}")
    downgrades = out.get("schemaDowngrades") or []
    if seen["dropped"]:
        closed = any("additionalProperties set to false" in line for line in downgrades)
        if Counter(seen["dropped"]) - undeclared_keys(corpus()[name], doc) or not closed:
            problems.append(f"{key}: keys {seen['dropped']} left out, declared or not said")
    if out["outputMode"] != "json_schema:strict" and not (downgrades and downgrades[0].startswith("strict output off: ")):
        problems.append(f"{key}: strict is off without a reason: {downgrades[:1]}")
    return problems


@pytest.mark.parametrize("name", NAMES)
def test_each_document_comes_back_through_vance_structure(cli, configured, schema_files, name):
    if not documents(name):
        assert name in NO_DOCUMENTS
        pytest.skip(f"{name}: no test document, and no value generated from it that its validator accepts")
    problems = []
    for i in range(len(documents(name))):
        key = f"{name}#{i}"
        configured.answers.seen.pop(key, None)
        result = cli("structure", f"corpus document {key}", "--schema", str(schema_files[name]), "--json")
        assert result.exit_code in (0, 3, 4), (key, result.output[-600:])
        problems += check_result(configured, name, key, json.loads(result.stdout))
    assert problems == []


# Strict plans of each kind the corpus has: nested optional models, a recursive $ref'd definition
# in an array (the "never accepted locally" case), undeclared keys left out, big schemas.
LITELLM_CASES = ["pydantic-Org#0", "pydantic-Invoice#1", "github-discussion#0", "rust-toolchain#0", "github-workflows#0"]


def test_through_litellm_too(cli, configured, schema_files):
    """The same answers when litellm is the client (``transport = "litellm"``)."""
    problems = []
    before = len(configured.requests)
    for key in LITELLM_CASES:
        name = key.split("#")[0]
        configured.answers.seen.pop(key, None)
        result = cli("structure", f"corpus document {key}", "--schema", str(schema_files[name]), "--json", "--model", LITELLM_MODEL)
        assert result.exit_code in (0, 3, 4), (key, result.output[-600:])
        problems += check_result(configured, name, key, json.loads(result.stdout))
    assert problems == []
    agents = {h.get("user-agent", "") for h in configured.request_headers[before:]}
    assert len(configured.requests) - before == len(LITELLM_CASES)
    assert all(agent.startswith("AsyncOpenAI") for agent in agents), agents  # the openai SDK under litellm


SUBPROCESS_CASES = ["pydantic-Department#0", "codecov#1"]


def test_the_real_cli_in_a_subprocess(configured, schema_files, vance_home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VANCE_")}
    env.update(
        VANCE_HOME=str(vance_home), VANCE_MODEL=STRICT_MODEL, VANCE_API_BASE=configured.url, VANCE_API_KEY="test",
        VANCE_ALLOW_MODEL_REQUESTS="0", PYTHONPATH=str(REPO),
    )
    problems = []
    for key in SUBPROCESS_CASES:
        name = key.split("#")[0]
        configured.answers.seen.pop(key, None)
        proc = subprocess.run(
            [sys.executable, "-m", "vance_cli", "structure", f"corpus document {key}", "--schema", str(schema_files[name]), "--json"],
            check=False, env=env, capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 0, (key, proc.stderr[-600:])
        assert "Traceback" not in proc.stderr
        problems += check_result(configured, name, key, json.loads(proc.stdout))
    assert problems == []
