"""The status bar at narrow widths (issue 16): the status survives, the rest leaves in priority order."""

from __future__ import annotations

from tests.tui.test_snapshots import _chat_app, _steady
from vance_cli.messages import Message, ToolCall, Usage
from vance_cli.tui.status import StatusInfo
from vance_cli.tui.widgets.status_bar import StatusBar, fit

INFO = StatusInfo(process_id="20260101-120000-abc123", recipe="arthur", model="openai/gpt-test",
                  status="RUNNING", calls=12, tokens=48200, cost=0.0123, running_since=100.0,
                  folder="~/projects/vance")


def _bar() -> StatusBar:
    bar = StatusBar()
    bar.info = INFO
    return bar


def test_the_whole_line_when_it_fits():
    line = _bar().render_text(now=142.0)
    assert line == ("20260101-120000-abc123 · arthur · openai/gpt-test · working · 12 calls · 48.2k tok"
                    " · $0.0123 · 42s · in ~/projects/vance")
    assert _bar().render_text(now=142.0, width=len(line)) == line


def test_shortening_keeps_status_then_id_model_tokens_cost_time_folder():
    bar = _bar()
    full = bar.render_text(now=142.0)
    widths = range(len(full), 0, -1)
    lines = [bar.render_text(now=142.0, width=w) for w in widths]
    for w, line in zip(widths, lines, strict=True):
        assert len(line) <= w
        assert "working" in line or w < len("working"), (w, line)
    # the order in which fragments leave: calls, recipe, folder, time, cost, tokens, model, id
    gone = []
    for line in lines:
        for frag in ("12 calls", "arthur", "in ~/projects", "42s", "$0.0123", "48.2k tok", "openai/gpt-test", "20260101"):
            if frag not in line and frag not in gone:
                gone.append(frag)
    assert gone == ["12 calls", "arthur", "in ~/projects", "42s", "$0.0123", "48.2k tok", "openai/gpt-test", "20260101"]
    assert bar.render_text(now=142.0, width=80) == "20260101-120000-abc123 · openai/gpt-test · working · 48.2k tok · $0.0123 · 42s"
    assert bar.render_text(now=142.0, width=60) == "20260101-120000-abc123 · openai/gpt-test · working"
    assert bar.render_text(now=142.0, width=5) == "work…"


def test_fit_keeps_display_order():
    assert fit([(2, "a"), (0, "b"), (1, "c")], 5) == "b · c"
    assert fit([(2, "a"), (0, "b"), (1, "c")], None) == "a · b · c"


def _usage_app():
    answer = ToolCall(id="c2", name="respond", arguments='{"message": "done"}')
    history = [
        Message(role="user", content="hi"),
        Message(role="assistant", tool_calls=[answer]),
        Message(role="tool", tool_call_id="c2", name="respond", content="delivered", meta={"ok": True, "delivered": True}),
    ]
    return _chat_app(history, Usage(calls=2, prompt_tokens=41200, completion_tokens=800, cost=0.0123))


def test_status_bar_at_80_columns(snap_compare):
    assert snap_compare(_usage_app(), terminal_size=(80, 16), run_before=_steady)


def test_status_bar_at_60_columns(snap_compare):
    assert snap_compare(_usage_app(), terminal_size=(60, 16), run_before=_steady)


async def test_a_resize_leaves_no_old_fragments():
    app = _usage_app()
    async with app.run_test(size=(120, 16)) as pilot:
        await pilot.pause()
        bar = app.screen.query_one(StatusBar)
        wide = bar.render_text(width=bar.content_size.width)
        assert "tok" in wide
        await pilot.resize_terminal(40, 16)
        await pilot.pause()
        await pilot.pause()
        painted = bar.render_line(0).text.strip()  # what the screen shows now, not a cached line
        assert "waiting for you" in painted and "tok" not in painted and "in " not in painted, painted
        await pilot.resize_terminal(120, 16)
        await pilot.pause()
        assert "tok" in bar.render_line(0).text
