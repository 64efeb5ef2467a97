"""StreamView: the streamed respond message is shown as it grows, at a cost linear in its length."""

from __future__ import annotations

import json

from vance_cli.engines import stream_view
from vance_cli.engines.stream_view import StreamView
from vance_cli.llm.base import StreamDelta


def _respond_deltas(message: str, piece: int = 16):
    body = json.dumps({"message": message, "awaiting_user_input": True})
    yield StreamDelta(tool_index=0, tool_name="respond", arguments="")
    for i in range(0, len(body), piece):
        yield StreamDelta(tool_index=0, arguments=body[i:i + piece])


def test_a_long_reply_is_parsed_a_bounded_number_of_times_and_shown_growing(monkeypatch):
    # Found by review: every delta re-joined and re-parsed all the arguments (quadratic): a 64 KB
    # reply in ~4,000 deltas took 17.8 s to show against 6.1 s unstreamed.
    calls = []
    real = stream_view.partial_message
    monkeypatch.setattr(stream_view, "partial_message", lambda text: calls.append(len(text)) or real(text))
    monkeypatch.setattr(stream_view, "RENDER_SECONDS", 3600.0)  # only growth triggers a render here
    shown: list[str] = []
    view = StreamView("p", 1, lambda event: shown.append(event.text))
    message = "".join(f"word{i} " for i in range(9000))  # ~64 KB
    deltas = list(_respond_deltas(message))
    for delta in deltas:
        view.feed(delta)
    assert len(deltas) > 4000
    assert len(calls) < 100  # not one per delta
    assert sum(calls) < 12 * len(message)  # linear in the length, not quadratic
    assert len(shown) > 20 and all(message.startswith(text) for text in shown)
    assert len(shown[-1]) > 0.85 * len(message)  # close to the end (the final message replaces it)


def test_a_restart_clears_what_was_shown():
    shown: list[str] = []
    view = StreamView("p", 1, lambda event: shown.append(event.text))
    for delta in _respond_deltas("first attempt " * 20):
        view.feed(delta)
    view.feed(StreamDelta(restart=True))
    assert shown[-1] == ""
    view.feed(StreamDelta(text="x" * 100))
    assert shown[-1] == "x" * 100
