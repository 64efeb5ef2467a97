"""Issue 18: Ford on models that do not follow the tool protocol (the shapes first contact found).

- a reply that echoes the correction prompt is never delivered as the person's message; after the
  correction budget the best plain-text reply of the turn is, and the journal, the message's meta
  and the status reason say the model did not follow the protocol;
- a tool call written in the text (Qwen's ``<tool_call>``, ``<tools>``, a fenced or bare JSON
  object) is recovered, only for offered tools, and runs exactly as a native call.

The reply texts are the shapes quoted in issue 18 (Qwen2.5-Coder 0.5B/1.5B behind llama.cpp).
"""

from __future__ import annotations

import json

import pytest

from tests.engines.harness import call, recipe, respond, run_engine
from vance_cli.engines.ford import NO_TOOL_CALL_CORRECTION, PROTOCOL_FALLBACK, RECOVERED
from vance_cli.engines.ford_text import recover_calls, unusable
from vance_cli.events import JournalEvent
from vance_cli.store.process import Status
from vance_cli.store.transcript import entries

GREETING = "Hello! I'm Arthur, your assistant in this terminal. How can I help you today?"
# The model's echo of the correction (issue 18: "delivered as the answer twice").
ECHO = (
    "VALIDATION CHECK: your previous response had no tool call. Every turn must end with a tool call: "
    "emit the action tool now, or respond now by calling `respond` with your user-facing message."
)
ECHO_PARAPHRASED = "Every turn must end with a tool call: emit the action tool now, or respond now with your message."
NOT_OFFERED = '{"name": "process_spawn", "arguments": {"command": "python -m pytest check_fizzbuzz.py"}}'
EMIT = '```json\n{"name": "emit the action", "arguments": {"message": "Task done!"}}\n```'


def journal(run, level: str | None = None) -> list[str]:
    return [e.text for e in run.events if isinstance(e, JournalEvent) and (level is None or e.level == level)]


# --- 1. never an echo; the best candidate, said plainly --------------------------------------


def test_the_echo_is_never_delivered_the_first_real_reply_is(tmp_path):
    run = run_engine(tmp_path, [GREETING, ECHO, "respond"], recipe_snapshot=recipe(maxValidationCorrections=2))
    assert run.messages == [GREETING]
    assert run.process.status == Status.BLOCKED
    assert "did not follow the tool protocol" in run.process.status_reason
    delivered = run.process.history[1]
    assert delivered.content == GREETING and delivered.meta["delivered"] is True
    assert delivered.meta["kind"] == PROTOCOL_FALLBACK
    assert "did not follow the tool protocol" in delivered.meta["note"]
    warnings = journal(run, "warning")
    assert any("did not follow the tool protocol" in w and "reply 1 of 3" in w for w in warnings), warnings
    assert any("reply 2: an echo of the correction prompt" in w and "reply 3: only a tool name" in w for w in warnings)
    # the process file says so too
    again = run.reloaded()
    assert again.history[1].meta["kind"] == PROTOCOL_FALLBACK and "did not follow" in again.status_reason
    assert [e.kind for e in entries(again)].count("message") == 1


def test_the_echo_as_last_reply_is_skipped_even_when_it_came_last(tmp_path):
    # before issue 18 the last reply (here the echo) was delivered as the answer
    run = run_engine(tmp_path, [GREETING, "respond", ECHO], recipe_snapshot=recipe(maxValidationCorrections=2))
    assert run.messages == [GREETING]
    assert all("VALIDATION CHECK" not in m for m in run.messages)


def test_a_paraphrased_echo_and_tool_calls_as_text_are_not_answers(tmp_path):
    run = run_engine(tmp_path, [ECHO_PARAPHRASED, NOT_OFFERED, EMIT], recipe_snapshot=recipe(maxValidationCorrections=2))
    [message] = run.messages
    assert message.startswith("The model did not follow the tool protocol")
    assert "VALIDATION CHECK" not in message and "process_spawn" not in message and '"name"' not in message
    assert "reply 1: an echo of the correction prompt" in message
    assert "reply 2: a tool call written as text" in message and "reply 3: a tool call written as text" in message
    assert run.process.status == Status.BLOCKED
    assert run.process.history[-1].meta["kind"] == "diagnosis"
    assert not any(m.meta.get("delivered") for m in run.process.history[:-1])


def test_a_reply_given_with_the_turns_tool_results_beats_an_earlier_one(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text("The meeting with Dana is on Thursday at 15:00 in room B12.\n")
    replies = [
        "I'll look at notes.md.",
        {"tool_calls": [call("file_read", {"path": "notes.md"})]},
        "The meeting with Dana is on Thursday at 15:00 in room B12.",
        "respond",
    ]
    run = run_engine(tmp_path, replies, recipe_snapshot=recipe(maxValidationCorrections=2))
    assert run.messages == ["The meeting with Dana is on Thursday at 15:00 in room B12."]


def test_validation_off_and_the_legacy_path_still_deliver_the_text_as_it_is(tmp_path):
    run = run_engine(tmp_path, [ECHO], recipe_snapshot=recipe(validation=False))
    assert run.messages == [ECHO]  # nothing was corrected, so nothing was echoed: the text is the reply
    assert not journal(run, "warning")


# --- 2. tool calls written as text are recovered ----------------------------------------------


def test_qwen_tool_call_blocks_run_as_native_calls_without_a_correction(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text("The meeting with Dana is on Thursday at 15:00 in room B12.\n")
    replies = [
        '<tool_call>\n{"name": "file_read", "arguments": {"path": "notes.md"}}\n</tool_call>',
        '<tool_call>\n{"name": "respond", "arguments": {"message": "Thursday at 15:00 in room B12."}}\n</tool_call>',
    ]
    run = run_engine(tmp_path, replies)
    assert run.messages == ["Thursday at 15:00 in room B12."]
    assert len(run.model.requests) == 2
    t = run.transcript()
    assert [e[0] for e in t] == ["user", "assistant", "tool", "assistant", "tool"]
    assert t[1] == ("assistant", ["file_read"]) and "room B12" in t[2][2]
    assert t[4] == ("tool", "respond", "delivered")
    assert not any(m.meta.get("kind") == "correction" for m in run.process.history)
    first = run.process.history[1]
    assert first.meta[RECOVERED].startswith("<tool_call>") and first.content is None
    assert json.loads(first.tool_calls[0].arguments) == {"path": "notes.md"}
    notes = journal(run)
    assert sum("recovered from the model's text (a <tool_call> block)" in n for n in notes) == 2, notes
    # on the wire the next request carries the recovered call as a real call, its result beside it
    wire = run.model.requests[1].messages
    assert wire[-2].tool_calls[0].name == "file_read" and wire[-1].role == "tool"


@pytest.mark.parametrize(
    "text,where",
    [
        ('```json\n{"name": "respond", "arguments": {"message": "Hello! I am Arthur."}}\n```', "a fenced JSON block"),
        ('<tools>{"name": "respond", "arguments": {"message": "Hello! I am Arthur."}}</tools>', "a <tools> block"),
        ('{"name": "respond", "parameters": {"message": "Hello! I am Arthur."}}', "a bare JSON object"),
        ('{"name": "respond", "arguments": "{\\"message\\": \\"Hello! I am Arthur.\\"}"}', "a bare JSON object"),
        ('Sure.\n<tool_call>\n{"name": "respond", "arguments": {"message": "Hello! I am Arthur."}}', "a <tool_call> block"),
    ],
    ids=["fenced", "tools-tag", "bare-parameters", "arguments-as-string", "unclosed-tag"],
)
def test_each_written_shape_is_recovered(tmp_path, text, where):
    run = run_engine(tmp_path, [text])
    assert run.messages == ["Hello! I am Arthur."]
    assert len(run.model.requests) == 1 and run.process.status == Status.BLOCKED
    assert any(f"recovered from the model's text ({where}): respond" in n for n in journal(run))


def test_a_name_that_is_not_offered_is_not_recovered(tmp_path):
    run = run_engine(tmp_path, [NOT_OFFERED, respond("ok")])
    assert run.messages == ["ok"]
    assert run.transcript()[1] == ("assistant", NOT_OFFERED)
    assert run.transcript()[2] == ("system", NO_TOOL_CALL_CORRECTION)
    assert not any("recovered" in n for n in journal(run))


def test_recovered_arguments_are_validated_like_a_native_call(tmp_path):
    run = run_engine(tmp_path, ['{"name": "file_read", "arguments": {"file": "notes.md"}}', respond("ok")])
    assert run.messages == ["ok"]
    result = run.transcript()[2]
    assert result[0:2] == ("tool", "file_read") and result[2].startswith("ERROR")
    assert any("correction 1/2: malformed tool call" in n for n in journal(run))


def test_recovered_respond_beside_another_call_follows_the_respond_rules(tmp_path):
    text = (
        '<tool_call>{"name": "file_list", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "respond", "arguments": {"message": "too early"}}</tool_call>'
    )
    run = run_engine(tmp_path, [text, respond("done")])
    assert run.messages == ["done"]
    t = run.transcript()
    assert t[1] == ("assistant", ["file_list", "respond"])
    assert t[3][1] == "respond" and "LAST and ONLY" in t[3][2]


def test_a_recovered_side_effect_is_recorded_as_started_before_it_runs(tmp_path):
    from vance_cli.engines.ford import STARTED

    run = run_engine(
        tmp_path,
        ['{"name": "file_write", "arguments": {"path": "a.txt", "content": "alpha"}}', respond("written")],
        recipe_snapshot=recipe(tools={"allowed": ["respond", "file_write"]}),
    )
    written = run.process.history[1]
    assert [c.name for c in written.tool_calls] == ["file_write"]
    assert written.meta[STARTED] == [written.tool_calls[0].id]  # the at-most-once record, as for a native call
    assert run.process.history[2].role == "tool" and run.messages == ["written"]


# --- the pieces -------------------------------------------------------------------------------


def test_recover_calls_keeps_the_prose_and_ignores_objects_that_are_not_calls():
    found = recover_calls('Let me read it.\n```json\n{"name": "file_read", "arguments": {"path": "a"}}\n```', {"file_read"})
    assert found is not None and found.prose == "Let me read it." and [c.name for c in found.calls] == ["file_read"]
    assert recover_calls('{"name": "Ann", "age": 34}', {"file_read"}) is None
    assert recover_calls('{"name": "file_read", "arguments": {}}', set()) is None
    assert recover_calls('{"type": "function", "function": {"name": "file_read", "arguments": "{}"}}', {"file_read"}) is not None


def test_unusable_names_why():
    corrections = [NO_TOOL_CALL_CORRECTION]
    assert unusable(ECHO, corrections, ["respond"]) == "an echo of the correction prompt"
    assert unusable(ECHO_PARAPHRASED, corrections, ["respond"]) == "an echo of the correction prompt"
    assert unusable("`respond`", corrections, ["respond"]) == "only a tool name"
    assert unusable(NOT_OFFERED, corrections, ["respond"]) == "a tool call written as text"
    assert unusable(GREETING, corrections, ["respond"]) is None
    assert unusable("Use the respond tool to answer: it takes a message.", corrections, ["respond"]) is None
    assert unusable('Here is JSON: {"name": "Ann", "age": 34}', corrections, ["respond"]) is None
    assert unusable('{"name": "Ann"}', corrections, ["respond"]) is None
    assert unusable('{"name": "respond"}', corrections, ["respond"]) == "a tool call written as text"


def test_the_real_qwen_greeting_delivers_its_answer_not_its_echoes(tmp_path):
    """The three replies Qwen2.5-Coder 0.5B gave to a greeting on llama-server (data/, with source):
    the answer first, then the correction echoed back twice."""
    from pathlib import Path

    data = json.loads((Path(__file__).parent / "data" / "qwen05b_greeting_native.json").read_text())
    answer, echo, _ = data["replies"]
    run = run_engine(tmp_path, data["replies"], user=data["user"], recipe_snapshot=recipe(engine="arthur", maxValidationCorrections=2))
    assert run.messages == [answer]
    assert echo not in run.messages
    assert any("did not follow the tool protocol" in w for w in journal(run, "warning"))
