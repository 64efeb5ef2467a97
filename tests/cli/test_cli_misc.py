"""`vance --help`, `ps`, `show`, `recipes`; commands that call no model import neither litellm nor textual
(nor mcp, nor the ACP SDK, which only `vance acp` uses: tests/acp/test_acp_startup.py covers `chat -p`;
nor Ray or pyarrow, which only `--engine ray` and a Parquet OUT import: tests/cli/test_benjy_batch.py covers a
local Benjy batch, test_a_local_batch_imports_neither_ray_nor_pyarrow a structure batch)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO, json_lines, run_cli, write_script

PROBE = (
    "import sys\n"
    "sys.argv = ['vance'] + sys.argv[1:]\n"
    "from vance_cli.cli.main import run\n"
    "try:\n    run(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "heavy = [m for m in ('litellm', 'textual', 'acp', 'mcp', 'ray', 'pyarrow') if m in sys.modules]\n"
    "sys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n')\n"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["ps"],
        ["ps", "--json"],
        ["recipes", "list"],
        ["chat", "--help"],
        ["doctor", "--offline"],
        ["demo", "--help"],
        ["trust", "--list"],
        ["benjy", "--help"],
        ["benjy", "batch", "--help"],
        ["structure", "--batch", "in.jsonl", "--help"],
        ["benjy", "status", "20260101-000000-abcdef"],
        ["recipes", "validate", "benjy-coding"],
        ["mcp", "--help"],
        ["mcp", "serve", "--help"],  # only serving imports the MCP SDK
        ["schemas", "plan", "contact", "--model", "anthropic/claude-sonnet-4-5"],
        ["schemas", "plan", "contact", "--model", "gtp-4o-mini", "--json"],
    ],
)
def test_commands_without_a_model_do_not_import_litellm_or_textual(argv):
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert "HEAVY=\n" in r.stderr, r.stderr


def test_a_local_batch_imports_neither_ray_nor_pyarrow(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"prompt": " "}\n{"text": "no prompt field"}\n')  # bad records only: no model call
    r = subprocess.run(
        [sys.executable, "-c", PROBE, "structure", "--batch", str(source), "--schema", '{"type": "object"}'],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "VANCE_MODEL": "openai/test", "VANCE_API_BASE": "http://127.0.0.1:9/v1"},
    )
    assert len(json_lines((tmp_path / "in.jsonl.out.jsonl").read_text())) == 2, r.stderr
    assert "HEAVY=" in r.stderr, r.stderr
    heavy = r.stderr.rsplit("HEAVY=", 1)[1].splitlines()[0].split(",")
    assert "ray" not in heavy and "pyarrow" not in heavy, r.stderr


def test_help_lists_the_commands():
    r = run_cli("--help")
    assert r.returncode == 0
    for cmd in ("chat", "ps", "show", "recipes"):
        assert cmd in r.stdout


def test_ps_json_has_the_documented_fields(tmp_path):
    model = write_script(tmp_path / "s.json", [{"tool_calls": [{"name": "respond", "arguments": {"message": "x"}}]}])
    assert run_cli("chat", "-p", "hello there", env={"VANCE_MODEL": model}).returncode == 0
    r = run_cli("ps", "--json")
    assert r.returncode == 0
    rows = json_lines(r.stdout)
    assert len(rows) == 1
    row = rows[0]
    for key in ("id", "engine", "recipe", "status", "parent", "updated"):
        assert key in row
    assert row["engine"] == "arthur" and row["recipe"] == "arthur" and row["status"] == "BLOCKED"
    assert row["parent"] is None and row["title"] == "hello there"
    human = run_cli("ps")
    assert row["id"] in human.stdout


def test_ps_reports_a_corrupt_file_and_keeps_it(vance_home):
    procs = vance_home / "processes"
    procs.mkdir()
    bad = procs / "20260101-000000-abcdef.json"
    bad.write_text("{ not json")
    r = run_cli("ps")
    assert r.returncode == 0
    assert "unreadable" in r.stderr and bad.name in r.stderr
    assert bad.read_text() == "{ not json"
    r = run_cli("show", "20260101-000000-abcdef")
    assert r.returncode == 1 and "unreadable" in r.stderr
    assert bad.read_text() == "{ not json"


def test_show_renders_the_transcript(tmp_path):
    model = write_script(
        tmp_path / "s.json", ["free text", {"tool_calls": [{"name": "respond", "arguments": {"message": "final"}}]}]
    )
    r = run_cli("chat", "-p", "question", "--json", env={"VANCE_MODEL": model})
    pid = json_lines(r.stdout)[0]["process_id"]
    r = run_cli("show", pid)
    assert r.returncode == 0
    assert "you: question" in r.stdout
    assert "[system note] VALIDATION CHECK" in r.stdout
    assert "arthur: final" in r.stdout
    assert json.loads(run_cli("show", pid, "--json").stdout)["id"] == pid


def test_recipes_list_show_validate(tmp_path):
    r = run_cli("recipes", "list")
    assert r.returncode == 0
    for name in ("arthur", "ford", "default"):
        assert name in r.stdout
    r = run_cli("recipes", "show", "arthur")
    assert r.returncode == 0 and "engine: arthur" in r.stdout and "respond" in r.stdout
    assert run_cli("recipes", "validate").returncode == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nengine: ford\ntools: {add: [web_serch]}\n")
    r = run_cli("recipes", "validate", str(bad))
    assert r.returncode == 1 and "web_serch" in r.stderr and "bad.yaml" in r.stderr


def test_show_pairs_each_reply_with_its_own_call_when_ids_repeat(tmp_path):
    def script(name, msg):
        return write_script(tmp_path / name, [{"tool_calls": [{"name": "respond", "arguments": {"message": msg}}]}])

    r = run_cli("chat", "-p", "q1", "--json", env={"VANCE_MODEL": script("a.json", "ANSWER ONE")})
    pid = json_lines(r.stdout)[0]["process_id"]
    assert run_cli("chat", "-p", "q2", "--continue", "--model", script("b.json", "ANSWER TWO")).returncode == 0
    out = run_cli("show", pid).stdout
    assert (
        out.index("you: q1") < out.index("arthur: ANSWER ONE") < out.index("you: q2") < out.index("arthur: ANSWER TWO")
    )


def test_a_bad_model_string_leaves_no_process_behind():
    r = run_cli("chat", "-p", "hi", "--model", "scripted:/nonexistent/script.json")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert json_lines(run_cli("ps", "--json").stdout) == []


def test_version_prints_the_package_version():
    from vance_cli import __version__

    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout == f"vance {__version__}\n"


def test_shell_completion_script_is_available():
    # Typer finds "the current shell" among the parent processes, which a background run of the
    # suite does not have ("Shell  not supported."); its switch for tests makes --show-completion
    # take the shell by name instead.
    r = run_cli(
        "--show-completion", "bash", env={"SHELL": "/bin/bash", "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    )
    assert r.returncode == 0, r.stderr
    assert "_VANCE_COMPLETE" in r.stdout and "complete" in r.stdout


def test_shell_completion_completes_commands_and_options():
    env = {"_VANCE_COMPLETE": "complete_bash", "COMP_WORDS": "vance do", "COMP_CWORD": "1"}
    r = run_cli(env=env)
    assert "doctor" in r.stdout.split(), r.stdout + r.stderr
    env = {"_VANCE_COMPLETE": "complete_bash", "COMP_WORDS": "vance doctor --of", "COMP_CWORD": "2"}
    r = run_cli(env=env)
    assert "--offline" in r.stdout.split(), r.stdout + r.stderr


def test_the_command_table_names_every_registered_command():
    """A new command module must be listed in COMMANDS, or a run naming it would not find it."""
    import importlib

    import typer

    from vance_cli.cli.main import COMMANDS

    names = set()
    for module in set(COMMANDS.values()):
        app = typer.Typer()
        importlib.import_module(f"vance_cli.cli.{module}").register(app)
        names |= {c.name or c.callback.__name__ for c in app.registered_commands}
        names |= {g.name for g in app.registered_groups}
    assert names == set(COMMANDS)
    from pathlib import Path

    import vance_cli.cli as pkg

    modules = {p.stem for p in Path(pkg.__file__).parent.glob("*.py")}
    with_register = {m for m in modules if "def register(" in (Path(pkg.__file__).parent / f"{m}.py").read_text()}
    assert with_register == set(COMMANDS.values())


def test_a_run_registers_only_the_command_it_names():
    probe = (
        "import sys\nfrom vance_cli.cli import main\n"
        "try:\n    main.run(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(sorted(main._registered))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", probe, "ps", "--json"], capture_output=True, text=True, env=env)
    assert r.stdout.strip().splitlines()[-1] == "['procs']", r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-c", probe, "--help"], capture_output=True, text=True, env=env)
    from vance_cli.cli.main import COMMANDS

    assert r.stdout.strip().splitlines()[-1] == str(sorted(set(COMMANDS.values())))


def test_a_one_shot_turn_with_a_real_model_string_loads_no_demo_module(fake_openai):
    # Found by review of issue 14: the commands' model factory imported the demo's brain to read its
    # prefix, so every `vance chat -p` paid for the demo's texts and scripted answers.
    probe = ("import atexit, sys, runpy; sys.argv = ['vance', 'chat', '-p', 'hi', '-q']\n"  # atexit: the script ends with os._exit after it
             "atexit.register(lambda: print('DEMO=' + ','.join(m for m in sys.modules if m.startswith('vance_cli.demo')), file=sys.stderr))\n"
             "runpy.run_module('vance_cli', run_name='__main__')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url}
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout == "echo: hi\n", r.stderr
    assert r.stderr.strip().endswith("DEMO="), r.stderr


def test_recipes_list_hides_the_internal_recipes_and_aligns_its_columns(vance_home):
    # issue 16: the list mixed Benjy's stage recipes with the ones a person picks, in misaligned columns
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "a-rather-long-recipe-name.yaml").write_text(
        "name: a-rather-long-recipe-name\ndescription: Mine.\nengine: ford\n", encoding="utf-8")
    r = run_cli("recipes", "list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    names = [line.split()[0] for line in lines[1:]]
    assert lines[0].split() == ["NAME", "ORIGIN", "DESCRIPTION"]
    assert {"arthur", "benjy-coding", "benjy-research", "benjy-batch", "coding", "a-rather-long-recipe-name"} <= set(names)
    for internal in ("benjy-interpret", "benjy-route", "benjy-evaluate", "benjy-reflect", "benjy-do-coding", "benjy-do-research"):
        assert internal not in names
    assert "6 internal recipes" in r.stderr and "--all" in r.stderr
    # every column starts at the same place on every line, however long a name is
    for column in ("ORIGIN", "DESCRIPTION"):
        start = lines[0].index(column)
        for line in lines[1:]:
            assert line[start - 1] == " " and line[start] != " ", (column, line)
    assert any("a-rather-long-recipe-name user" in line.replace("  ", " ") for line in lines)
    assert "Chat hub (default for `vance chat`)" in r.stdout  # the description, whole in a pipe
    everything = run_cli("recipes", "list", "--all").stdout
    assert "benjy-interpret" in everything and "benjy-do-coding" in everything
    rows = json_lines(run_cli("recipes", "list", "--json").stdout)
    assert {row["name"]: row["internal"] for row in rows}["benjy-route"] is True
    assert {row["name"]: row["internal"] for row in rows}["arthur"] is False


def test_top_level_help_shows_whole_descriptions_and_examples():
    # issue 16: `vance --help` cut every description with "..." and showed no example
    r = run_cli("--help", env={"COLUMNS": "80"})
    assert r.returncode == 0
    commands = r.stdout[r.stdout.index("Commands:"):r.stdout.index("Examples:")]
    assert "..." not in commands and "…" not in commands
    flat = " ".join(commands.split())
    assert "Trust a project's .vance/ settings (api_base, api_key, transport, [models], [exec], recipes)." in flat
    assert "Check Python, the model and its key, the endpoint, scopes, state and bundled files." in flat
    assert all(len(line) <= 80 for line in r.stdout.splitlines())
    assert 'vance chat -p "explain app.py"' in r.stdout and "vance chat --resume" in r.stdout
    assert "Exit codes: 0 ok, 1 error, 2 usage" in r.stdout
