"""Issue 17 re-review, finding 3 (MED): a Benjy process file with a benjyState, benjyOptions or
benjyRecipes of the wrong shape is a clear error in `benjy status`, `benjy resume` and
`benjy answer` ("process ID cannot be run: benjyState: items: ...", exit 1, the check every resume
makes: runtime/checks.py), never an internal error, and the file is kept as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.test_cli_benjy import CHECK, CHECK_PY
from tests.engines.benjy_brain import Brain
from tests.helpers import run_cli

MUTATIONS = {
    "benjyState-is-a-list": lambda d: d["engine_params"].__setitem__("benjyState", [1, 2]),
    "benjyState-items-is-a-string": lambda d: d["engine_params"]["benjyState"].__setitem__("items", "x"),
    "benjyOptions-is-a-string": lambda d: d["engine_params"].__setitem__("benjyOptions", "x"),
    "benjyRecipes-is-empty": lambda d: d["engine_params"].__setitem__("benjyRecipes", {}),
    # beyond the reviewer's four: an option of the wrong type, a recipe snapshot that is not a table
    "benjyOptions-criteriaFiles-is-an-int": lambda d: d["engine_params"]["benjyOptions"].__setitem__("criteriaFiles", 5),
    "benjyRecipes-value-is-a-string": lambda d: d["engine_params"].__setitem__(
        "benjyRecipes", {k: "x" for k in d["engine_params"]["benjyRecipes"]}),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_a_corrupt_benjy_process_file_is_a_clear_error(fake_openai, tmp_path, name):
    # the reviewer's repro (test_r6_benjy_corrupt_process.py)
    env = {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text(CHECK_PY)
    fake_openai.responder = Brain(
        items=1, overrides={"ROUTE": lambda p: {"op": "ask_parent", "question": "Q?", "reason": "r"}},
        worker_files=lambda n, p: [(f"item{n}.txt", "BAD\n")],
    ).reply_body
    r = run_cli("benjy", "run", "write the item file", "--workspace", str(ws), "--check", CHECK, env=env)
    assert r.returncode == 10, r.stderr  # BLOCKED on the question
    pid = r.stderr.split("benjy run ", 1)[1].split()[0]
    pfile = Path(os.environ["VANCE_HOME"]) / "processes" / f"{pid}.json"
    data = json.loads(pfile.read_text())
    MUTATIONS[name](data)
    text = json.dumps(data)
    pfile.write_text(text)
    failures = {}
    for args in (("benjy", "status", pid), ("benjy", "resume", pid), ("benjy", "answer", pid, "yes")):
        r = run_cli(*args, env=env)
        if "internal error" in r.stderr or "Traceback" in r.stderr:
            failures[" ".join(args[:2])] = r.stderr.strip().splitlines()[0]
        else:
            assert r.returncode == 1 and f"process {pid} cannot be run: benjy" in r.stderr, (args, r.returncode, r.stderr)
            assert f"fix: the file {pfile} was kept untouched" in r.stderr, r.stderr
        assert pfile.read_text() == text
    assert not failures, failures
