"""A settled piece near the view is a picture of its blocks (issue 16: the layouts and the garbage
collector's walks of ~120 block widgets held keys during a 64 KB stream). The picture must look
exactly like the blocks, colours included, and give the blocks back where they matter: under
the mouse, after a theme change or a resize."""

from __future__ import annotations

from contextlib import asynccontextmanager

from textual.widgets.markdown import MarkdownBlock

from tests.tui.conftest import make_app, wait_for
from tests.tui.test_parking import SIZE, _body, _settle, _shown
from tests.tui.test_streaming import _styled, reply
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


@asynccontextmanager
async def _pictured_app(monkeypatch):
    """A chat app showing a long reply, settled, with pictures."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, reply(12), streamed=False)
        await _pictured(pilot, app)
        yield app, pilot


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
    async with _pictured_app(monkeypatch) as (app, pilot):
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
    async with _pictured_app(monkeypatch) as (app, pilot):
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
        monkeypatch.setattr(transcript_module, "PICTURE_SECONDS", 60.0)  # no pass from the timer
        await pilot.hover("PromptInput")  # the mouse goes: pictured again, no scroll needed (review 16u)
        await wait_for(pilot, lambda: piece.state == "picture", describe=lambda: (piece.state, piece.is_mouse_over))
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


async def _at_the_top(monkeypatch, pilot, app, state: str):
    transcript = app.screen.query_one(Transcript)
    transcript.scroll_home(animate=False)
    first = _body(app).pieces[0]
    await wait_for(pilot, lambda: first.state == state and first.ready, describe=lambda: _states(app))
    await _settle(pilot)
    return transcript, first


async def test_selected_text_is_never_pictured(monkeypatch):
    """Review 16p: a piece whose blocks were selected was pictured with the selection's highlight
    (which stayed after the selection was cleared), and the copy lost its text."""
    from textual.selection import Selection

    async with _pictured_app(monkeypatch) as (app, pilot):
        transcript, first = await _at_the_top(monkeypatch, pilot, app, "picture")
        clean = _screen(app)
        app.screen.selections = {first: Selection(None, None)}  # selected (as a select-all would)
        await wait_for(pilot, lambda: first.state == "blocks" and first.ready)  # blocks again
        blocks = list(first.query(MarkdownBlock))
        app.screen.selections = {block: Selection(None, None) for block in blocks}
        for _ in range(3):  # passes that would picture it
            transcript._schedule_parking()
            await _settle(pilot)
        assert first.state == "blocks"  # the others may be pictures: they hold no selected text
        assert "Here is the plan:" in (app.screen.get_selected_text() or "")
        app.screen.clear_selection()
        await wait_for(pilot, lambda: first.state == "picture", describe=lambda: _states(app))
        await _settle(pilot)
        assert _screen(app) == clean  # no highlight left in the picture


async def test_a_drag_over_pictures_copies_what_it_covers(monkeypatch):
    """Review 16p: a drag that started over pictures copied one word; the same drag over blocks
    copies every line it covers."""
    copies = {}
    for pictures in (False, True):
        monkeypatch.setattr(markdown_pieces, "PICTURES", pictures)
        monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
        monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
        app = make_app(ScriptedModel([]))
        async with app.run_test(size=SIZE) as pilot:
            await _shown(app, pilot, reply(12), streamed=False)
            transcript, first = await _at_the_top(monkeypatch, pilot, app, "picture" if pictures else "blocks")
            y0, y1 = first.region.y - transcript.region.y, transcript.region.height - 2
            await pilot.mouse_down(Transcript, offset=(4, y0))
            for y in range(y0, y1 + 1):
                await pilot.hover(Transcript, offset=(10, y))
                await pilot.pause(0.05)
            await pilot.mouse_up(Transcript, offset=(10, y1))
            await pilot.pause(0.1)
            right_after = app.screen.get_selected_text()
            await _settle(pilot)
            await _settle(pilot)
            copies[pictures] = (right_after, app.screen.get_selected_text())
    assert "ere is the plan:\nPart 1" in (copies[False][0] or "")
    assert copies[True] == (copies[False][0], copies[False][0])  # the same text, and it stays


async def test_a_reply_whose_text_changes_is_parked_and_pictured_again(monkeypatch):
    """Review 16p (older than pictures): a text that changed in parked pieces built them again and
    nothing parked them after: every piece stayed blocks. After the change the screen is the
    new text's, exactly, and the pieces far from the view are parked again."""
    changed = reply(12).replace("check", "CHECK")
    async with _pictured_app(monkeypatch) as (app, pilot):
        body = _body(app)
        body.set_text(changed)
        await wait_for(pilot, lambda: body.shown == changed and all(p.parked or p.ready for p in body.pieces))
        await wait_for(pilot, lambda: _states(app).count("parked") > 10, describe=lambda: _states(app))
        await _pictured(pilot, app)
        end = _screen(app)
    end_blocks, _, _ = await _look(monkeypatch, changed, pictures=False)
    assert end == end_blocks


async def test_a_triple_click_copies_the_whole_reply_parked_pieces_too(monkeypatch):
    """Re-review 16p (older than pictures): a triple click selects the whole reply, and the
    parked pieces (no blocks) gave no text: 598 characters of a 12-part reply were copied. The
    pieces built again meanwhile are copied in their place (review 16q: at the end)."""
    async with _pictured_app(monkeypatch) as (app, pilot):
        transcript, first = await _at_the_top(monkeypatch, pilot, app, "picture")
        await pilot.click(Transcript, offset=(6, first.region.y - transcript.region.y + 3), times=3)
        await _settle(pilot)
        transcript.scroll_end(animate=False)  # what is selected is not parked meanwhile
        await _settle(pilot)
        copied = app.screen.get_selected_text() or ""
        parts = ("Part 1\n", "Part 6", "Part 12", "That is all.")
        assert [part for part in parts if part not in copied] == []
        assert [copied.index(part) for part in parts] == sorted(copied.index(part) for part in parts)  # in order
        assert "parked" in _states(app)  # the pieces far from the view are parked ones


def test_a_parked_piece_copies_nothing_for_a_selection_that_starts_or_ends_in_it():
    """Review 16q: its offsets count screen lines, not Markdown's (an offset past the source's
    lines made Textual's extract raise IndexError)."""
    from textual.geometry import Offset
    from textual.selection import Selection

    piece = markdown_pieces.Piece("")
    piece.parked, piece._source = (3, 80), "## Part 1\n\ntext\n"
    assert piece.get_selection(Selection(None, None)) == ("## Part 1\n\ntext", "\n")
    assert piece.get_selection(Selection(Offset(0, 40), None)) is None
    assert piece.get_selection(Selection(None, Offset(2, 1))) is None


async def test_a_selection_left_standing_keeps_only_its_own_pieces_built(monkeypatch):
    """Review 16q: any selection on the screen kept every piece from being parked or pictured
    until it was cleared (a selection stays until a click or Esc): the cost of a long reply came
    back. Only the pieces that hold selected text stay blocks."""
    from textual.selection import Selection

    async with _pictured_app(monkeypatch) as (app, pilot):
        transcript, first = await _at_the_top(monkeypatch, pilot, app, "picture")
        app.screen.selections = {first: Selection(None, None)}
        await wait_for(pilot, lambda: first.state == "blocks" and first.ready)
        app.screen.selections = {block: Selection(None, None) for block in first.query(MarkdownBlock)}
        transcript.scroll_end(animate=False)
        await wait_for(pilot, lambda: _states(app).count("parked") > 10, describe=lambda: _states(app))
        await _pictured(pilot, app)
        assert first.state == "blocks"  # it holds the selection: never parked, never pictured
        assert "Here is the plan:" in (app.screen.get_selected_text() or "")


async def test_a_settled_piece_is_pictured_once_laid_out_not_at_a_later_timer(monkeypatch):
    """A piece tells the pane when its blocks are laid out (``MarkdownPieces.Laid``): the pass that
    pictures it comes then. Before, a pass found it applied but maybe not laid out, and only a
    pass after it (a timer's, a scroll's) pictured it: a 64 KB stream laid out ~110 widgets at each
    paint against ~85 now, the settled pieces' blocks waiting for that second pass."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
    monkeypatch.setattr(transcript_module, "PICTURE_SECONDS", 60.0)  # no pass from the timer
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, reply(12), streamed=False)
        await wait_for(pilot, lambda: "picture" in _states(app), describe=lambda: _states(app))


async def test_a_piece_is_not_pictured_while_a_batch_defers_the_layout(monkeypatch):
    """Textual's Markdown update and append hold a batch of updates across their mount (during a
    stream the last piece does at every paint); meanwhile the screen runs its after-refresh
    callbacks without laying out. A piece whose change was applied then must not be pictured from
    the geometry before it (review 16t: a piece pictured 10 lines high, its blocks 9 once its
    margins were set). Here every piece built again opens such a batch as its change is applied;
    each picture taken near the top must equal its blocks, height and text."""
    import asyncio

    from vance_cli.tui.widgets.markdown_pieces import Piece

    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
    app = make_app(ScriptedModel([]))
    unparked = set()
    original_unpark, original_fix = Piece.unpark, Piece.fix_margins

    def unpark(self, text):
        unparked.add(self)
        return original_unpark(self, text)

    def fix_margins(self):
        if self in unparked:
            self.screen._refresh_layout()  # the screen's timer laid the new blocks out before (it can)
        original_fix(self)
        if self in unparked:
            unparked.discard(self)
            app._begin_batch()  # as a mount elsewhere does, for 150 ms
            asyncio.get_running_loop().call_later(0.15, app._end_batch)

    monkeypatch.setattr(Piece, "unpark", unpark)
    monkeypatch.setattr(Piece, "fix_margins", fix_margins)
    lines = lambda strips: [line.text.rstrip() for line in strips]  # noqa: E731
    async with app.run_test(size=(100, 16)) as pilot:
        await _shown(app, pilot, reply(14), streamed=False)  # far pieces come parked (estimated)
        body = _body(app)
        app.screen.query_one(Transcript).scroll_home(animate=False)
        await wait_for(pilot, lambda: body.pieces[0].state == "picture", timeout=10)
        await pilot.pause(0.5)
        pictured = {i: (p.parked[0], lines(p._picture)) for i, p in enumerate(body.pieces) if p.state == "picture"}
        monkeypatch.setattr(markdown_pieces, "PICTURES", False)
        body.thaw()
        await wait_for(pilot, lambda: all(body.pieces[i].state == "blocks" and body.pieces[i].ready for i in pictured))
        await _settle(pilot)
        built = {i: (body.pieces[i].outer_size.height, lines(body.pieces[i].picture() or [])) for i in pictured}
    assert pictured and pictured == built


async def _built_pieces(monkeypatch, pilot, app) -> list:
    """The settled pieces of a long reply shown at once, built (not pictured), laid out."""
    monkeypatch.setattr(markdown_pieces, "PICTURES", False)
    await _shown(app, pilot, reply(12), streamed=False)
    await _settle(pilot)
    body = _body(app)
    return [p for p in body.pieces[:-1] if p.state == "blocks" and p.ready and p.after_cut
            and type(p.children[0]).__name__ == "MarkdownH2"]


async def test_a_settled_piece_whose_margins_change_is_pictured_only_once_they_are_laid_out(monkeypatch):
    """A piece's margins change when its neighbour's cut does (a list going on in the next piece
    takes its last block's bottom margin): laid out before as the last piece, a pass right then
    pictured it at its old height (once in CI: a streamed reply 4 lines shorter than shown at once)."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1000.0)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        piece = (await _built_pieces(monkeypatch, pilot, app))[-1]
        monkeypatch.setattr(markdown_pieces, "PICTURES", True)
        await wait_for(pilot, lambda: piece.ripe() is True)  # laid out as it is
        first = piece.children[0]
        before = tuple(first.styles.margin)
        piece.after_cut = False  # the cut before it went: its first block gets its top margin back
        piece.fix_margins()
        assert tuple(first.styles.margin) != before
        assert piece.ripe() is None  # not from the geometry before
        await wait_for(pilot, lambda: piece.ripe() is True)


async def test_a_block_given_its_margin_back_is_laid_out_with_it(monkeypatch):
    """``styles.clear_rule`` asks Textual 8.2 for no layout: the piece kept its old height through
    later layouts, shown (and pictured) without the margin until rebuilt (review 16u)."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1000.0)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        piece = (await _built_pieces(monkeypatch, pilot, app))[-1]
        height, margin = piece.outer_size.height, piece.children[0].styles.margin.top
        assert margin == 0  # after a cut: no top margin
        piece.after_cut = False
        piece.fix_margins()
        await wait_for(pilot, lambda: piece.outer_size.height == height + piece.children[0].styles.margin.top > height,
                       describe=lambda: (height, piece.outer_size.height, tuple(piece.children[0].styles.margin)))


async def test_a_piece_waiting_for_a_layout_looks_again_less_and_less_often(monkeypatch):
    """A screen under two others is not laid out until they close; its pieces looked again 50
    times a second each (review 16u: 53 pieces, 44 % of a core). The wait doubles up to 1 s."""
    from vance_cli.tui.widgets.markdown_pieces import Piece

    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1000.0)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        piece = (await _built_pieces(monkeypatch, pilot, app))[-1]
        looks = []
        original = Piece._refreshed
        monkeypatch.setattr(Piece, "_refreshed", lambda self, *args: looks.append(1) or original(self, *args))
        monkeypatch.setattr(markdown_pieces, "PICTURES", True)
        monkeypatch.setattr(markdown_pieces, "layout_pending", lambda widget: True)  # never laid out
        piece._seen = None  # as a change does
        piece.call_after_refresh(piece._refreshed, piece._busy, 1)
        await pilot.pause(1.0)
        assert 3 <= len(looks) <= 12, len(looks)
        assert piece.ripe() is None
        monkeypatch.setattr(markdown_pieces, "layout_pending", lambda widget: False)
        await wait_for(pilot, lambda: piece.ripe() is not None)  # laid out at last: seen within ~1 s
