"""The suite's own CLI runners: ``run_cli`` gives what a ``vance`` subprocess gives and leaves nothing
behind; ``Preloaded`` children are fresh processes; the list of modules that read the environment
when imported is complete."""

from __future__ import annotations

import ast
import gc
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from tests.helpers import ENV_AT_IMPORT, REPO, Preloaded, respond, run_cli, vance, write_script

PROCESS_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")


def _same(a, b) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def _without_ids(text: str) -> str:
    return PROCESS_ID.sub("<id>", text)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["chat", "--no-such-flag"],  # a usage error: typer's message, exit 2
        ["nosuch"],  # an unknown command, with every command registered for the message
        ["ps", "--json"],
        ["recipes", "show", "arthur"],
        ["benjy", "watch", "20260101-000000-abcdef"],  # needs a terminal: stdin and stdout are not
        ["chat", "-p", "hi"],  # no model configured: the error and its fix, no traceback
        ["trust", "--list", "somewhere"],
    ],
)
def test_run_cli_gives_what_the_subprocess_gives(argv):
    _same(run_cli(*argv), vance(*argv))


def test_a_turn_prints_the_same_in_process_and_in_a_subprocess(tmp_path):
    runs = []
    for run in (run_cli, vance):
        model = write_script(tmp_path / "s.json", ["free text first", respond("Hello, person!")])
        r = run("chat", "-p", "hello", env={"VANCE_MODEL": model})
        runs.append((r.returncode, r.stdout, _without_ids(r.stderr)))
    assert runs[0] == runs[1]
    assert runs[0][1] == "Hello, person!\n" and "correction 1/2" in runs[0][2]


def test_stdin_bytes_and_text_reach_the_command_as_in_a_subprocess(tmp_path):
    model = write_script(tmp_path / "s.json", [respond("one"), respond("two")])
    for data in (b"first\nsecond\n", b"caf\xe9\nsecond\n"):
        a = run_cli("chat", "--plain", env={"VANCE_MODEL": model}, input=data, text=False)
        b = vance("chat", "--plain", env={"VANCE_MODEL": model}, input=data, text=False)
        assert (a.returncode, a.stdout) == (b.returncode, b.stdout)
        assert _without_ids(a.stderr.decode()) == _without_ids(b.stderr.decode())


def test_vance_debug_shows_the_traceback_in_both():
    a = run_cli("chat", "-p", "hi", env={"VANCE_DEBUG": "1"})
    b = vance("chat", "-p", "hi", env={"VANCE_DEBUG": "1"})
    assert a.returncode == b.returncode == 1
    for r in (a, b):
        assert "Traceback (most recent call last)" in r.stderr and "no model configured" in r.stderr
    assert a.stderr.splitlines()[-3:] == b.stderr.splitlines()[-3:]


def test_a_run_leaves_the_test_process_as_it_found_it(tmp_path):
    from vance_cli.cli import main

    before = (dict(os.environ), os.getcwd(), sys.argv, sys.stdin, sys.stdout, sys.stderr)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    model = write_script(tmp_path / "s.json", [respond("hi")])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run_cli("chat", "-p", "hello", env={"VANCE_MODEL": model, "SOMETHING_NEW": "1"}, cwd=elsewhere)
    assert r.returncode == 0 and r.stdout == "hi\n"
    assert (dict(os.environ), os.getcwd(), sys.argv, sys.stdin, sys.stdout, sys.stderr) == before
    assert {s: signal.getsignal(s) for s in handlers} == handlers
    assert gc.isenabled()  # entry.py paused it; its timer is cancelled and the collector back on
    assert main._registered == set() and main.app.registered_commands == []  # as a fresh process


def test_the_next_run_registers_only_its_own_command():
    from vance_cli.cli import main

    seen = {}
    original = main.register_commands

    def spy(argv=None):
        original(argv)
        seen["registered"] = set(main._registered)

    run_cli("--help")
    main.register_commands = spy
    try:
        assert run_cli("ps").returncode == 0
    finally:
        main.register_commands = original
    assert seen["registered"] == {"procs"}


def test_run_cli_refuses_a_crash_point():
    with pytest.raises(ValueError, match="subprocess"):
        run_cli("ps", env={"VANCE_TEST_CRASH_AT": "save.benjy:1"})


def test_preloaded_children_exit_and_print_like_python_m_vance_cli(tmp_path):
    with Preloaded() as preloaded:
        for argv in (["--version"], ["chat", "--no-such-flag"], ["chat", "-p", "hi"]):
            _same(preloaded.run(*argv), vance(*argv))
        # the environment is the child's own, read afresh by modules that read it when imported
        r = preloaded.run("ps", env={"VANCE_HOME": str(tmp_path / "other-home")}, cwd=tmp_path)
        assert r.returncode == 0


def _reads_env_at_import(tree: ast.Module) -> bool:
    """A statement run at import (not inside a function) that reads os.environ or os.getenv."""

    def walk(node: ast.AST) -> bool:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):  # only its defaults run
            decorators = getattr(node, "decorator_list", [])
            return any(walk(d) for d in [*decorators, *node.args.defaults, *node.args.kw_defaults] if d is not None)
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
            return True
        return any(walk(child) for child in ast.iter_child_nodes(node))

    return walk(tree)


def test_every_module_that_reads_the_environment_when_imported_is_listed():
    """Preloaded children reload these after their environment is set (tests/helpers.py)."""
    package = REPO / "vance_cli"
    found = set()
    for path in package.rglob("*.py"):
        if _reads_env_at_import(ast.parse(path.read_text(encoding="utf-8"))):
            parts = path.relative_to(REPO).with_suffix("").parts
            found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    existing = {name for name in ENV_AT_IMPORT if Path(REPO, *name.split(".")).with_suffix(".py").is_file()}
    assert found == existing
