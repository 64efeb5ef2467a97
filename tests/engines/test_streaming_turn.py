"""Streaming in the engine: display-only deltas; what is saved and decided is the same as without."""

from __future__ import annotations

from tests.engines.harness import call, respond, run_engine
from vance_cli.events import MessageDelta, MessageEvent
from vance_cli.tools.respond import partial_message


def _deltas(run):
    return [(e.call, e.kind, e.text) for e in run.events if isinstance(e, MessageDelta)]


def test_a_streamed_turn_saves_what_an_unstreamed_turn_saves(tmp_path):
    replies = [
        {"text": "let me look", "tool_calls": [call("file_list", {"path": "."})]},
        respond("Here is **the** answer"),
    ]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = run_engine(tmp_path / "a", list(replies))
    streamed = run_engine(tmp_path / "b", list(replies), stream=True)
    assert streamed.transcript() == plain.transcript()
    assert streamed.reloaded().history == streamed.process.history
    assert [type(e).__name__ for e in streamed.events if not isinstance(e, MessageDelta)] == [
        type(e).__name__ for e in plain.events
    ]
    assert not _deltas(plain)
    deltas = _deltas(streamed)
    assert deltas[0] == (1, "text", "let me look")
    assert deltas[-1] == (2, "respond", "Here is **the** answer")
    assert streamed.messages == ["Here is **the** answer"]


def test_a_corrected_call_is_replaced_by_the_next_calls_stream(tmp_path):
    run = run_engine(tmp_path, ["free text, no tool", respond("proper")], stream=True)
    deltas = _deltas(run)
    assert deltas == [(1, "text", "free text, no tool"), (2, "respond", "proper")]
    assert run.messages == ["proper"]
    # the delta of call 2 comes after the correction was recorded in the history
    assert [m.meta.get("kind") for m in run.process.history if m.role == "system"] == ["correction"]
    message = next(e for e in run.events if isinstance(e, MessageEvent))
    assert run.events.index(message) > max(i for i, e in enumerate(run.events) if isinstance(e, MessageDelta))


def test_partial_respond_arguments_grow_into_the_message():
    whole = '{"message": "Hello \\"world\\" \\u00e9!", "awaiting_user_input": true}'
    seen = [partial_message(whole[:n]) for n in range(len(whole) + 1)]
    grown = [s for s in seen if s is not None]
    assert grown[-1] == 'Hello "world" é!'
    assert all(b.startswith(a) for a, b in zip(grown, grown[1:], strict=False))
    assert partial_message('{"awaiting_user_input": tr') is None
    assert partial_message('["not", "an object"]') is None
