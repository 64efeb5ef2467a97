"""The direct transport imports httpx without its CLI and without the HTTP/2 stack."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.cli.helpers import REPO

PROBE = """
import sys
from vance_cli.llm.lean_imports import import_httpx
httpx = import_httpx()
httpx.AsyncClient()  # makes the transport, which is where httpcore is imported
print(sorted(m for m in ('h2', 'hpack', 'click', 'pygments', 'httpx._main') if m in sys.modules))
import h2  # still importable afterwards for anyone who wants it
print(httpx.AsyncClient is not None, 'h2' in sys.modules)
"""


def test_httpx_is_imported_without_cli_and_http2_and_h2_stays_importable():
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    skipped, state = r.stdout.splitlines()
    assert skipped == "[]"
    assert state == "True True"


def test_the_direct_model_works_after_the_lean_import(fake_openai):
    from tests.cli.helpers import vance

    r = vance("chat", "-p", "hi", env={"VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "echo: hi\n"
