"""Odd bytes and odd files: non-UTF-8 names and input, lone surrogates, terminal escapes, and
process files that are valid JSON but cannot be listed or run as they are."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import json_lines, respond, run_cli, write_script

ESC_TEXTS = [
    "\x1b]52;c;ZXZpbA==\x07",  # OSC 52: write the clipboard
    "\x1b]0;pwned title\x1b\\",  # OSC 0: window title
    "\x1b[2J\x1b[H",  # CSI: clear the screen
    "\x9b2J",  # 8-bit CSI
]


def vance_bytes(*args, input: bytes | None = None, env: dict | None = None):
    """Like run_cli, but argv and stdin may be raw bytes and the output stays bytes."""
    return run_cli(*args, env=env, input=input, text=False)


def _no_processes(home: Path) -> bool:
    folder = home / "processes"
    return not folder.exists() or not any(folder.iterdir())


# --------------------------------------------------------------------------- names and input


def test_a_non_utf8_file_name_does_not_wedge_the_chat(tmp_path):
    (Path.cwd() / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    model = write_script(
        tmp_path / "s.json",
        [
            {"tool_calls": [{"name": "file_list", "arguments": {}}]},
            respond("listed"),
        ],
    )
    r = run_cli("chat", "-p", "list the folder", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "listed\n"
    process = json.loads(run_cli("show", "--json", json_lines(run_cli("ps", "--json").stdout)[0]["id"]).stdout)
    listing = next(m["content"] for m in process["history"] if m["role"] == "tool" and m["name"] == "file_list")
    assert "caf\\xe9.txt" in listing and "not valid UTF-8" in listing
    model = write_script(tmp_path / "s2.json", [respond("still here")])  # each run reads its script anew
    r = run_cli("chat", "--continue", "-p", "again", "--model", model)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "still here\n"


@pytest.mark.parametrize("command", [["chat", "-p"], ["structure", "--schema", '{"type": "object"}']])
def test_a_non_utf8_prompt_is_a_usage_error_that_creates_nothing(command, vance_home):
    args = [*command[:2], b"caf\xe9", *command[2:]] if command[0] == "chat" else [command[0], b"caf\xe9", *command[1:]]
    r = vance_bytes(*args, env={"VANCE_MODEL": "scripted:/nonexistent"})
    assert r.returncode == 2, r.stderr
    assert b"the prompt is not valid UTF-8 (byte 0xe9 at character 4)" in r.stderr
    assert b"internal error" not in r.stderr
    assert _no_processes(vance_home)


@pytest.mark.parametrize("command", [["chat", "-p", "-"], ["structure", "-", "--schema", '{"type": "object"}']])
def test_binary_stdin_is_a_usage_error_that_creates_nothing(command, vance_home):
    r = vance_bytes(*command, input=b"\x7fELF\x02\x01\x01\x00\xff\xfe", env={"VANCE_MODEL": "scripted:/nonexistent"})
    assert r.returncode == 2, r.stderr
    assert b"the input on stdin is not valid UTF-8 text (byte 0xff at offset 8)" in r.stderr
    assert _no_processes(vance_home)


def test_the_line_repl_refuses_a_non_utf8_line_and_goes_on(tmp_path):
    model = write_script(tmp_path / "s.json", [respond("got it")])
    r = vance_bytes("chat", "--plain", input=b"caf\xe9\nfine\n", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    assert b"that line is not valid UTF-8" in r.stderr
    assert r.stdout == b"got it\n"


def test_a_respond_message_with_a_lone_surrogate_prints_and_saves(tmp_path):
    script = tmp_path / "s.json"
    # the JSON escape \ud800 decodes to a lone surrogate: no UTF-8 encoding exists for it
    script.write_text('[{"tool_calls": [{"name": "respond", "arguments": {"message": "bad \\ud800 char"}}]}]')
    r = run_cli("chat", "-p", "hi", env={"VANCE_MODEL": f"scripted:{script}"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "bad \ufffd char\n"
    script.write_text('[{"tool_calls": [{"name": "respond", "arguments": {"message": "bad \\ud800 char"}}]}]')
    r = run_cli("chat", "-p", "hi", "--json", env={"VANCE_MODEL": f"scripted:{script}"})
    assert r.returncode == 0, r.stderr
    message = next(e for e in json_lines(r.stdout) if e["type"] == "message")
    assert message["text"] == "bad \ud800 char"  # JSON keeps the data, escaped
    assert run_cli("show", message["process_id"]).returncode == 0


def test_a_lone_surrogate_from_the_model_never_makes_the_process_unsavable(tmp_path):
    script = tmp_path / "s.json"
    script.write_text(
        '["free text \\udce9 first", {"tool_calls": [{"name": "respond", "arguments": {"message": "ok"}}]}]'
    )
    r = run_cli("chat", "-p", "hi", env={"VANCE_MODEL": f"scripted:{script}"})
    assert r.returncode == 0, r.stderr
    pid = json_lines(run_cli("ps", "--json").stdout)[0]["id"]
    process = json.loads(run_cli("show", "--json", pid).stdout)
    assert process["history"][1]["content"] == "free text \ufffd first"


# --------------------------------------------------------------------------- terminal escapes


def test_escape_sequences_from_the_model_never_reach_the_terminal(tmp_path):
    message = "hello " + "".join(ESC_TEXTS) + "world"
    model = write_script(tmp_path / "s.json", [respond(message)])
    r = run_cli("chat", "-p", "title " + ESC_TEXTS[1] + "me", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "hello world\n"
    for text in (r.stdout, r.stderr):
        assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    ps = run_cli("ps")
    assert "title me" in ps.stdout and "\x1b" not in ps.stdout
    pid = json_lines(run_cli("ps", "--json").stdout)[0]["id"]
    show = run_cli("show", pid)
    assert "title    title me" in show.stdout and "hello world" in show.stdout
    assert "\x1b" not in show.stdout and "\x9b" not in show.stdout and "\x07" not in show.stdout
    # --json keeps the bytes of the data, escaped so that a terminal shows them harmlessly
    raw = run_cli("ps", "--json").stdout
    assert "\x1b" not in raw and "\x9b" not in raw and json_lines(raw)[0]["title"].startswith("title \x1b]0;")


def test_the_shared_sanitiser_strips_control_sequences():
    from vance_cli.text import for_terminal, json_text

    assert for_terminal("a" + "".join(ESC_TEXTS) + "b\r\tc\n\x00d\x7fe") == "ab\tc\nde"
    assert for_terminal("\x1b]0;never closed\nnext line") == "\nnext line"
    assert for_terminal("日本 café") == "日本 café"
    assert json.loads(json_text({"k": "\x9b\ud800\u2028x"})) == {"k": "\x9b\ud800\u2028x"}
    assert "\x9b" not in json_text("\x9b") and "\ud800" not in json_text("\ud800")


# --------------------------------------------------------------------------- odd process files


def _make_process(tmp_path, prompt="hi") -> str:
    model = write_script(tmp_path / f"{prompt}.json", [respond("ok")])
    r = run_cli("chat", "-p", prompt, "--json", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    return json_lines(r.stdout)[0]["process_id"]


def _edit(home: Path, pid: str, **changes) -> None:
    path = home / "processes" / f"{pid}.json"
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if callable(value):
            value(data)
        else:
            data[key] = value
    path.write_text(json.dumps(data))


def test_an_absurd_updated_time_is_a_per_file_warning_and_never_the_continue_target(tmp_path, vance_home):
    good = _make_process(tmp_path, "good")
    bad = _make_process(tmp_path, "bad")
    (vance_home / "processes" / f"{bad}.json").write_text(
        (vance_home / "processes" / f"{bad}.json").read_text().replace('"updated": ', '"updated": 1e300, "x_old": ', 1)
    )
    ps = run_cli("ps")
    assert ps.returncode == 0, ps.stderr
    assert good in ps.stdout and bad not in ps.stdout
    assert "unreadable process file" in ps.stderr and "updated" in ps.stderr
    model = write_script(tmp_path / "c.json", [respond("continued")])
    r = run_cli("chat", "--continue", "-p", "next", "--json", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout)[0]["process_id"] == good


def test_a_future_updated_time_is_listed_but_not_continued(tmp_path, vance_home):
    good = _make_process(tmp_path, "good")
    future = _make_process(tmp_path, "future")
    _edit(vance_home, future, updated=4e9)  # year 2096
    ps = run_cli("ps")
    assert good in ps.stdout and future in ps.stdout
    assert f"process {future} was updated in the future" in ps.stderr
    model = write_script(tmp_path / "c.json", [respond("continued")])
    r = run_cli("chat", "--continue", "-p", "next", "--json", env={"VANCE_MODEL": model})
    assert json_lines(r.stdout)[0]["process_id"] == good


def test_an_unknown_engine_warns_in_ps_and_resume_explains(tmp_path, vance_home):
    good = _make_process(tmp_path, "good")
    bad = _make_process(tmp_path, "bad")
    _edit(vance_home, bad, engine="zaphod")
    before = (vance_home / "processes" / f"{bad}.json").read_bytes()
    ps = run_cli("ps")
    assert ps.returncode == 0 and good in ps.stdout and bad in ps.stdout
    assert f"warning: process {bad} cannot be resumed: its engine 'zaphod' is unknown" in ps.stderr
    model = write_script(tmp_path / "c.json", [respond("never")])
    r = run_cli("chat", "--resume", bad, "-p", "next", env={"VANCE_MODEL": model})
    assert r.returncode == 1
    assert f"error: process {bad} cannot be run: its engine 'zaphod' is unknown" in r.stderr
    assert "KeyError" not in r.stderr and "Traceback" not in r.stderr
    assert (vance_home / "processes" / f"{bad}.json").read_bytes() == before  # untouched


def test_a_broken_embedded_recipe_warns_in_ps_and_resume_explains(tmp_path, vance_home):
    bad = _make_process(tmp_path, "bad")

    def break_recipe(data):
        data["recipe"]["maxToolIterations"] = "lots"
        data["recipe"]["tools"] = {"allowed": ["respond", "teleport"]}

    _edit(vance_home, bad, recipe=break_recipe)
    ps = run_cli("ps")
    assert f"warning: process {bad} cannot be resumed: its embedded recipe is invalid" in ps.stderr
    assert "maxToolIterations" in ps.stderr and "teleport" in ps.stderr
    model = write_script(tmp_path / "c.json", [respond("never")])
    for args in (["-p", "next"], ["--plain"]):
        r = run_cli("chat", "--resume", bad, *args, env={"VANCE_MODEL": model}, input="")
        assert r.returncode == 1
        assert f"process {bad} cannot be run: its embedded recipe is invalid" in r.stderr
        assert "ValidationError" not in r.stderr and "Traceback" not in r.stderr


def test_a_server_error_text_in_the_retry_line_reaches_the_terminal_without_escapes(fake_openai, vance_home, tmp_path):
    """The retry announcement quotes the server's error body (the model's side): stripped like the rest."""
    for _ in range(2):
        fake_openai.enqueue_error(503, body="\x1b]52;c;ZXZpbA==\x07busy\x1b[2J")
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 2\nbase_delay = 0.01\nmax_delay = 0.01\n")
    r = run_cli("chat", "-p", "hi", env={"VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url}, cwd=tmp_path)
    assert r.returncode != 0
    assert "HTTP 503: busy; retrying in" in r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
