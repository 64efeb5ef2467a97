"""`vance chat` headless: the respond message on stdout, exit codes, resume, --json, the lock."""

from __future__ import annotations

import json

from tests.helpers import json_lines, run_cli, write_script


def respond(message, awaiting=True):
    return {"tool_calls": [{"name": "respond", "arguments": {"message": message, "awaiting_user_input": awaiting}}]}


def test_chat_p_prints_the_respond_message_on_stdout(tmp_path):
    model = write_script(tmp_path / "s.json", [respond("Hello, person!")])
    r = run_cli("chat", "-p", "hello", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Hello, person!\n"
    assert "BLOCKED" in r.stderr


def test_chat_p_corrects_free_text_before_answering(tmp_path):
    model = write_script(tmp_path / "s.json", ["plain text, no tool", respond("proper answer")])
    r = run_cli("chat", "-p", "hello", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "proper answer\n"
    assert "correction 1/2: no tool call" in r.stderr


def test_chat_json_emits_events_as_json_lines(tmp_path):
    model = write_script(tmp_path / "s.json", [respond("hi")])
    r = run_cli("chat", "-p", "hello", "--json", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    events = json_lines(r.stdout)
    types = [e["type"] for e in events]
    assert "message" in types and "status_changed" in types and "usage" in types
    msg = next(e for e in events if e["type"] == "message")
    assert msg["text"] == "hi" and msg["awaiting_user_input"] is True
    assert all("process_id" in e for e in events)


def test_no_model_configured_names_the_fix_and_exits_1():
    r = run_cli("chat", "-p", "hello")
    assert r.returncode == 1
    assert "no model configured" in r.stderr
    assert "VANCE_MODEL" in r.stderr
    assert "Traceback" not in r.stderr


def test_usage_errors_exit_2():
    r = run_cli("chat", "--no-such-flag")
    assert r.returncode == 2
    r = run_cli("chat", "-p", "   ", env={"VANCE_MODEL": "scripted:/nonexistent"})
    assert r.returncode == 2 and "empty" in r.stderr


def test_resume_and_continue_keep_the_conversation(tmp_path):
    model = write_script(tmp_path / "s.json", [respond("first answer")])
    r = run_cli("chat", "-p", "one", "--json", env={"VANCE_MODEL": model})
    pid = json_lines(r.stdout)[0]["process_id"]
    model2 = write_script(tmp_path / "s2.json", [respond("second answer")])
    r = run_cli("chat", "-p", "two", "--resume", pid[:12], "--model", model2)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "second answer\n"
    model3 = write_script(tmp_path / "s3.json", [respond("third answer")])
    r = run_cli("chat", "-p", "three", "--continue", "--model", model3)
    assert r.stdout == "third answer\n"
    show = run_cli("show", pid, "--json")
    process = json.loads(show.stdout)
    users = [m["content"] for m in process["history"] if m["role"] == "user"]
    assert users == ["one", "two", "three"]
    assert process["usage"]["calls"] == 3


def test_resume_unknown_id_is_a_clear_error():
    r = run_cli("chat", "-p", "x", "--resume", "nope", env={"VANCE_MODEL": "scripted:/x"})
    assert r.returncode == 1
    assert "nope" in r.stderr and "Traceback" not in r.stderr


def test_plain_repl_reads_lines_until_eof(tmp_path):
    model = write_script(tmp_path / "s.json", [respond("answer one"), respond("answer two")])
    r = run_cli("chat", "--plain", env={"VANCE_MODEL": model}, input="first\nsecond\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "answer one\nanswer two\n"
    assert "resume with: vance chat --resume" in r.stderr


def test_a_second_vance_on_a_locked_process_names_the_holder(tmp_path):
    import subprocess
    import sys
    import time

    model = write_script(tmp_path / "s.json", [respond("a")])
    r = run_cli("chat", "-p", "one", "--json", env={"VANCE_MODEL": model})
    pid = json_lines(r.stdout)[0]["process_id"]
    # hold the lock from another process, as a running `vance chat --resume` would
    import os

    from tests.helpers import REPO

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; from vance_cli.config.scopes import Scopes; from vance_cli.store.files import ProcessStore\n"
            f"s=ProcessStore.for_scopes(Scopes.discover())\nwith s.lock('{pid}'):\n print('held', flush=True); time.sleep(20)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        r = run_cli("chat", "-p", "two", "--resume", pid, env={"VANCE_MODEL": model})
        assert r.returncode == 1
        assert str(holder.pid) in r.stderr and "in use" in r.stderr
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.05)


def test_continue_takes_this_folders_latest_chat_and_all_takes_any(tmp_path):
    # issue 16: in proj, --continue resumed proj2's chat (the newer one) and the model wrote there.
    proj, proj2 = tmp_path / "proj", tmp_path / "proj2"
    proj.mkdir()
    proj2.mkdir()
    first = write_script(tmp_path / "a.json", [respond("in proj")])
    mine = json_lines(run_cli("chat", "-p", "one", "--json", env={"VANCE_MODEL": first}, cwd=proj).stdout)[0]["process_id"]
    second = write_script(tmp_path / "b.json", [respond("in proj2")])
    theirs = json_lines(run_cli("chat", "-p", "two", "--json", env={"VANCE_MODEL": second}, cwd=proj2).stdout)[0]["process_id"]
    assert mine != theirs
    again = write_script(tmp_path / "c.json", [respond("again in proj")])
    r = run_cli("chat", "-p", "three", "--continue", "--json", "--model", again, cwd=proj)
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout)[0]["process_id"] == mine
    other = write_script(tmp_path / "d.json", [respond("any folder")])
    r = run_cli("chat", "-p", "four", "--continue", "--all", "--json", "--model", other, cwd=proj)
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout)[0]["process_id"] == mine  # proj's chat is the newest now
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_cli("chat", "-p", "five", "--continue", "--model", other, cwd=empty)
    assert r.returncode == 2 and r.stdout == ""
    assert "no earlier chat in this folder" in r.stderr and "--all" in r.stderr and mine in r.stderr


def test_continue_all_takes_another_folders_chat(tmp_path):
    proj, proj2 = tmp_path / "proj", tmp_path / "proj2"
    proj.mkdir()
    proj2.mkdir()
    model = write_script(tmp_path / "a.json", [respond("there")])
    theirs = json_lines(run_cli("chat", "-p", "one", "--json", env={"VANCE_MODEL": model}, cwd=proj2).stdout)[0]["process_id"]
    model2 = write_script(tmp_path / "b.json", [respond("from proj")])
    r = run_cli("chat", "-p", "two", "--continue", "--all", "--json", "--model", model2, cwd=proj)
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout)[0]["process_id"] == theirs


def test_a_process_file_with_a_null_turn_loads_and_resumes(tmp_path, vance_home):
    # Found by review of issue 14: `"turn": null` in engine_params (an old or hand-edited file)
    # crashed `vance chat --plain --resume` and the full-screen app's check for an open turn.
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.engines import ask_again, awaiting_approval, has_work
    from vance_cli.engines.base import TURN_KEY, turn_open
    from vance_cli.runtime.runner import Runtime
    from vance_cli.tui.controller import ChatController

    model = write_script(tmp_path / "s.json", [respond("first answer")])
    r = run_cli("chat", "-p", "one", "--json", env={"VANCE_MODEL": model})
    pid = json_lines(r.stdout)[0]["process_id"]
    path = vance_home / "processes" / f"{pid}.json"

    def null_turn():
        data = json.loads(path.read_text())
        assert TURN_KEY in data["engine_params"]
        data["engine_params"][TURN_KEY] = None
        path.write_text(json.dumps(data))

    null_turn()

    scopes = Scopes.discover()
    runtime = Runtime(scopes, Settings.load(scopes))
    process = runtime.store.load(pid)
    assert not turn_open(process) and not has_work(process)
    assert awaiting_approval(process) is None and ask_again(process) is False
    controller = ChatController(runtime, pid)
    controller.open()
    try:
        assert controller.has_open_turn() is False
    finally:
        controller.close()

    model2 = write_script(tmp_path / "s2.json", [respond("second answer")])
    r = run_cli("chat", "--plain", "--resume", pid, "--model", model2, input="two\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "second answer\n"
    null_turn()
    model3 = write_script(tmp_path / "s3.json", [respond("third answer")])
    r = run_cli("chat", "-p", "three", "--resume", pid, "--model", model3)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "third answer\n"
