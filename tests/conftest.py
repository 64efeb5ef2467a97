"""Suite-wide fixtures: a private VANCE_HOME, no real provider calls, a clean environment."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests explore with a fixed seed in the suite, so CI is reproducible: a failure is a real
# counterexample that fails the same way on every machine. HYPOTHESIS_PROFILE=explore searches anew.
hypothesis_settings.register_profile("suite", derandomize=True, database=None)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

# A shell starts a background job (`pytest ... > log &`) with SIGINT ignored, and every child inherits
# that: the tests that press Ctrl+C on a vance subprocess would wait for an exit that never comes.
# Handled here as in a terminal, the children start with SIGINT at its default, as a user's vance does.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Set before anything imports vance_cli: subprocesses inherit it, so no test reaches a real provider.
os.environ["VANCE_ALLOW_MODEL_REQUESTS"] = "0"
# Tests that import litellm themselves (the provider-schema checks read what litellm would send):
# without this litellm fetches its price list from the internet on import (vance sets it too).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_VANCE_ENV = ("VANCE_MODEL", "VANCE_API_BASE", "VANCE_API_KEY", "VANCE_TRANSPORT", "VANCE_DEBUG", "VANCE_SANDBOX")
_PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture(autouse=True)
def vance_home(tmp_path, monkeypatch):
    """Every test gets its own user scope and starts in an empty folder with no project scope."""
    home = tmp_path / "vance-home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("VANCE_HOME", str(home))
    monkeypatch.setenv("VANCE_ALLOW_MODEL_REQUESTS", "0")
    monkeypatch.setenv("NO_COLOR", "1")
    for name in _VANCE_ENV + _PROVIDER_KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(work)
    return home


@pytest.fixture(autouse=True)
def _fresh_format_steps():
    """Formats a provider rejected are remembered per process (llm/output/json_call.py): not across tests."""
    yield
    module = sys.modules.get("vance_cli.llm.output.json_call")
    if module is not None:
        module.forget_formats()


from tests.fakeserver import fake_openai  # noqa: F401  (fixture)
from tests.rayinstance import ray_instance  # noqa: F401,E402  (fixture)


def pytest_collection_modifyitems(items):
    """The tests on the one Ray instance run last, together, on one worker (``--dist loadgroup``):
    started once, never idling meanwhile, never two instances at a time."""
    for item in items:
        if "ray_instance" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("ray"))
    items.sort(key=lambda item: "ray_instance" in getattr(item, "fixturenames", ()))


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per core, at most 4 (the tests start subprocesses of their own)."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
