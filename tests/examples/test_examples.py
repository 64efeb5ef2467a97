"""The files in examples/ are used here, through the real CLI, so the README's examples never rot."""

from __future__ import annotations

import json
import shutil

from tests.cli.helpers import REPO, json_lines, vance, write_script

EXAMPLES = REPO / "examples"


def test_custom_recipe_validates_and_drives_a_chat(vance_home, tmp_path):
    r = vance("recipes", "validate", str(EXAMPLES / "recipes" / "reviewer.yaml"))
    assert r.returncode == 0, r.stderr
    (vance_home / "recipes").mkdir()
    shutil.copy(EXAMPLES / "recipes" / "reviewer.yaml", vance_home / "recipes")
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [{"name": "respond", "arguments": {"message": "No findings.", "awaiting_user_input": True}}]},
    ])
    r = vance("chat", "--recipe", "reviewer", "-p", "review app.py", "--json", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    rows = vance("ps", "--json")
    assert json_lines(rows.stdout)[0]["recipe"] == "reviewer"
    assert "No findings." in r.stdout


def test_named_schema_with_manual_extracts_valid_json(vance_home, fake_openai):
    (vance_home / "schemas").mkdir()
    for name in ("expense.json", "expense.manual.md"):
        shutil.copy(EXAMPLES / "schemas" / name, vance_home / "schemas")
    listed = vance("schemas", "list")
    assert "expense" in listed.stdout, listed.stdout + listed.stderr
    answer = {"merchant": "Bistro 12", "date": "2026-03-04", "amount": 23.5, "currency": "EUR", "category": "meals"}
    fake_openai.enqueue(text=json.dumps({"result": answer, "_need": None}))
    env = {"VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url}
    r = vance("structure", "--schema", "expense", "Lunch at Bistro 12, 23.50 EUR on 2026-03-04", "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["data"] == answer
    sent = json.dumps(fake_openai.requests[0]["messages"])
    assert "total actually paid" in sent  # the manual reached the model


def test_benjy_criteria_file_reaches_the_interpret_stage_of_a_real_run(fake_openai, tmp_path):
    from tests.engines.benjy_brain import Brain

    ws = tmp_path / "ws"
    ws.mkdir()
    fake_openai.responder = Brain(items=1).reply_body
    env = {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    criteria = EXAMPLES / "benjy" / "criteria.md"
    r = vance("benjy", "run", "write slugify() in slug.py", "--workspace", str(ws),
              "--criteria", str(criteria), env=env)
    assert r.returncode == 0, r.stderr
    interpret = next(b for b in fake_openai.requests
                     if (b.get("response_format") or {}).get("json_schema", {}).get("name") == "benjy_interpret")
    sent = json.dumps(interpret["messages"])
    for line in criteria.read_text().splitlines():
        if line.strip():
            assert json.dumps(line.strip("- ").strip())[1:-1] in sent, line
