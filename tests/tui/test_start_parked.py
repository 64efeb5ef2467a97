"""A long reply shown at once (a model that does not stream, a resumed chat) builds only the
pieces near its end; the others come parked at an estimated height and are built when scrolled
to (issue 16: a 64 KB reply built ~1,250 blocks, a layout of ~0.8 s, then dropped them at the
first parking pass: ~200,000 objects of garbage, a full collection of 0.5-1.4 s wherever it fell,
during the next reply's stream as often as not). A piece built above the view keeps the view on
what it shows."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from tests.tui.conftest import make_app, wait_for
from tests.tui.test_parking import SIZE, _body, _screen, _settle, _text
from tests.tui.test_streaming import _reply_shown, reply
from vance_cli.events import MessageEvent
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.widgets import markdown_pieces, transcript as transcript_module
from vance_cli.tui.widgets.markdown_pieces import Piece, estimated_height
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.transcript import Transcript


async def _show_at_once(app, pilot, text: str) -> None:
    await _reply_shown(app, pilot, text, streamed=False)


def _count_builds(monkeypatch) -> list[Piece]:
    """The pieces whose Markdown was parsed into blocks (at mount or when unparked)."""
    built: list[Piece] = []
    update = Markdown.update

    def counting(self, markdown: str):
        if markdown and isinstance(self, Piece):
            built.append(self)
        return update(self, markdown)

    monkeypatch.setattr(Markdown, "update", counting)
    return built


async def test_a_long_reply_shown_at_once_builds_only_the_pieces_near_its_end(monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(30)
    built = _count_builds(monkeypatch)
    screens = {}
    shipped_far = markdown_pieces.FAR_VIEWS
    for far in (shipped_far, 10**6):  # as shipped, and every piece built first
        monkeypatch.setattr(markdown_pieces, "FAR_VIEWS", far)
        built.clear()
        app = make_app(ScriptedModel([]))
        async with app.run_test(size=SIZE) as pilot:
            await _show_at_once(app, pilot, text)
            pieces = _body(app).pieces
            screens[far] = _screen(app)
            if far == shipped_far:
                assert len(pieces) > 40
                assert len({id(p) for p in built}) <= len(pieces) // 5, (len(set(map(id, built))), len(pieces))
            else:
                assert len({id(p) for p in built}) == len(pieces)  # what the first case avoids
    shipped, reference = screens.values()
    assert shipped == reference and "That is all." in "\n".join(shipped)


async def test_scrolled_to_the_top_a_reply_shown_at_once_reads_as_built(monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(20)
    tops = []
    for far in (markdown_pieces.FAR_VIEWS, 10**6):
        monkeypatch.setattr(markdown_pieces, "FAR_VIEWS", far)
        app = make_app(ScriptedModel([]))
        async with app.run_test(size=SIZE) as pilot:
            await _show_at_once(app, pilot, text)
            transcript = app.screen.query_one(Transcript)
            transcript.scroll_home(animate=False)
            await wait_for(pilot, lambda: _body(app).pieces[0].state != "parked" and _body(app).pieces[0].ready)
            await _settle(pilot)
            tops.append(_text(_screen(app)))
    assert tops[0] == tops[1] and "Here is the plan:" in "\n".join(tops[0])


@pytest.mark.parametrize("factor", [2, 0.5])
async def test_a_piece_built_above_the_view_leaves_the_view_where_it_was(monkeypatch, factor):
    """Estimated twice too tall (or half): built, the piece just above the view shrinks (grows),
    and without the view moving with its content, what the person reads would jump by as many
    lines (review 16r: a piece that grew was judged by its place after growing, not before)."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(markdown_pieces, "estimated_height", lambda text, width: max(1, round(factor * estimated_height(text, width))))
    text = reply(30)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _show_at_once(app, pilot, text)
        transcript = app.screen.query_one(Transcript)
        pieces = _body(app).pieces
        unbuilt = [p for p in pieces if p.estimated]  # parked at an estimate, never built
        above = max(unbuilt, key=pieces.index)  # the last of them: just above the built ones
        monkeypatch.setattr(transcript_module, "PARK_MARGIN", 0.0)  # first only the view is built
        top_of_view = above.region.bottom - transcript.region.y + round(transcript.scroll_y)
        transcript.scroll_to(y=top_of_view, animate=False, immediate=True)
        transcript.following = False  # the person's own scroll (release_anchor)
        await wait_for(pilot, lambda: any(_text(_screen(app))) and all(
            p.state != "parked" for p in pieces if p.region.height and p.region.overlaps(transcript.region)))
        await _settle(pilot)
        assert above.state == "parked" and above.estimated and above.region.bottom <= transcript.region.y
        before = _text(_screen(app))
        monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
        transcript.park()  # the pass a scroll makes: the pieces within a view of it are built
        await wait_for(pilot, lambda: above.state == "picture" or (above.state == "blocks" and above.ready))
        await _settle(pilot)
        assert _text(_screen(app)) == before


async def _chat_of_two(monkeypatch, folding: bool):
    """Two long replies shown at once, scrolled to the top: (pieces of the first displayed at the
    end, screen at the top, what a select-all of the transcript copies)."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(markdown_pieces, "FOLDING", folding)
    first, second = reply(16), reply(11)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _show_at_once(app, pilot, first)
        app.controller.emit(MessageEvent(app.controller.process_id, second))
        await wait_for(pilot, lambda: len([m for m in app.screen.query(MessageView) if m.role == "assistant"]) == 2)
        await _settle(pilot)
        (body, _) = [m for m in app.screen.query(MessageView) if m.role == "assistant"]
        from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces

        pieces = body.query_one(MarkdownPieces).pieces
        displayed = sum(1 for p in pieces if p.display)
        transcript = app.screen.query_one(Transcript)
        transcript.text_select_all()
        copied = app.screen.get_selected_text()
        app.screen.clear_selection()
        await _settle(pilot)
        transcript.scroll_home(animate=False)
        await wait_for(pilot, lambda: pieces[0].state != "parked" and pieces[0].ready)
        await _settle(pilot)
        return displayed, len(pieces), _text(_screen(app)), copied


async def test_a_reply_far_from_the_view_lays_out_none_of_its_pieces_and_comes_back_as_it_was(monkeypatch):
    """A chat's earlier replies were ~45 widgets each that every layout placed again (four 64 KB
    replies: 335 widgets, layouts of 45-136 ms while the next reply streamed)."""
    displayed, total, top, copied = await _chat_of_two(monkeypatch, folding=True)
    displayed_all, _, top_all, copied_all = await _chat_of_two(monkeypatch, folding=False)
    assert total > 12 and displayed == 0 and displayed_all == total
    assert top == top_all and "Here is the plan:" in "\n".join(top)
    assert copied == copied_all and copied.count("Here is the plan:") == 2 and "Part 11" in copied


ESTIMATED = {
    "prose and lists": reply(3),
    "a table": "intro\n\n| a | b | c |\n|---|---|---|\n" + "".join(f"| row {i} | {'x' * 40} | {i} |\n" for i in range(12)) + "\nend\n",
    "long code lines": "intro\n\n```python\n" + "".join(f"print('{'y' * 200}')  # {i}\n" for i in range(12)) + "```\n\nend\n",
    "wide characters": "".join("这是一个很长的中文句子，用来测试估计的高度。" * 6 + f"{i}\n\n" for i in range(6)),
}


@pytest.mark.parametrize("kind", ESTIMATED)
async def test_an_estimated_height_is_close_to_the_built_one(kind):
    """Review 16r: tables (a rule under each row), wide characters and code lines that do not wrap
    were off by half to two and a half times."""
    text = ESTIMATED[kind]

    class One(App):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Piece(text)

    app = One()
    async with app.run_test(size=(100, 200)) as pilot:
        piece = app.query_one(Piece)
        await wait_for(pilot, lambda: piece.ready)
        await pilot.pause(0.1)
        built = piece.outer_size.height
        assert 0.85 * built <= estimated_height(text, piece.size.width) <= 1.15 * built, (built, estimated_height(text, piece.size.width))


async def _two_replies(app, pilot, monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    first, second = reply(16), reply(11)
    await _show_at_once(app, pilot, first)
    app.controller.emit(MessageEvent(app.controller.process_id, second))
    await wait_for(pilot, lambda: len([m for m in app.screen.query(MessageView) if m.role == "assistant"]) == 2)
    await _settle(pilot)
    from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces

    return [v.query_one(MarkdownPieces) for v in app.screen.query(MessageView) if v.role == "assistant"]


async def test_a_click_in_the_visible_reply_leaves_the_earlier_ones_folded(monkeypatch):
    """Review 16s: a mouse press thawed every reply, and unfolded every earlier one with it."""
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        first, _ = await _two_replies(app, pilot, monkeypatch)
        assert first._folded is not None
        transcript = app.screen.query_one(Transcript)
        transcript.on_mouse_down()  # what a press anywhere in the transcript does
        assert first._folded is not None
        await pilot.pause(0.02)
        assert first._folded is not None
        transcript.on_mouse_up()


async def test_a_reply_does_not_fold_while_one_of_its_pieces_is_being_built(monkeypatch):
    """Review 16s: a piece built while its reply folds changed height hidden (no Grown: the sizes of
    hidden widgets are not laid out), and the reply's height changed when it came back."""
    monkeypatch.setattr(markdown_pieces, "estimated_height", lambda text, width: 3)  # far off
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        first, _ = await _two_replies(app, pilot, monkeypatch)
        assert first._folded is not None
        folded = first.outer_size.height
        first.unfold()
        await pilot.pause(0.05)
        estimated = next(p for p in first.pieces if p.estimated)
        estimated.unpark(first._shown[first.pieces.index(estimated)])  # a pass near it built it...
        first.park_outside(10**6, 10**6 + 1)  # ...and the next (after a jump away) would fold it
        assert first._folded is None  # not while it is being built
        await _settle(pilot)
        first.park_outside(10**6, 10**6 + 1)
        assert first._folded is not None  # built: folded at the next pass, at its new height
        await _settle(pilot)
        assert first.outer_size.height != folded  # the estimate was off: the height it folds at is the real one
        before = first.outer_size.height
        first.unfold()
        await _settle(pilot)
        assert first.outer_size.height == before
