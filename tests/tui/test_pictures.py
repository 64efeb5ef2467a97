"""A settled piece near the view is a picture of its blocks (issue 16: the layouts and the garbage
collector's walks of ~120 block widgets held keys during a 64 KB stream). The picture must look
exactly like the blocks, colours included, and give the blocks back where they matter: under
the mouse, after a theme change or a resize."""

from __future__ import annotations

from textual.widgets.markdown import MarkdownBlock

from tests.tui.conftest import make_app, wait_for
from tests.tui.test_parking import SIZE, _body, _settle, _shown
from tests.tui.test_streaming import FENCE, _styled, reply
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.widgets import markdown_pieces, transcript as transcript_module
from vance_cli.tui.widgets.transcript import Transcript


def _states(app) -> list[str]:
    return [piece.state for piece in _body(app).pieces]


def _screen(app) -> list[tuple]:
    pid = app.controller.process_id  # random per app: the status bar shows it
    for prompt in app.screen.query("PromptInput"):
        prompt.cursor_blink = False  # the cursor's phase is not the picture's business
    return [cell for cell in _styled(app.export_screenshot()) if pid not in str(cell[2])]


async def _pictured(pilot, app) -> None:
    await wait_for(pilot, lambda: "picture" in _states(app), describe=lambda: _states(app))
    await _settle(pilot)


async def _look(monkeypatch, text: str, *, pictures: bool, theme: str | None = None, streamed: bool = False,
                expect: bool = True):
    """(the screen with its colours at the end, at the top; the pieces' states at the end)."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
    monkeypatch.setattr(markdown_pieces, "PICTURES", pictures)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        if theme is not None:
            app.theme = theme
        await _shown(app, pilot, text, streamed)
        if pictures and expect:
            await _pictured(pilot, app)
        await _settle(pilot)
        end, states = _screen(app), _states(app)
        app.screen.query_one(Transcript).scroll_home(animate=False)
        first = lambda: _body(app).pieces[0]  # noqa: E731
        await wait_for(pilot, lambda: first().state == ("picture" if pictures and expect else "blocks") and first().ready,
                       describe=lambda: [(p.state, p.ready, p.region.y, p.mouse_hover, p._seen is p._busy) for p in _body(app).pieces[:3]])
        await _settle(pilot)
        return end, _screen(app), states


async def test_a_pictured_piece_looks_exactly_like_its_blocks(monkeypatch):
    text = reply(12)
    end, top, states = await _look(monkeypatch, text, pictures=True)
    end_blocks, top_blocks, states_blocks = await _look(monkeypatch, text, pictures=False)
    assert "picture" in states and "picture" not in states_blocks
    assert states[-1] == "blocks"  # the last piece (it may still grow) is never a picture
    assert end == end_blocks  # every character at its column, its colour and style, every background
    assert top == top_blocks


async def test_a_streamed_reply_is_pictured_the_same(monkeypatch):
    end, top, states = await _look(monkeypatch, reply(12), pictures=True, streamed=True)
    end_blocks, top_blocks, _ = await _look(monkeypatch, reply(12), pictures=False)
    assert "picture" in states and (end, top) == (end_blocks, top_blocks)


async def test_a_picture_is_taken_again_in_a_new_theme(monkeypatch):
    """A theme change makes the pictured pieces blocks again, then pictures in the new colours."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, reply(12), streamed=False)
        await _pictured(pilot, app)
        pictured = [p for p in _body(app).pieces if p.state == "picture"]
        app.theme = "textual-light"
        await wait_for(pilot, lambda: all(p.state != "picture" or p.pictured(p.region.width) for p in pictured))
        await _pictured(pilot, app)  # pictures again, in the new theme
        assert all(p._theme == "textual-light" for p in _body(app).pieces if p.state == "picture")
        light = _screen(app)
    end_blocks, _, _ = await _look(monkeypatch, reply(12), pictures=False, theme="textual-light")
    assert light == end_blocks


async def test_the_mouse_over_a_picture_gives_the_blocks_back(monkeypatch):
    """Links, hover and text selection belong to the blocks: a picture under the mouse is built
    again, and is not pictured while the mouse stays over it."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, reply(12), streamed=False)
        await _pictured(pilot, app)
        transcript = app.screen.query_one(Transcript)
        transcript.scroll_home(animate=False)
        piece = _body(app).pieces[0]
        await wait_for(pilot, lambda: piece.state == "picture", describe=lambda: _states(app))
        await _settle(pilot)
        before = _screen(app)
        region = piece.region.intersection(transcript.region)
        await pilot.hover(Transcript, offset=(region.x - transcript.region.x + 2, region.y - transcript.region.y))
        await wait_for(pilot, lambda: piece.state == "blocks" and piece.ready)
        assert list(piece.query(MarkdownBlock))
        for _ in range(3):  # passes that would picture it again
            transcript._schedule_parking()
            await _settle(pilot)
        assert piece.state == "blocks" and piece.is_mouse_over
        assert _screen(app) == before


async def test_a_piece_that_scrolls_sideways_stays_blocks(monkeypatch):
    """A code block wider than the view scrolls: a picture could not."""
    wide = "```text\n" + "x" * 300 + "\n```\n\n"
    text = "".join(f"Paragraph {n} of the reply, some words.\n\n" + (wide if n % 2 else "") for n in range(14))
    end, top, states = await _look(monkeypatch, text, pictures=True, expect=False)
    end_blocks, top_blocks, _ = await _look(monkeypatch, text, pictures=False)
    wide_pieces = [i for i, p in enumerate(markdown_pieces.pieces(text, markdown_pieces.Splitter(150).split(text))) if "xxxx" in p]
    assert wide_pieces and all(states[i] != "picture" for i in wide_pieces)
    assert (end, top) == (end_blocks, top_blocks)


async def test_a_picture_s_text_can_be_selected(monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, reply(12), streamed=False)
        await _pictured(pilot, app)
        piece = next(p for p in _body(app).pieces if p.state == "picture")
        from textual.selection import Selection

        text, _ = piece.get_selection(Selection(None, None))
        assert "check module_" in text or "Part" in text, text


def test_fence_constant_is_what_the_replies_hold():
    assert FENCE in reply(12)
