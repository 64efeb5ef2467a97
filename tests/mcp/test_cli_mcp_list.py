"""`vance mcp list` and start-up: commands that use no MCP server do not import mcp."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO, run_cli, write_script

TOY = str(Path(__file__).with_name("toy_server.py"))


def test_mcp_list_shows_servers_tools_and_an_untrusted_projects_server_unstarted(vance_home, tmp_path):
    (vance_home / "config.toml").write_text(f'[mcp.servers.toy]\ncommand = "{sys.executable}"\nargs = ["{TOY}"]\n')
    project = tmp_path / "repo"
    (project / ".vance").mkdir(parents=True)
    marker = tmp_path / "started"
    (project / ".vance" / "config.toml").write_text(f'[mcp.servers.evil]\ncommand = "touch"\nargs = ["{marker}"]\n')
    r = run_cli("mcp", "list", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "toy (user, stdio)" in r.stdout and "mcp__toy__lookup" in r.stdout and "mcp__toy__note" in r.stdout
    # its readOnlyHint is only its claim: not trusted without trust_read_only, so each call asks
    assert "(read-only)" not in r.stdout
    claimed = next(line for line in r.stdout.splitlines() if "says read-only" in line)
    assert "mcp__toy__lookup" in claimed and "mcp__toy__note" not in claimed
    assert "trust_read_only = true in [mcp.servers.toy]" in claimed
    assert "evil (project, stdio)" in r.stdout and "not started:" in r.stdout and "vance trust" in r.stdout
    assert not marker.exists()


def test_chat_p_and_help_do_not_import_mcp(tmp_path):
    model = write_script(tmp_path / "s.json", [{"tool_calls": [{"name": "respond", "arguments": {"message": "x"}}]}])
    probe = (
        "import sys\nfrom vance_cli.cli.main import run\n"
        "try:\n    run(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('MCP=' + str('mcp' in sys.modules) + '\\n')\n"
    )
    for argv in (["--help"], ["chat", "-p", "hi"], ["mcp", "--help"]):
        r = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(REPO), "VANCE_MODEL": model, "VANCE_HOME": str(tmp_path / "h")},
        )
        assert "MCP=False" in r.stderr, (argv, r.stderr)


def test_doctor_checks_each_mcp_server(vance_home):
    (vance_home / "config.toml").write_text(
        f'[mcp.servers.toy]\ncommand = "{sys.executable}"\nargs = ["{TOY}"]\n'
        '[mcp.servers.gone]\ncommand = "/nonexistent/server"\ntimeout = 3\n'
    )
    r = run_cli("doctor", "--offline", env={"VANCE_MODEL": "openai/x"})
    line = next(x for x in r.stdout.splitlines() if " mcp " in x)
    assert line.startswith("FAIL") and "gone" in line, r.stdout
    assert r.returncode == 1


def test_a_server_that_does_not_start_says_why_with_its_stderr_in_mcp_list_and_doctor(vance_home):
    # (the words are joined at run time: the command line shown does not hold them)
    exits = "import sys; sys.stderr.write('starting\\\\nmissing API ' + 'key: set FOO_TOKEN\\\\n'); sys.exit(2)"
    (vance_home / "config.toml").write_text(
        f'[mcp.servers.exits]\ncommand = "{sys.executable}"\nargs = ["-c", "{exits}"]\ntimeout = 20\n'
        '[mcp.servers.refused]\nurl = "http://127.0.0.1:9/mcp"\ntimeout = 20\n'
    )
    listed = run_cli("mcp", "list")
    doctor = run_cli("doctor", "--offline", env={"VANCE_MODEL": "openai/x"})
    mcp_line = next(x for x in doctor.stdout.splitlines() if " mcp " in x)
    for text in (listed.stdout, mcp_line):
        assert "ExceptionGroup" not in text and "TaskGroup" not in text, text  # the cause, not its wrapper
        assert "missing API key: set FOO_TOKEN" in text, text  # the server's own last stderr line
        assert "refused" in text and "onnect" in text, text  # the HTTP connection was refused
    assert (vance_home / "mcp" / "exits.log").read_text().endswith("missing API key: set FOO_TOKEN\n")


def test_credentials_in_a_server_url_are_not_shown_by_mcp_list_or_doctor(vance_home):
    (vance_home / "config.toml").write_text(
        '[mcp.servers.remote]\nurl = "http://user:PASSWORD@127.0.0.1:9/mcp?api_key=SECRET_IN_URL"\ntimeout = 10\n'
        'headers = { Authorization = "Bearer SECRET_HEADER" }\n'
    )
    listed = run_cli("mcp", "list")
    doctor = run_cli("doctor", "--offline", env={"VANCE_MODEL": "openai/x"})
    shown = listed.stdout + listed.stderr + doctor.stdout + doctor.stderr
    assert "remote (user, http): http://***@127.0.0.1:9/mcp?…" in listed.stdout, listed.stdout
    for secret in ("PASSWORD", "SECRET_IN_URL", "SECRET_HEADER"):
        assert secret not in shown, secret


def test_an_untrusted_projects_server_is_never_started_by_doctor_or_chat(vance_home, tmp_path, fake_openai):
    project = tmp_path / "repo"
    (project / ".vance").mkdir(parents=True)
    marker = tmp_path / "started"
    (project / ".vance" / "config.toml").write_text(
        f'[mcp.servers.evil]\ncommand = "{sys.executable}"\nargs = ["-c", "open({str(marker)!r}, \'w\').write(\'x\')"]\n'
        '[mcp.servers.evil2]\nurl = "http://127.0.0.1:9/mcp?token=SECRET_IN_URL"\n'
        'headers = { Authorization = "Bearer SECRET_HEADER" }\n'
    )
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "r.yaml").write_text("engine: ford\ntools:\n  allowed: [respond]\n  add: ['mcp:evil/*']\nsystemPrompt: x\n")
    env = {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}
    doctor = run_cli("doctor", "--offline", cwd=project, env=env)
    fake_openai.enqueue(tool_calls=[("respond", {"message": "hi"})])
    chat = run_cli("chat", "--recipe", "r", "-p", "hi", cwd=project, env=env)
    assert not marker.exists()  # neither started it
    mcp_line = next(x for x in doctor.stdout.splitlines() if " mcp " in x)
    assert mcp_line.lower().startswith("warn") and "evil: " in mcp_line and "not trusted" in mcp_line, mcp_line
    assert chat.returncode == 0 and chat.stdout.startswith("hi"), chat.stderr
    assert "mcp:evil/*" in chat.stderr and "not trusted" in chat.stderr  # the journal says why it has no tools
    assert {t["function"]["name"] for t in fake_openai.requests[0]["tools"]} == {"respond"}
    for r in (doctor, chat):
        assert "SECRET_HEADER" not in r.stdout + r.stderr and "SECRET_IN_URL" not in r.stdout + r.stderr
