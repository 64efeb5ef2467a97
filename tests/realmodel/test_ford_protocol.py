"""Ford's protocol nets on a real small model (issue 18): beside tests/engines/test_ford_protocol.py
and test_ford_schema.py, whose scripted replies are the shapes seen on first contact.

Marked `realmodel`: skipped unless VANCE_REALMODEL_URL names a running server (see conftest.py).
Each asserts what holds whatever the model's quality: no echo of a correction and no tool call
written out is ever the person's message; a call written as text naming an offered tool is never
left unrecovered; by schema on llama-server (a grammar) every reply is a call, so no "no tool
call" correction is ever spent.
"""

from __future__ import annotations

import pytest

from tests.replay.conftest import chat
from vance_cli.engines.ford_text import recover_calls, unusable
from vance_cli.llm.openai_compat import OpenAICompatModel
from vance_cli.llm.profile import build_profile
from vance_cli.store.process import Status

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(1800)]

SYSTEM = "You are Arthur, a helpful assistant in a terminal. Use the tools; answer with `respond`."
NOTES = "The meeting with Dana is on Thursday at 15:00 in room B12.\n"
TOOLS = ("respond", "file_read", "file_list")


def real_model(realmodel, **capabilities) -> OpenAICompatModel:
    profile = build_profile(
        realmodel.vance_model,
        api_base=realmodel.api_base,
        api_key="none",
        timeout=300.0,
        retries={"attempts": 1, "max_total": 600.0},
        capability_overrides=capabilities or None,
    )
    return OpenAICompatModel(profile, announce=None)


def assert_honest_end(run) -> None:
    assert run.process.status == Status.BLOCKED
    [message] = run.messages
    corrections = [m.content or "" for m in run.process.history if m.meta.get("kind") == "correction"]
    if not message.startswith("The model did not follow the tool protocol"):
        assert unusable(message, corrections, TOOLS) is None, message
    for m in run.process.history:
        if m.role == "assistant" and m.meta.get("kind") == "no_tool_call":
            assert recover_calls(m.content or "", TOOLS) is None, f"left unrecovered: {m.content!r}"


async def test_native_greeting_never_delivers_an_echo_or_a_written_call(realmodel, tmp_path):
    run = await chat(tmp_path, real_model(realmodel, tool_mode="native"), "Hello! Who are you, in one sentence?", systemPrompt=SYSTEM)
    assert_honest_end(run)


async def test_native_file_question_recovers_what_it_writes_as_text(realmodel, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text(NOTES)
    run = await chat(tmp_path, real_model(realmodel, tool_mode="native"), "When is the meeting with Dana? Read notes.md.", systemPrompt=SYSTEM)
    assert_honest_end(run)
    for m in run.process.history:
        if m.meta.get("recovered_from"):
            assert m.tool_calls and all(c.name in TOOLS for c in m.tool_calls)


async def test_schema_mode_on_llama_server_spends_no_no_tool_call_correction(realmodel, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text(NOTES)
    model = real_model(realmodel, tool_mode="schema")
    run = await chat(tmp_path, model, "When is the meeting with Dana? Read notes.md.", systemPrompt=SYSTEM)
    assert_honest_end(run)
    if model.capabilities.family != "llama-server":
        pytest.skip(f"constrained decoding is llama-server's; this server is {model.capabilities.family}")
    rules = [m.meta.get("rule") for m in run.process.history if m.meta.get("kind") == "correction"]
    assert "no tool call" not in rules, rules
    assert run.process.history[-1].role == "tool" and run.process.history[-1].meta.get("delivered")
