"""Issue 17 review, bad input: what still reached "internal error" after the first round.

Schema files nested 5,000 / 200,000 deep or holding a 5,000-digit integer (as `--schema FILE`, in
a project's registry, through `schemas add`); a closed stdin (`0<&-`) for the chat, the plain chat,
`benjy run` and `demo`; a process file nested 900 deep; the plain chat reading `< /dev/zero`.
Each is a clear error with the documented exit code (or the same outcome as `</dev/null`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.helpers import run_cli, subprocess_env, write_script

RESPOND = {"tool_calls": [{"name": "respond", "arguments": {"message": "hi", "awaiting_user_input": True}}]}
BODIES = {
    "5000-deep": "[" * 5000 + "]" * 5000,
    "200000-deep": "[" * 200_000 + "]" * 200_000,
    "big-int": '{"type": "object", "maximum": ' + "9" * 5000 + "}",
}


def _no_crash(r) -> None:
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("body", list(BODIES), ids=list(BODIES))
def test_a_schema_file_too_deep_or_too_big_is_a_clear_error(tmp_path, body):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    schema = work / "s.json"
    schema.write_text(BODIES[body])
    script = write_script(tmp_path / "b.json", ["{}"])
    r = run_cli("structure", "x", "--schema", str(schema), "--model", script, cwd=work)
    _no_crash(r)
    assert r.returncode == 1 and "s.json" in r.stderr and "fix:" in r.stderr, r.stderr
    r = run_cli("schemas", "add", "thing", str(schema), cwd=work)
    _no_crash(r)
    assert r.returncode == 1 and "s.json" in r.stderr, r.stderr
    what = "integer of more than 4,300 digits" if body == "big-int" else "nested too deeply"
    assert what in r.stderr


@pytest.mark.parametrize("body", list(BODIES), ids=list(BODIES))
def test_a_project_schema_too_deep_or_too_big_is_skipped_with_a_warning(tmp_path, body):
    work = tmp_path / "work"
    (work / ".vance" / "schemas").mkdir(parents=True)
    (work / ".vance" / "schemas" / "s.json").write_text(BODIES[body])
    r = run_cli("schemas", "list", cwd=work)
    _no_crash(r)
    assert r.returncode == 0
    assert "skipped schema 's'" in r.stderr and "s.json" in r.stderr, r.stderr


def _closed_stdin_run(tmp_path, args, stdin: str):
    script = write_script(tmp_path / "b.json", [RESPOND] * 5)
    extra = [] if args == ["demo"] else ["--model", script]
    (tmp_path / "work").mkdir(exist_ok=True)
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {stdin}', "sh", sys.executable, "-m", "vance_cli", *args, *extra],
        capture_output=True, text=True, env=subprocess_env({"VANCE_HOME": str(tmp_path / "vance-home")}),
        cwd=tmp_path / "work", timeout=180,
    )


@pytest.mark.parametrize("args", [["chat"], ["chat", "--plain"], ["benjy", "run", "goal"], ["demo"]],
                         ids=["chat", "chat-plain", "benjy-run", "demo"])
def test_a_closed_stdin_ends_as_an_empty_one(tmp_path, args):
    empty = _closed_stdin_run(tmp_path, args, "</dev/null")
    closed = _closed_stdin_run(tmp_path, args, "<&-")
    _no_crash(closed)
    assert closed.returncode == empty.returncode, (closed.returncode, empty.returncode, closed.stderr[-600:])


def test_a_process_file_nested_900_deep_is_unreadable_not_a_crash(vance_home, tmp_path):
    script = write_script(tmp_path / "b.json", [RESPOND] * 3)
    assert run_cli("chat", "-p", "hello", "--model", script).returncode == 0
    (pfile,) = (vance_home / "processes").glob("*.json")
    data = json.loads(pfile.read_text())
    data["engine_params"] = {"x": json.loads("[" * 900 + "]" * 900)}
    pfile.write_text(json.dumps(data))
    kept = pfile.read_bytes()
    r = run_cli("chat", "-p", "again", "--resume", pfile.stem, "--model", script)
    _no_crash(r)
    assert r.returncode == 1 and "unreadable" in r.stderr and "levels deep" in r.stderr, r.stderr
    listed = run_cli("ps")
    assert listed.returncode == 0 and "unreadable process file" in listed.stderr, listed.stderr
    assert pfile.read_bytes() == kept


def test_a_process_nested_too_deep_to_save_is_a_clear_error(tmp_path):
    from vance_cli.errors import StoreError
    from vance_cli.store.files import ProcessStore
    from vance_cli.store.process import Process

    process = Process.model_validate({"id": "20260101-000000-abcdef", "engine": "ford", "model": "m"})
    process.engine_params = {"x": json.loads("[" * 400 + "]" * 400)}
    with pytest.raises(StoreError, match="nested more than"):
        ProcessStore(tmp_path).save(process)


def test_the_plain_chat_reading_dev_zero_stops_with_a_clear_error(tmp_path):
    script = write_script(tmp_path / "b.json", [RESPOND] * 3)
    (tmp_path / "work").mkdir(exist_ok=True)
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run(
            ["sh", "-c", 'ulimit -v 3000000; exec "$@"', "sh", sys.executable, "-m", "vance_cli", "chat", "--model", script],
            stdin=zero, capture_output=True, text=True, timeout=120,
            env=subprocess_env({"VANCE_HOME": str(tmp_path / "vance-home")}), cwd=tmp_path / "work",
        )
    _no_crash(r)
    assert r.returncode == 2 and "longer than" in r.stderr and "fix:" in r.stderr, r.stderr
    assert os.listdir(tmp_path / "vance-home" / "processes")  # the chat was saved


def _closed_output_run(tmp_path, args, redirect: str):
    (tmp_path / "work").mkdir(exist_ok=True)
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {redirect}', "sh", sys.executable, "-m", "vance_cli", *args],
        capture_output=True, text=True, env=subprocess_env({"VANCE_HOME": str(tmp_path / "vance-home")}),
        cwd=tmp_path / "work", timeout=180,
    )


@pytest.mark.parametrize("args", [["recipes", "list"], ["chat", "-p", "hi"], ["ps", "--json"]], ids=["recipes", "chat-p", "ps"])
def test_a_closed_stdout_discards_the_output_and_says_so(tmp_path, args):
    """`vance recipes list >&-` ended with "internal error: AttributeError" (Python has no
    sys.stdout then); it runs as with >/dev/null and says once that the output is discarded."""
    if args[0] == "chat":
        args = [*args, "--model", write_script(tmp_path / "b.json", [RESPOND] * 3)]
    nowhere = _closed_output_run(tmp_path, args, ">/dev/null")
    closed = _closed_output_run(tmp_path, args, ">&-")
    _no_crash(closed)
    assert closed.returncode == nowhere.returncode == 0, closed.stderr[-600:]
    ids = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")  # a chat's new process id
    assert ids.sub("ID", closed.stderr) == "vance: stdout is closed; what the command prints is discarded\n" + ids.sub("ID", nowhere.stderr)


def test_a_file_the_command_opens_never_takes_the_closed_stdouts_place(tmp_path):
    """With descriptor 1 closed, the next file opened took it, and a child process's stdout wrote
    into that file: here the check's output would have gone into a process file."""
    probe = ("import os, sys\nfrom vance_cli.cli import main\nmain._closed_output_goes_nowhere()\n"
             "fd = os.open(os.path.join(sys.argv[1], 'f'), os.O_WRONLY | os.O_CREAT)\nprint(fd, file=sys.stderr)\n")
    r = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-c", probe, str(tmp_path)],
                       capture_output=True, text=True, env=subprocess_env({}), timeout=60)
    assert r.returncode == 0, r.stderr
    assert int(r.stderr.split()[-1]) > 2
