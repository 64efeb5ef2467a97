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


PLUGINS_PROBE = """
import sys
from vance_cli.llm.lean_imports import skip_pydantic_plugins
skip_pydantic_plugins()
from pydantic import BaseModel, ValidationError

class A(BaseModel):
    x: int

assert A(x="3").x == 3
try:
    A(x="no")
except ValidationError:
    pass
else:
    raise AssertionError("not validated")
print('importlib.metadata' in sys.modules)
"""


def test_models_validate_without_the_plugin_search_and_its_import():
    r = subprocess.run([sys.executable, "-c", PLUGINS_PROBE], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"  # the plugin search's import (and its scan) did not happen


def test_pydantic_still_finds_plugins_through_the_function_the_stand_in_replaces():
    # If a pydantic release moved plugin discovery elsewhere, the stand-in would silently do nothing
    # (or break model building): this pins the name it replaces.
    import inspect

    from pydantic.plugin import _loader, _schema_validator

    assert callable(_loader.get_plugins)
    assert "from ._loader import get_plugins" in inspect.getsource(_schema_validator.create_schema_validator)


def test_the_cli_entry_point_skips_the_plugin_search(fake_openai):
    probe = ("import atexit, sys, runpy; sys.argv = ['vance', 'chat', '-p', 'hi', '-q']\n"  # atexit: the script ends with os._exit after it
             "atexit.register(lambda: print('importlib.metadata' in sys.modules, file=sys.stderr))\n"
             "runpy.run_module('vance_cli', run_name='__main__')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url}
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "echo: hi\n" and r.stderr.strip().endswith("False")
