"""Helpers for the app's tests: a runtime over a chosen model, an app around it, a fixed size."""

from __future__ import annotations

import pytest

from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.runtime.runner import Runtime
from vance_cli.tui.app import VanceApp
from vance_cli.tui.controller import ChatController
from vance_cli.tui.history import InputHistory

SIZE = (100, 30)


def respond(message: str, awaiting: bool = True) -> dict:
    return {"tool_calls": [{"name": "respond", "arguments": {"message": message, "awaiting_user_input": awaiting}}]}


def make_app(model=None, *, model_name: str = "scripted:test", pid: str | None = None, env=None,
             history: InputHistory | None = None, recipe: str = "arthur") -> VanceApp:
    """A chat app over a fresh process; ``model`` is the ChatModel every model string resolves to
    (None: the real factory, e.g. an openai/ model string with VANCE_API_BASE set)."""
    scopes = Scopes.discover()
    settings = Settings.load(scopes)
    factory = (lambda name, s: model) if model is not None else None
    runtime = Runtime(scopes, settings, model_factory=factory, stream=True)
    if pid is None:
        pid = runtime.new_process(recipe, model=model_name).id
    controller = ChatController(runtime, pid)
    controller.open()
    return VanceApp(controller=controller, history=history or InputHistory(None), preload=False)


async def type_text(pilot, text: str) -> None:
    await pilot.press(*[("space" if ch == " " else ch) for ch in text])


async def wait_for(pilot, predicate, timeout: float = 20.0, describe=None) -> None:
    """Until ``predicate()`` holds; the deadline only bounds a failure (a loaded machine is slow)."""
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time" + (f": {describe()}" if describe else ""))
        await pilot.pause(0.02)


@pytest.fixture(autouse=True)
def _release_locks():
    apps: list = []
    yield apps
    for app in apps:
        if app.controller is not None:
            app.controller.close()
