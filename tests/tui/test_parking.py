"""A long reply keeps only the Markdown near the view built (issue 16: a key waited ~1 s during a
64 KB stream because every layout placed its ~1,450 block widgets). Parked pieces keep their height
and come back when scrolled to: the screen is the same as with every piece built."""

from __future__ import annotations

from textual.widgets.markdown import MarkdownBlock

from tests.tui.conftest import make_app, wait_for
from tests.tui.test_streaming import _reply_shown, _rows, reply
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.widgets import markdown_pieces, transcript as transcript_module
from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces, Piece
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.transcript import Transcript

SIZE = (100, 16)  # a short view: a reply of a few KB is many views long


def _body(app) -> MarkdownPieces:
    (message,) = [m for m in app.screen.query(MessageView) if m.role == "assistant"]
    return message.query_one(MarkdownPieces)


def _blocks(app) -> int:
    return len(list(_body(app).query(MarkdownBlock)))


def _screen(app) -> list[str]:
    pid = app.controller.process_id  # random per app: the status bar differs there
    return [row for row in _rows(app.export_screenshot()) if pid not in row]


def _text(rows: list[str]) -> list[str]:
    return [row.rstrip(" ▁▂▃▄▅▆▇█") for row in rows]


async def _settle(pilot) -> None:
    for _ in range(4):
        await pilot.pause(0.1)


async def _shown(app, pilot, text: str, streamed: bool) -> None:
    await _reply_shown(app, pilot, text, streamed, step=211)


_LOOKS: dict = {}  # the reference looks (every piece built), shared by the tests


async def _look(monkeypatch, text: str, *, park: bool, streamed: bool = False, width: int | None = None):
    """(screen at the end, screen at the top, blocks built at the end, virtual height, parked pieces,
    pictured pieces at the end)."""
    key = (text, park, streamed, width)
    if key not in _LOOKS:
        _LOOKS[key] = await _make_look(monkeypatch, text, park=park, streamed=streamed, width=width)
    return _LOOKS[key]


async def _make_look(monkeypatch, text: str, *, park: bool, streamed: bool, width: int | None):
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0 if park else 1000.0)
    monkeypatch.setattr(markdown_pieces, "PICTURES", park)  # the reference: every piece its blocks
    monkeypatch.setattr(markdown_pieces, "FAR_VIEWS", 10**6)  # built first, then parked (tests/tui/test_start_parked.py)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, text, streamed)
        if width is not None:
            await pilot.resize_terminal(width, SIZE[1])
            await _settle(pilot)
        transcript = app.screen.query_one(Transcript)
        end = _screen(app)
        blocks, height = _blocks(app), transcript.virtual_size.height
        parked = sum(1 for p in _body(app).pieces if p.state == "parked")
        pictured = sum(1 for p in _body(app).pieces if p.state == "picture")
        transcript.scroll_home(animate=False)
        await wait_for(pilot, lambda: _body(app).pieces[0].state == "picture" or (_body(app).pieces[0].state == "blocks" and _body(app).pieces[0].ready))
        await _settle(pilot)
        top = _screen(app)
        return end, top, blocks, height, parked, pictured


async def test_a_long_reply_parks_what_is_far_from_the_view_and_looks_the_same(monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(12)
    end, top, blocks, height, parked, pictured = await _look(monkeypatch, text, park=True)
    end_all, top_all, blocks_all, height_all, parked_all, pictured_all = await _look(monkeypatch, text, park=False)
    assert parked_all == pictured_all == 0 and parked > 10  # really parked: most pieces
    assert pictured >= 1  # and the settled pieces near the view are pictures
    assert blocks < blocks_all / 3, (blocks, blocks_all)
    assert height == height_all  # a parked piece keeps its height: the scroll range is the same
    assert end == end_all and "That is all." in "\n".join(end)
    assert top == top_all and "Here is the plan:" in "\n".join(top)  # scrolled to: built again


async def test_a_streamed_long_reply_parks_while_it_streams(monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(12)
    end, top, blocks, height, parked, pictured = await _look(monkeypatch, text, park=True, streamed=True)
    end_all, top_all, blocks_all, height_all, *_ = await _look(monkeypatch, text, park=False)  # unstreamed
    assert parked > 10 and pictured >= 1 and blocks < blocks_all / 3
    assert (end, top, height) == (end_all, top_all, height_all)


async def test_after_a_resize_a_piece_is_exact_again_once_scrolled_to(monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(12)
    end, top, *_ = await _look(monkeypatch, text, park=True, width=70)
    end_all, top_all, *_ = await _look(monkeypatch, text, park=False, width=70)
    # the text is the same; only the scrollbar's thumb may differ while heights are estimates
    assert _text(end) == _text(end_all) and _text(top) == _text(top_all)


async def test_a_parked_piece_whose_text_changes_is_built_with_the_new_text():
    body = MarkdownPieces("")
    piece = Piece("old text\n")
    body._shown = ["old text\n"]
    called = []
    piece.unpark = lambda text: called.append(text)  # type: ignore[method-assign]
    piece.parked = (3, 80)
    piece.change("old text\n", "new text\n")
    assert called == ["new text\n"]


async def test_a_parked_piece_lets_its_blocks_go(monkeypatch):
    """Found while measuring: Textual kept a parked piece's old blocks (its cached list of displayed
    children and its cached arrangements), ~300,000 objects for a 64 KB reply, walked by every full
    collection of the garbage collector (a pause of up to a second on this machine)."""
    import gc
    import weakref

    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(transcript_module, "PARK_MARGIN", 1.0)
    gc.collect()
    before = {id(o) for o in gc.get_objects() if isinstance(o, MarkdownBlock)}
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, reply(12), streamed=False)
        assert sum(1 for p in _body(app).pieces if p.parked) > 10
        gc.collect()
        mine = [weakref.ref(o) for o in gc.get_objects() if isinstance(o, MarkdownBlock) and id(o) not in before]
        alive = [r() for r in mine if r() is not None]
        assert alive and all(block.is_attached for block in alive), sum(1 for b in alive if not b.is_attached)
        del alive


async def test_textual_s_style_cache_keeps_no_dead_block_after_a_streamed_reply(monkeypatch):
    """Textual's ``StylesCache.get_inner_outer`` is an ``lru_cache(1024)`` keyed on the cache object
    of each widget it rendered: it kept the rendered lines of ~1,000 dead blocks (~50,000 objects for
    a 64 KB reply, walked by every full collection). The pieces clear it after each change and park
    (``markdown_pieces.forget_dead_styles``): what it holds then is at most the widgets alive."""
    from textual._styles_cache import StylesCache

    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    StylesCache.get_inner_outer.cache_clear()
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, reply(12), streamed=True)
        alive = len(list(app.screen.query("*"))) + 1  # the screen's own
        held = StylesCache.get_inner_outer.cache_info().currsize
        assert held <= alive, (held, alive)


async def test_pieces_scrolled_to_are_built_when_nothing_else_refreshes(monkeypatch):
    """Found while picturing: with no cursor blinking (the focus elsewhere) the pass after a scroll
    ran before the screen placed the entries at the new offset, found the pieces where they were
    (out of view) and left the ones scrolled to parked: blank lines until something else
    refreshed the screen."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    monkeypatch.setattr(markdown_pieces, "PICTURES", False)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(app, pilot, reply(12), streamed=False)
        await _settle(pilot)
        for prompt in app.screen.query("PromptInput"):
            prompt.cursor_blink = False
        transcript = app.screen.query_one(Transcript)
        transcript.scroll_home(animate=False)
        in_view = lambda: [p for p in _body(app).pieces if p.region.overlaps(transcript.region)]  # noqa: E731
        await wait_for(pilot, lambda: in_view() and all(p.parked is None and p.ready for p in in_view()), timeout=5,
                       describe=lambda: [(p.region.y, p.parked) for p in in_view()])
        await _settle(pilot)
        assert "Here is the plan:" in "\n".join(_screen(app))
