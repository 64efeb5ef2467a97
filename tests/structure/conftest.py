"""Helpers for the structure tests: ScriptedModels that answer JSON and record every request."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vance_cli.llm.base import Capabilities, ChatRequest, Completion
from vance_cli.llm.scripted import ScriptedModel

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "cost": 0.001}

OPENAI = Capabilities(family="openai", json_schema=True, strict_json_schema=True, json_object=True)
ANTHROPIC = Capabilities(family="anthropic", json_schema=True, strict_json_schema=False, json_object=False)
GEMINI = Capabilities(family="gemini", json_schema=True, strict_json_schema=False, json_object=True)
OTHER = Capabilities(family="other", json_schema=True, strict_json_schema=False, json_object=False)


def _raiser(exc: BaseException):
    def fn(request: ChatRequest) -> Any:
        raise exc

    return fn


def as_reply(reply: Any) -> Any:
    """Test shorthand → a ScriptedModel reply: str → text, dict/list → its JSON text, Exception → raised."""
    if isinstance(reply, BaseException):
        return _raiser(reply)
    if isinstance(reply, Completion):
        return reply
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return {"text": text, "usage": USAGE}


@pytest.fixture
def scripted():
    """``scripted(*replies, caps=OPENAI)`` → a ScriptedModel that answers in order and records requests."""

    def make(*replies: Any, caps: Capabilities = OPENAI, name: str = "scripted:test") -> ScriptedModel:
        return ScriptedModel([as_reply(r) for r in replies], name=name, capabilities=caps)

    return make
