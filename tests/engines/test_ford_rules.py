"""Every rule of the structured-engine-output spec, asserted over the whole transcript of a turn."""

from __future__ import annotations

from tests.engines.harness import call, recipe, respond, run_engine
from vance_cli.engines.ford import (
    EMPTY_REPLY_CORRECTION,
    MIXED_RESPOND_ERROR,
    NO_TOOL_CALL_CORRECTION,
)
from vance_cli.store.process import Status


def test_respond_alone_blocks_and_delivers_the_message(tmp_path):
    run = run_engine(tmp_path, [respond("Hello there", awaiting=True, id="c1")])
    assert run.process.status == Status.BLOCKED
    assert run.messages == ["Hello there"]
    assert len(run.model.requests) == 1
    assert run.transcript() == [("user", "hi"), ("assistant", ["respond"]), ("tool", "respond", "delivered")]


def test_awaiting_user_input_defaults_to_true(tmp_path):
    run = run_engine(tmp_path, [respond("Hello")])
    assert run.process.status == Status.BLOCKED


def test_respond_not_awaiting_input_goes_ready(tmp_path):
    run = run_engine(tmp_path, [respond("Working on it", awaiting=False)])
    assert run.process.status == Status.READY
    assert run.messages == ["Working on it"]
    assert len(run.model.requests) == 1
    assert run.transcript() == [("user", "hi"), ("assistant", ["respond"]), ("tool", "respond", "delivered")]


def test_request_carries_system_prompt_history_and_tools(tmp_path):
    run = run_engine(tmp_path, [respond("ok")])
    req = run.model.requests[0]
    assert req.messages[0].role == "system" and req.messages[0].content == "SYSTEM"
    assert [m.role for m in req.messages] == ["system", "user"]
    assert [t.name for t in req.tools] == ["respond", "file_read", "file_list"]


def test_respond_mixed_with_other_calls_runs_them_and_rejects_respond(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("alpha")
    replies = [
        {"tool_calls": [call("file_list", {}, id="c1"), call("respond", {"message": "I am looking..."}, id="c2")]},
        respond("There is a.txt", id="c3"),
    ]
    run = run_engine(tmp_path, replies)
    assert run.messages == ["There is a.txt"]  # the speculative message was never shown
    assert run.process.status == Status.BLOCKED
    assert len(run.model.requests) == 2
    t = run.transcript()
    assert [e[0] for e in t] == ["user", "assistant", "tool", "tool", "assistant", "tool"]
    assert t[2][1] == "file_list" and "a.txt" in t[2][2]
    assert t[3] == ("tool", "respond", MIXED_RESPOND_ERROR)
    assert t[5] == ("tool", "respond", "delivered")
    assert "LAST and ONLY" in MIXED_RESPOND_ERROR
    # the second request shows the model both the file list and the rejection
    second = run.model.requests[1].messages
    assert [m.role for m in second][-3:] == ["assistant", "tool", "tool"]


def test_free_text_gets_a_validation_check_then_respond_is_accepted(tmp_path):
    run = run_engine(tmp_path, ["Sure, here you go", respond("Here you go")])
    assert run.messages == ["Here you go"]
    assert len(run.model.requests) == 2
    assert run.transcript() == [
        ("user", "hi"),
        ("assistant", "Sure, here you go"),
        ("system", NO_TOOL_CALL_CORRECTION),
        ("assistant", ["respond"]),
        ("tool", "respond", "delivered"),
    ]
    assert NO_TOOL_CALL_CORRECTION.startswith("VALIDATION CHECK: your previous response had no tool call.")
    # on the wire the correction travels as a user message right after the free text
    wire = run.model.requests[1].messages
    assert (wire[-2].role, wire[-2].content) == ("assistant", "Sure, here you go")
    assert (wire[-1].role, wire[-1].content) == ("user", NO_TOOL_CALL_CORRECTION)
    assert run.process.history[2].meta["kind"] == "correction"


def test_free_text_after_spent_corrections_is_delivered_and_blocks(tmp_path):
    run = run_engine(tmp_path, ["one", "two", "three"], recipe_snapshot=recipe(maxValidationCorrections=2))
    assert len(run.model.requests) == 3  # never an endless loop
    # issue 18: the best candidate of the turn is delivered, the first plain reply when all are usable
    assert run.messages == ["one"]
    assert run.process.status == Status.BLOCKED
    roles = [e[0] for e in run.transcript()]
    assert roles == ["user", "assistant", "system", "assistant", "system", "assistant"]
    assert run.process.history[1].meta.get("delivered") is True
    assert not run.process.history[-1].meta.get("delivered")


def test_zero_corrections_delivers_free_text_at_once(tmp_path):
    run = run_engine(tmp_path, ["plain"], recipe_snapshot=recipe(maxValidationCorrections=0))
    assert len(run.model.requests) == 1
    assert run.messages == ["plain"]


def test_data_relay_too_brief_gets_one_correction_never_two(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("x" * 800)
    replies = [
        {"tool_calls": [call("file_read", {"path": "big.txt"}, id="c1")]},
        respond("Done.", id="c2"),
        respond("Still short.", id="c3"),
    ]
    run = run_engine(tmp_path, replies)
    assert len(run.model.requests) == 3
    assert run.messages == ["Still short."]  # the second brief reply is accepted: never twice in a row
    t = run.transcript()
    assert [e[0] for e in t] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    relay = t[4]
    assert relay[1] == "respond" and relay[2].startswith("VALIDATION CHECK")
    assert "(800 characters)" in relay[2] and "only 5 characters" in relay[2]
    assert t[6] == ("tool", "respond", "delivered")


def test_data_relay_not_triggered_by_a_long_message(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("y" * 800)
    long_message = "The file holds 800 copies of the letter y. " * 6
    replies = [{"tool_calls": [call("file_read", {"path": "big.txt"})]}, respond(long_message)]
    run = run_engine(tmp_path, replies)
    assert len(run.model.requests) == 2
    assert run.messages == [long_message]


def test_data_relay_thresholds_and_text_are_configurable(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("z" * 800)
    custom = recipe(dataRelayCorrection={"minToolResultChars": 5000, "maxMessageChars": 200})
    run = run_engine(tmp_path, [{"tool_calls": [call("file_read", {"path": "big.txt"})]}, respond("ok")], recipe_snapshot=custom)
    assert len(run.model.requests) == 2 and run.messages == ["ok"]

    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "ws").mkdir()
    (tmp_path / "b" / "ws" / "s.txt").write_text("q" * 60)
    custom = recipe(dataRelayCorrection={"minToolResultChars": 50, "maxMessageChars": 10, "text": "RELAY IT ({tool_chars})"})
    run = run_engine(
        tmp_path / "b",
        [{"tool_calls": [call("file_read", {"path": "s.txt"})]}, respond("ok"), respond("q" * 60)],
        recipe_snapshot=custom,
    )
    assert len(run.model.requests) == 3
    assert run.transcript()[4][2].startswith("RELAY IT (")


def test_data_relay_counts_wide_characters_heavier(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("x" * 800)
    japanese = "ファイルには同じ文字が八百回繰り返されています。" * 3  # 72 characters, weight 216 > 200
    replies = [{"tool_calls": [call("file_read", {"path": "big.txt"})]}, respond(japanese)]
    run = run_engine(tmp_path, replies)
    assert len(run.model.requests) == 2 and run.messages == [japanese]


def test_empty_reply_is_corrected_at_once_and_counted(tmp_path):
    run = run_engine(tmp_path, [{"text": ""}, respond("back")])
    assert run.messages == ["back"]
    assert len(run.model.requests) == 2
    t = run.transcript()
    assert t == [
        ("user", "hi"),
        ("assistant", ""),
        ("system", EMPTY_REPLY_CORRECTION),
        ("assistant", ["respond"]),
        ("tool", "respond", "delivered"),
    ]
    # the empty reply stays in the history but is not sent back (Anthropic rejects empty text)
    wire = run.model.requests[1].messages
    assert [(m.role, m.content) for m in wire[1:]] == [("user", "hi"), ("user", EMPTY_REPLY_CORRECTION)]


def test_empty_replies_past_the_budget_end_in_a_blocked_diagnosis(tmp_path):
    run = run_engine(tmp_path, [{"text": ""}] * 3, recipe_snapshot=recipe(maxValidationCorrections=2))
    assert len(run.model.requests) == 3
    assert run.process.status == Status.BLOCKED
    assert len(run.messages) == 1 and "empty" in run.messages[0]
    assert run.process.history[-1].meta["kind"] == "diagnosis"


def test_malformed_tool_call_gets_an_error_result_and_the_loop_goes_on(tmp_path):
    replies = [{"tool_calls": [call("file_list", "{not json", id="c1")]}, respond("recovered", id="c2")]
    run = run_engine(tmp_path, replies)
    assert run.messages == ["recovered"]
    t = run.transcript()
    assert t[2][1] == "file_list" and t[2][2].startswith("ERROR: malformed call to `file_list`")
    assert run.process.engine_params["turn"]["corrections"] == 1


def test_malformed_respond_arguments_are_corrected(tmp_path):
    replies = [{"tool_calls": [call("respond", {"text": "wrong key"}, id="c1")]}, respond("right", id="c2")]
    run = run_engine(tmp_path, replies)
    assert run.messages == ["right"]
    assert run.transcript()[2][2].startswith("ERROR: malformed call to `respond`")


def test_unknown_tool_is_an_error_result_naming_the_available_tools(tmp_path):
    run = run_engine(tmp_path, [{"tool_calls": [call("web_search", {"q": "x"})]}, respond("ok")])
    content = run.transcript()[2][2]
    assert "unknown tool 'web_search'" in content and "respond" in content
    assert run.messages == ["ok"]


def test_malformed_calls_past_the_budget_end_in_a_diagnosis(tmp_path):
    bad = {"tool_calls": [call("file_list", "{oops")]}
    run = run_engine(tmp_path, [bad, bad, bad], recipe_snapshot=recipe(maxValidationCorrections=2))
    assert len(run.model.requests) == 3
    assert run.process.status == Status.BLOCKED
    assert "malformed" in run.messages[0]


def test_validation_off_delivers_free_text_without_correction(tmp_path):
    run = run_engine(tmp_path, ["just text"], recipe_snapshot=recipe(validation=False))
    assert len(run.model.requests) == 1
    assert run.messages == ["just text"]
    assert run.transcript() == [("user", "hi"), ("assistant", "just text")]
    assert run.process.status == Status.BLOCKED


def test_validation_off_skips_the_relay_check(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("x" * 800)
    replies = [{"tool_calls": [call("file_read", {"path": "big.txt"})]}, respond("Done.")]
    run = run_engine(tmp_path, replies, recipe_snapshot=recipe(validation=False))
    assert len(run.model.requests) == 2 and run.messages == ["Done."]


def test_recipe_without_respond_takes_the_legacy_path(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "n.txt").write_text("note")
    legacy = recipe(tools={"allowed": ["file_read"]})
    replies = [{"tool_calls": [call("file_read", {"path": "n.txt"})]}, "The note says: note"]
    run = run_engine(tmp_path, replies, recipe_snapshot=legacy)
    assert run.messages == ["The note says: note"]
    t = run.transcript()
    assert t[0] == ("user", "hi") and t[1] == ("assistant", ["file_read"]) and t[2][:2] == ("tool", "file_read")
    assert "note" in t[2][2] and t[3] == ("assistant", "The note says: note") and len(t) == 4
    assert len(run.model.requests) == 2
    assert [t.name for t in run.model.requests[0].tools] == ["file_read"]
    assert run.process.status == Status.BLOCKED


def test_tool_iteration_cap_ends_in_a_blocked_diagnosis(tmp_path):
    loop = {"tool_calls": [call("file_list", {})]}
    run = run_engine(tmp_path, [loop] * 10, recipe_snapshot=recipe(maxToolIterations=3))
    assert len(run.model.requests) == 3
    t = run.transcript()
    assert [e[0] for e in t] == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]
    assert t[-1][1] == run.messages[0]
    assert run.process.status == Status.BLOCKED
    assert "maxToolIterations" in run.messages[0]
    assert run.process.status_reason == "maxToolIterations reached"


def test_every_call_result_and_correction_is_persisted(tmp_path):
    run = run_engine(tmp_path, ["free text", {"tool_calls": [call("file_list", {})]}, respond("done")])
    on_disk = run.reloaded()
    assert [m.model_dump() for m in on_disk.history] == [m.model_dump() for m in run.process.history]
    assert on_disk.status == Status.BLOCKED
    assert on_disk.usage.calls == 3
    assert on_disk.engine_params["turn"]["open"] is False


def test_off_schema_arguments_count_as_a_malformed_call(tmp_path):
    bad = {"tool_calls": [call("file_read", {})]}  # path is required
    run = run_engine(tmp_path, [bad, bad, bad], recipe_snapshot=recipe(maxValidationCorrections=2))
    assert len(run.model.requests) == 3
    assert run.process.status == Status.BLOCKED
    t = run.transcript()
    assert t[2][0:2] == ("tool", "file_read") and "'path' is a required property" in t[2][2]
    assert "malformed" in run.messages[0]


def test_relay_check_runs_again_after_new_tool_results(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("x" * 800)
    read = {"tool_calls": [call("file_read", {"path": "big.txt"})]}
    replies = [read, respond("Done."), read, respond("Done again."), respond("Fine.")]
    run = run_engine(tmp_path, replies)
    assert len(run.model.requests) == 5
    respond_results = [e[2] for e in run.transcript() if e[0] == "tool" and e[1] == "respond"]
    assert [r.startswith("VALIDATION CHECK") for r in respond_results] == [True, True, False]
    assert run.messages == ["Fine."]


def test_legacy_empty_reply_correction_does_not_ask_for_respond(tmp_path):
    from vance_cli.engines.ford import EMPTY_REPLY_CORRECTION_LEGACY

    legacy = recipe(tools={"allowed": ["file_read"]})
    run = run_engine(tmp_path, [{"text": ""}, "answer"], recipe_snapshot=legacy)
    assert run.transcript()[2] == ("system", EMPTY_REPLY_CORRECTION_LEGACY)
    assert "respond" not in EMPTY_REPLY_CORRECTION_LEGACY
    assert run.messages == ["answer"]
