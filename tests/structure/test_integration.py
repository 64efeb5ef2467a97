"""End to end over HTTP: StructureService + the direct OpenAI-compatible transport + the fake server,
and the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.llm.base import Capabilities
from vance_cli.llm.openai_compat import OpenAICompatModel
from vance_cli.llm.profile import build_profile
from vance_cli.structure.service import StructureRequest, StructureService

REPO = Path(__file__).resolve().parents[2]
UAR_BAD = {"userId": "Mike Smith!", "action": "broke_build", "timestamp": "today", "status": "failure", "tags": None}
UAR_OK = {"userId": "mike", "action": "broke_build", "timestamp": "2026-05-06T09:15:00Z", "status": "failure", "tags": None}
STRICT = Capabilities(family="openai", json_schema=True, strict_json_schema=True, json_object=True)


def service_for(server, caps: Capabilities = STRICT) -> StructureService:
    settings = Settings.load(Scopes.discover(), env={}, overrides={"model.default": "openai/test-model"})

    def factory(name: str):
        return OpenAICompatModel(build_profile(name, api_base=server.url, api_key="k", capabilities=caps, retries={"attempts": 1}))

    return StructureService(settings, model_factory=factory)


async def test_one_response_format_request_per_loop_and_the_reason_in_the_second(fake_openai):
    fake_openai.enqueue(text=json.dumps({"result": UAR_BAD, "_need": None}))
    fake_openai.enqueue(text=json.dumps({"result": UAR_OK, "_need": None}))
    result = await service_for(fake_openai).run_structured(
        StructureRequest(prompt="Mike broke the build at 09:15 UTC on 6 May 2026", schema="user-action-record", schemaMode="named")
    )
    assert result.status == "ok" and result.iterations == 2
    assert result.data == {k: v for k, v in UAR_OK.items() if v is not None}
    assert len(fake_openai.requests) == 2
    for body in fake_openai.requests:
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["name"] == "user-action-record"
        assert "tools" not in body or not body["tools"]
    second = fake_openai.requests[1]["messages"]
    assert json.loads(second[-2]["content"])["result"]["userId"] == "Mike Smith!"
    assert second[-1]["role"] == "user"
    assert second[-1]["content"] == (
        "The previous output did not conform to the schema:\n"
        '- /timestamp: value must match format "date-time"\n'
        '- /userId: value must match pattern "^[a-zA-Z0-9_-]{3,16}$" (was "Mike Smith!")\n'
        "\n"
        "Please correct these and try again. Do not change fields that were valid."
    )
    assert result.usage.calls == 2 and result.usage.promptTokens == 20 and result.usage.completionTokens == 10


async def test_provider_rejecting_json_schema_falls_back_over_http(fake_openai):
    fake_openai.enqueue_error(400, {"error": {"message": "Invalid schema for response_format 'x': 'allOf' is not permitted"}})
    fake_openai.enqueue(text=json.dumps({"userId": "mike", "action": "a_b", "timestamp": "2026-05-06T09:15:00Z", "status": "success"}))
    result = await service_for(fake_openai).run_structured(
        StructureRequest(prompt="p", schema="user-action-record", schemaMode="named")
    )
    assert result.status == "ok" and result.iterations == 1
    assert [b.get("response_format") for b in fake_openai.requests][1] == {"type": "json_object"}
    assert result.formatFallbacks and result.formatFallbacks[0].startswith("json_schema:strict → json_object")
    assert result.outputMode == "json_object"


def _cli(args: list[str], server, home: Path, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VANCE_")}
    env.update(
        VANCE_HOME=str(home),
        VANCE_MODEL="openai/test-model",
        VANCE_API_BASE=server.url,
        VANCE_API_KEY="test",
        VANCE_ALLOW_MODEL_REQUESTS="0",
        PYTHONPATH=str(REPO),
    )
    return subprocess.run(
        [sys.executable, "-m", "vance_cli", *args], check=False, env=env, cwd=cwd, capture_output=True, text=True, input=stdin, timeout=60
    )


def test_real_cli_subprocess_exit_codes_and_no_litellm(fake_openai, tmp_path, vance_home):
    cwd = Path.cwd()
    schema = json.dumps({"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}, "required": ["n"]})
    fake_openai.enqueue(text=json.dumps({"result": {"n": 9}, "_need": None}))
    fake_openai.enqueue(text=json.dumps({"result": {"n": 4}, "_need": None}))
    ok = _cli(["structure", "four", "--schema", schema], fake_openai, vance_home, cwd)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout) == {"n": 4}
    assert len(fake_openai.requests) == 2

    fake_openai.enqueue(text=json.dumps({"result": None, "_need": "which number?"}))
    need = _cli(["structure", "-", "--schema", schema, "--json"], fake_openai, vance_home, cwd, stdin="a number")
    assert need.returncode == 3 and json.loads(need.stdout)["need"] == "which number?"

    bad = _cli(["structure", "x", "--schema", '{"type": 12}'], fake_openai, vance_home, cwd)
    assert bad.returncode == 1 and "not a valid JSON Schema" in bad.stderr and "Traceback" not in bad.stderr
    empty = _cli(["structure", "", "--schema", schema], fake_openai, vance_home, cwd)
    assert empty.returncode == 2 and "Traceback" not in empty.stderr
    loops = _cli(["structure", "x", "--schema", schema, "--max-loops", "11"], fake_openai, vance_home, cwd)
    assert loops.returncode == 2 and "--max-loops must be between 1 and 10" in loops.stderr

    for _ in range(2):
        fake_openai.enqueue(text=json.dumps({"result": {"n": 8}, "_need": None}))
    stale = _cli(["structure", "x", "--schema", schema, "--max-loops", "2"], fake_openai, vance_home, cwd)
    assert stale.returncode == 4 and "- /n: value must be ≤ 5 (was 8)" in stale.stderr


def test_structure_path_does_not_import_litellm(fake_openai, vance_home):
    """Start-up cost: an openai/... model with an api_base uses httpx directly, never litellm."""
    code = (
        "import atexit, sys, runpy\n"
        "sys.argv = ['vance', 'structure', 'four', '--schema', '{\"type\": \"object\"}']\n"
        "atexit.register(lambda: print('LITELLM' if 'litellm' in sys.modules else 'CLEAN', file=sys.stderr))\n"
        "runpy.run_module('vance_cli', run_name='__main__')\n"  # ends with os._exit, after atexit
    )
    fake_openai.enqueue(text=json.dumps({"result": {}, "_need": None}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("VANCE_")}
    env.update(VANCE_HOME=str(vance_home), VANCE_MODEL="openai/test-model", VANCE_API_BASE=fake_openai.url, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True, timeout=60)
    assert proc.stderr.strip().splitlines()[-1] == "CLEAN", proc.stderr
    assert len(fake_openai.requests) == 1


def test_real_cli_schemas_commands(fake_openai, tmp_path, vance_home):
    cwd = Path.cwd()
    listed = _cli(["schemas", "list"], fake_openai, vance_home, cwd)
    assert listed.returncode == 0, listed.stderr
    assert "user-action-record" in listed.stdout and "registry:bundled" in listed.stdout
    schema_file = tmp_path / "s.json"
    schema_file.write_text(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}))
    added = _cli(["schemas", "add", "numbers", str(schema_file), "--scope", "user"], fake_openai, vance_home, cwd)
    assert added.returncode == 0, added.stderr
    fake_openai.enqueue(text=json.dumps({"result": {"n": 3}, "_need": None}))
    used = _cli(["structure", "three", "--schema", "numbers", "--json"], fake_openai, vance_home, cwd)
    out = json.loads(used.stdout)
    assert out["schemaOrigin"] == "registry:tenant:local" and out["schemaMode"] == "named" and out["data"] == {"n": 3}
    assert _cli(["schemas", "rm", "numbers"], fake_openai, vance_home, cwd).returncode == 0
    assert _cli(["schemas", "show", "numbers"], fake_openai, vance_home, cwd).returncode == 1
