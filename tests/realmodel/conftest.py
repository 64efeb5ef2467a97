"""The `realmodel` marker: tests against a real model server, skipped (and saying why) without one.

Start a server with `bench/realmodel/serve.sh MODEL PORT` and set
VANCE_REALMODEL_URL=http://127.0.0.1:PORT/v1 (VANCE_REALMODEL_MODEL picks the model when the
server has several; default: the first of /v1/models). Without it, or when nothing answers there,
every test marked `realmodel` is skipped with the reason, so `.ci/run` passes on any machine.
These tests are not claims until run: bench/README.md records each run with model, server, date.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class RealModel:
    api_base: str  # http://127.0.0.1:PORT/v1
    model: str  # the served id; Vance's model string is openai/<model>

    @property
    def vance_model(self) -> str:
        return f"openai/{self.model}"


_found: dict[str, RealModel | str] = {}


def _probe(url: str) -> RealModel | str:
    """The server at ``url``, or why it cannot be used (the skip reason)."""
    base = url.rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    try:
        with urllib.request.urlopen(f"{base}/models", timeout=10) as r:
            ids = [m["id"] for m in json.loads(r.read()).get("data", [])]
    except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError) as exc:
        return f"VANCE_REALMODEL_URL={url} does not answer /models ({exc}); start it with bench/realmodel/serve.sh"
    wanted = os.environ.get("VANCE_REALMODEL_MODEL")
    if wanted and wanted not in ids:
        return f"{base} serves {ids}, not VANCE_REALMODEL_MODEL={wanted}"
    if not ids:
        return f"{base}/models lists no model"
    return RealModel(api_base=base, model=wanted or ids[0])


@pytest.fixture
def realmodel(request) -> RealModel:
    """The running server named by VANCE_REALMODEL_URL; skips the test when there is none."""
    url = os.environ.get("VANCE_REALMODEL_URL", "").strip()
    if not url:
        pytest.skip(
            "realmodel: VANCE_REALMODEL_URL is not set (start a server with "
            "bench/realmodel/serve.sh MODEL PORT and set VANCE_REALMODEL_URL=http://127.0.0.1:PORT/v1)"
        )
    if url not in _found:  # probe once per session, not once per test
        _found[url] = _probe(url)
    found = _found[url]
    if isinstance(found, str):
        pytest.skip(f"realmodel: {found}")
    return found


@pytest.fixture(autouse=True)
def _realmodel_gate(request):
    # A test marked `realmodel` is skipped without a server even when it forgot to ask for the
    # fixture, so none can fall through to some other model by accident.
    if request.node.get_closest_marker("realmodel"):
        request.getfixturevalue("realmodel")
