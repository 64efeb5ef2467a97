"""Start-up does not grow with the ACP extra: `vance --help`, `vance chat -p` and `vance acp --help`
never import the SDK (only serving ACP does); without the SDK `vance acp` says how to install it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import REPO, run_cli

PROBE = (
    "import sys\n"
    "from vance_cli.cli.main import run\n"
    "try:\n    run(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "sys.stderr.write('ACP=%s\\n' % sorted(m for m in sys.modules if m == 'acp' or m.startswith('acp.')))\n"
)


def _probe(*argv: str, env: dict | None = None) -> str:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        timeout=60,
    )
    return r.stderr


@pytest.mark.parametrize("argv", [["--help"], ["acp", "--help"], ["chat", "--help"]])
def test_commands_that_do_not_serve_acp_do_not_import_it(argv):
    assert "ACP=[]\n" in _probe(*argv)


def test_chat_p_does_not_import_acp(fake_openai):
    out = _probe("chat", "-p", "hi", env={"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url})
    assert fake_openai.requests, out  # the turn really ran (a model call was made)
    assert "ACP=[]\n" in out, out


def test_without_the_sdk_vance_acp_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "acp", None)  # None in sys.modules makes `import acp` fail
    r = run_cli("acp")
    assert r.returncode == 1, r.stderr
    assert "Agent Client Protocol SDK" in r.stderr and "vance-cli[acp]" in r.stderr
    assert "Traceback" not in r.stderr
