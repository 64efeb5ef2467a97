"""A streamed reply (issue 16): it arrives complete and identical to the final message, the part
already shown is parsed once, and a long message in pieces looks like one Markdown widget."""

from __future__ import annotations

import html
import re

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from tests.tui.conftest import make_app, wait_for
from vance_cli.events import MessageDelta, MessageEvent
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.widgets import markdown_pieces
from vance_cli.tui.widgets.markdown_pieces import Cut, MarkdownPieces, Piece, Splitter, pieces
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.prompt_input import PromptInput
from vance_cli.tui.widgets.streaming_message import StreamingMessage
from vance_cli.tui.widgets.transcript import Transcript

FENCE = "```python\ndef f():\n\n    return '''\n\nnot a cut\n\n'''\n```\n"


def reply(parts: int = 12) -> str:
    out = ["Here is the plan:\n\n"]
    for n in range(1, parts + 1):
        out.append(f"## Part {n}\n\nThe runtime saves each step before the next effect; part {n}.\n\n")
        out.append("".join(f"- point {n}.{i}: check `module_{i}`\n" for i in range(1, 6)) + "\n")
        if n % 3 == 0:
            out.append(FENCE + "\n")
    out.append("That is all.\n")
    return "".join(out)


def test_the_cuts_of_a_growing_text_are_the_cuts_of_the_whole_text():
    text = reply()
    whole = Splitter(chunk=200).split(text)
    assert len(whole) > 5
    grown = Splitter(chunk=200)
    for end in range(0, len(text) + 1, 7):  # deltas that split words, fences, list markers
        cuts = list(grown.split(text[:end]))
        assert cuts == whole[: len(cuts)]
    assert grown.split(text) == whole
    assert "".join(pieces(text, whole)) == text


def test_no_cut_inside_a_code_fence_and_list_cuts_are_marked():
    text = "intro\n\n" + FENCE * 6 + "\n" + "".join(f"- item {i}\n" for i in range(40))
    cuts = Splitter(chunk=30).split(text)
    for cut in cuts:
        assert text[: cut.at].count("```") % 2 == 0, text[: cut.at][-60:]
    in_list = [c for c in cuts if c.in_list]
    assert in_list and all(text[c.at:].startswith("- item") for c in in_list)


_CELL = 12.2  # the width of one column in Textual's SVG screenshots
_TEXT = re.compile(r'<text class="([^"]*)" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>')


def _rows(svg: str) -> list[str]:
    """The screen's text, row by row, each piece of text at its column."""
    rows: dict[float, list[tuple[int, str]]] = {}
    for m in _TEXT.finditer(svg):
        rows.setdefault(float(m.group(3)), []).append((round(float(m.group(2)) / _CELL), html.unescape(m.group(4))))
    out = []
    for _, texts in sorted(rows.items()):
        line = ""
        for column, text in sorted(texts):
            line = line.ljust(column) + text
        out.append(line.replace("\xa0", " ").rstrip())
    return out


def _styled(svg: str) -> list[tuple]:
    """The screen with its colours: each piece of text with its column and style, each background
    rectangle with its columns and fill (for two screens that must look the same, not only read so)."""
    styles = dict(re.findall(r"\.(terminal-[\w-]+) \{([^}]*)\}", svg))
    cells = [(float(y), round(float(x) / _CELL), html.unescape(text).replace("\xa0", " "), styles.get(cls, cls))
             for cls, x, y, text in _TEXT.findall(svg)]
    rects = [(float(y), round(float(x) / _CELL), round(float(w) / _CELL), fill)
             for fill, x, y, w in re.findall(r'<rect fill="([^"]*)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"', svg)]
    return sorted(cells) + sorted(rects)


class _One(App):
    def __init__(self, widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.widget


async def _screen_rows(widget) -> list[str]:
    app = _One(widget)
    async with app.run_test(size=(80, 400)) as pilot:
        await pilot.pause(0.3)
        return _rows(app.export_screenshot())


async def test_a_message_in_pieces_looks_like_one_markdown_widget(monkeypatch):
    text = reply(6)
    reference = Markdown(text)
    reference.styles.padding = 0  # as a piece has (markdown_pieces.tcss): the text at the same column
    whole = await _screen_rows(reference)
    monkeypatch.setattr(markdown_pieces, "CHUNK", 120)
    split = MarkdownPieces(text)
    rows = await _screen_rows(split)
    assert len(split._splitter.cuts) > 5  # really in pieces
    assert any(c.in_list for c in split._splitter.cuts) and any(c.big_heading for c in split._splitter.cuts)
    assert rows == whole


async def _reply_shown(app, pilot, text: str, streamed: bool, step: int = 11) -> None:
    """``text`` streamed (deltas of ``step`` characters) or shown at once, then wholly shown."""
    if streamed:
        await _stream(app, pilot, text, step=step)
    else:
        app.controller.emit(MessageEvent(app.controller.process_id, text))
    await wait_for(pilot, lambda: [m.text for m in app.screen.query(MessageView) if m.role == "assistant"] == [text])
    await _all_shown(app, pilot, text)


async def _all_shown(app, pilot, text: str) -> None:
    """Every piece of the reply holds its text and is built or parked, then a few paints."""
    (body,) = [m for m in app.screen.query(MessageView) if m.role == "assistant"][0].query(MarkdownPieces)
    await wait_for(pilot, lambda: body.shown == text and all(p.parked or p.ready for p in body.pieces))
    for _ in range(5):
        await pilot.pause(0.1)


async def _stream(app, pilot, text: str, step: int) -> None:
    pid = app.controller.process_id
    sofar = ""
    for start in range(0, len(text), step):
        sofar += text[start:start + step]
        app.controller.emit(MessageDelta(pid, 1, sofar, "respond"))
        await pilot.pause(0.002)
    await pilot.pause(0.2)
    app.controller.emit(MessageEvent(pid, text))


async def test_a_streamed_reply_becomes_the_message_complete_and_its_settled_pieces_parsed_once(monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(8)
    changes: list[tuple[int, int, int]] = []  # (piece index, pieces mounted then, text length)
    original = Piece.change

    def counting_change(self, old, new):
        siblings = list(self.parent.query_children(Piece))
        changes.append((siblings.index(self), len(siblings), len(new)))
        original(self, old, new)

    monkeypatch.setattr(Piece, "change", counting_change)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.screen.query_one(Transcript)
        await _stream(app, pilot, text, step=13)  # 13: deltas split the fences, the markers, the words
        await wait_for(pilot, lambda: transcript.streaming_text is None)
        (message,) = [m for m in app.screen.query(MessageView) if m.role == "assistant"]
        assert isinstance(message, StreamingMessage) and not message.streaming and "-assistant" in message.classes
        body = message.query_one(MarkdownPieces)
        await wait_for(pilot, lambda: body.shown == text, describe=lambda: body.shown[-80:])
        assert message.text == text
        streamed = [w._markdown for w in body.query_children(Piece)]
        assert "".join(streamed) == text and len(streamed) > 5
    # the settled part was parsed once: a piece changes at most once after a later piece exists
    for index in {i for i, _, _ in changes}:
        later = [c for c in changes if c[0] == index and c[1] > index + 1]
        assert len(later) <= 1, (index, later)


async def test_a_streamed_reply_renders_as_the_same_message_unstreamed(monkeypatch):
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(4)

    async def rows(streamed: bool) -> list[str]:
        app = make_app(ScriptedModel([]))
        async with app.run_test(size=(100, 300)) as pilot:
            await _reply_shown(app, pilot, text, streamed)
            pid = app.controller.process_id  # random per app: the status bar differs there
            return [row for row in _rows(app.export_screenshot()) if pid not in row]

    assert await rows(True) == await rows(False)


async def test_a_finished_reply_restyles_only_the_message_and_looks_like_the_message_unstreamed(monkeypatch):
    """Its border changes at the finish; Textual restyles every descendant at a class change (a
    64 KB reply: ~80 ms at once, a key waited), and no rule below a message depends on it."""
    from textual.css.stylesheet import Stylesheet

    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(4)
    restyled: list = []
    finishing = {"now": False}
    original_apply, original_finish = Stylesheet.apply, StreamingMessage.finish

    def apply(self, node, *args, **kwargs):
        if finishing["now"]:
            restyled.append(node)
        return original_apply(self, node, *args, **kwargs)

    def finish(self, text):
        finishing["now"] = True
        try:
            original_finish(self, text)
        finally:
            finishing["now"] = False

    monkeypatch.setattr(Stylesheet, "apply", apply)
    monkeypatch.setattr(StreamingMessage, "finish", finish)

    async def screen(streamed: bool) -> list[tuple]:
        app = make_app(ScriptedModel([]))
        async with app.run_test(size=(100, 300)) as pilot:
            app.screen.query_one(PromptInput).cursor_blink = False  # the same cursor in both
            await _reply_shown(app, pilot, text, streamed)
            svg = app.export_screenshot()
            (message,) = [m for m in app.screen.query(MessageView) if m.role == "assistant"]
            assert "-assistant" in message.classes and "streaming" not in message.classes
            if streamed:
                assert restyled == [message]
            cells = _styled(svg)
            status = {c[0] for c in cells if isinstance(c[2], str) and app.controller.process_id in c[2]}
            assert status  # the status bar's row (the process id differs between the two apps)
            return [c for c in cells if c[0] not in status]

    assert await screen(True) == await screen(False)


# --------------------------------------------------------------------------- lists that grow

LISTS = {
    "ordered past nine": "Steps:\n\n" + "".join(f"{i}. step {i}: run the `check_{i}` tests\n" for i in range(1, 13)) + "\nDone.\n",
    "ordered from three": "".join(f"{i}. item {i}\n" for i in range(3, 9)) + "\nafter\n",
    "nested bullets": "".join(f"- top {i}\n  - inner {i}.1\n  - inner {i}.2\n" for i in range(1, 6)) + "\nend\n",
    "loose": "".join(f"* loose item {i}\n\n" for i in range(1, 7)) + "tail paragraph\n",
    "then a new list": "- a\n- b\n\n1. one\n2. two\n3. three\n",
}


class _Grown(App):
    """One piece, grown line by line and mid-line the way a stream grows it (each change applied
    before the next)."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Piece("")


async def _grow(text: str, step: int = 9) -> tuple[list[str], list[list[int]]]:
    app = _Grown()
    rows_seen: list[list[int]] = []
    async with app.run_test(size=(80, 400)) as pilot:
        piece = app.query_one(Piece)
        await pilot.pause()
        shown = ""
        for end in [*range(step, len(text), step), len(text)]:
            piece.change(shown, text[:end])
            shown = text[:end]
            await piece._busy
            rows_seen.append([id(row) for block in piece.children for row in block.children])
        await pilot.pause(0.3)
        return _rows(app.export_screenshot()), rows_seen


async def test_a_list_that_grows_looks_like_the_list_parsed_whole():
    for name, text in LISTS.items():
        grown, _ = await _grow(text)
        assert grown == await _screen_rows(Markdown(text)), name


async def test_a_growing_list_builds_only_its_last_rows():
    """Textual replaced a list block whole at every append: twenty items, eighty widgets built
    again at each paint of a stream. The rows of finished items stay the same widgets."""
    text = "".join(f"- item {i} with a few words\n" for i in range(1, 21))
    _, seen = await _grow(text, step=len("- item 1 with a few words\n"))
    assert len(seen[-1]) == 20
    for before, after in zip(seen, seen[1:]):
        assert after[: len(before) - 1] == before[:-1]  # all but the last row kept


def test_a_cut_at_a_growing_texts_last_line_is_decided_from_its_first_characters():
    text = "x" * 40 + "\n\n" + "second paragraph, one long line as a model writes it\n"
    at = text.index("second")
    splitter = Splitter(chunk=30)
    partial = text[: at + 3]  # "sec": a cut comes before it, whatever the rest of the line
    splitter.split(partial)
    assert splitter.tail(partial) == (len(partial), Cut(at, False, False))  # shown, as the next piece
    splitter.split(text)
    assert splitter.cuts[-1] == Cut(at, False, False) and splitter.tail(text) == (len(text), None)
    items = "- " + "x" * 40 + "\n" + "- second item\n"
    second = items.index("- second")
    splitter = Splitter(chunk=30)
    for undecided in ("-", ):  # an item marker or not? the next character says
        splitter.split(items[:second] + undecided)
        assert splitter.tail(items[:second] + undecided) == (second, None)
    splitter.split(items[: second + 3])
    assert splitter.tail(items[: second + 3]) == (second + 3, Cut(second, True, False))
    assert Splitter(chunk=30).split(items)[-1] == Cut(second, True, False)
    lazy = "- " + "x" * 40 + "\nlazy continuation\n"  # in a list, not an item: no cut
    splitter = Splitter(chunk=30)
    splitter.split(lazy[:-5])
    assert splitter.tail(lazy[:-5]) == (len(lazy) - 5, None) and Splitter(chunk=30).split(lazy) == []
    heading = "x" * 40 + "\n\n" + "## big\n"
    splitter = Splitter(chunk=30)
    splitter.split(heading[: heading.index("## big") + 2])
    assert splitter.tail(heading[: heading.index("## big") + 2])[1] is None  # "##": big heading or not?
    splitter.split(heading[:-2])
    assert splitter.tail(heading[:-2])[1] == Splitter(chunk=30).split(heading)[-1] == Cut(heading.index("## big"), False, True)
    indented = "x" * 40 + "\n\n" + "  code"  # not at a line start that can be cut
    splitter = Splitter(chunk=30)
    splitter.split(indented)
    assert splitter.tail(indented) == (len(indented), None)


def test_the_cuts_a_stream_shows_early_are_the_cuts_of_the_whole_text():
    for text in (reply(), "".join(LISTS.values()) * 4, "intro\n\n" + FENCE * 6 + "\n" + "".join(f"- item {i}\n" for i in range(40))):
        whole = Splitter(chunk=60).split(text)
        grown = Splitter(chunk=60)
        for end in range(0, len(text) + 1):
            grown.split(text[:end])
            shown, cut = grown.tail(text[:end])
            early = [*grown.cuts, cut] if cut is not None else grown.cuts
            assert early == whole[: len(early)], (end, text[max(0, end - 40):end])
            assert all(c.at <= shown for c in early)


async def test_a_long_paragraph_line_shows_while_it_streams(monkeypatch):
    """Review 16m F2: the whole incomplete last line was held back where a cut may come, and a
    model writes a paragraph as one line: the next paragraph stayed hidden until its newline."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    first = "The first paragraph says enough to fill a piece. " * 4 + "\n\n"
    second = "The second paragraph is one long line, as a model writes it. " * 20  # no newline yet
    body = MarkdownPieces("", growing=True)
    app = _One(body)
    async with app.run_test(size=(80, 60)) as pilot:
        await pilot.pause()
        for end in range(40, len(first + second) + 1, 40):
            body.set_text((first + second)[:end], growing=True)
            await wait_for(pilot, lambda: all(p.ready for p in body.pieces) and body._retry is None)
        held = len(first + second) - len(body.shown)
    assert held < 40, f"{held} characters of the stream not shown"


async def test_a_reference_definition_after_a_growing_list_resolves_its_links():
    """Review 16m F1: the rows a growing list kept were parsed before the definition came."""
    text = "- see [docs] first\n- then the rest\n\n[docs]: https://example.com\n"
    app = _Grown()
    async with app.run_test(size=(80, 60)) as pilot:
        piece = app.query_one(Piece)
        await pilot.pause()
        shown = ""
        for end in (text.index("\n\n") + 1, len(text)):
            piece.change(shown, text[:end])
            shown = text[:end]
            await piece._busy
        await pilot.pause(0.3)
        grown = _rows(app.export_screenshot())
    assert "[docs]" not in "".join(grown)
    assert grown == await _screen_rows_sized(Markdown(text), (80, 60))


async def _screen_rows_sized(widget, size) -> list[str]:
    app = _One(widget)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.3)
        return _rows(app.export_screenshot())


async def test_a_streamed_text_never_shortens_a_piece(monkeypatch):
    """Shown before its cut, the start of a line made the piece before the cut shorter later, and
    that piece was parsed again whole. Every change of a streamed piece now extends it."""
    monkeypatch.setattr(markdown_pieces, "CHUNK", 150)
    text = reply(6)
    changes: list[tuple[str, str]] = []
    original = Piece.change

    def recording(self, old, new):
        if self.parked is None and old:
            changes.append((old, new))
        original(self, old, new)

    monkeypatch.setattr(Piece, "change", recording)
    body = MarkdownPieces("", growing=True)
    app = _One(body)
    async with app.run_test(size=(80, 400)) as pilot:
        await pilot.pause()
        for end in range(7, len(text), 7):
            body.set_text(text[:end], growing=True)
            await wait_for(pilot, lambda: all(p.ready for p in body.pieces) and body._retry is None)
        body.set_text(text)
        await wait_for(pilot, lambda: body.shown == text)
    assert len(body._splitter.cuts) > 5 and changes
    assert all(new.startswith(old) for old, new in changes), [(o[-30:], n[-30:]) for o, n in changes if not n.startswith(o)][:3]


async def test_a_block_a_change_replaced_keeps_no_rendered_lines():
    """A removed widget is cyclic garbage and waits for a full collection, with every line it
    rendered (a Strip and its seven caches each): the lines are let go at once."""
    app = _Grown()
    async with app.run_test(size=(80, 20)) as pilot:
        piece = app.query_one(Piece)
        await pilot.pause()
        piece.change("", "# A title that will grow")
        await piece._busy
        await pilot.pause(0.1)
        (first,) = piece.children
        assert first._styles_cache._cache  # it was painted
        piece.change("# A title that will grow", "# A title that will grow longer\n\nand a paragraph\n")
        await piece._busy
        assert first not in piece.children and not first.is_attached
        assert not first._styles_cache._cache and not first._render_cache.lines


async def test_a_loose_numbered_list_streamed_numbers_like_the_whole_text():
    """Review 16m P1: after "1. one\\n\\n" the next "1" or "2" came as a paragraph, Textual's append
    then parsed only from there, and the next item started a new list (numbered 1, 1, 1; 8. and 9.
    without the column 10. adds). The piece is parsed anew when its last block joins the one
    before it."""
    for text in ("1. one\n\n1. two\n\n1. three\n", "".join(f"{i}. item number {i}\n\n" for i in range(1, 12))):
        grown, _ = await _grow(text, step=1)
        assert grown == await _screen_rows(Markdown(text)), text[:40]


async def test_deltas_queued_behind_a_newer_one_are_not_handled():
    """A fast model's deltas queue faster than the screen takes them; each holds the whole text
    so far, so only the newest of a run is handled (2,681 for a 64 KB reply: ~0.3 s of dispatch)."""
    from vance_cli.tui.messages import EngineEvent
    from vance_cli.tui.screens.chat_screen import ChatScreen

    handled: list[str] = []
    original = ChatScreen.on_engine_event

    def counting(self, message):
        if isinstance(message.event, MessageDelta):
            handled.append(message.event.text)
        return original(self, message)

    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        ChatScreen.on_engine_event = counting
        try:
            pid = app.controller.process_id
            text = reply(2)
            for end in range(10, len(text), 10):
                app.screen.post_message(EngineEvent(MessageDelta(pid, 1, text[:end], "respond")))
            app.screen.post_message(EngineEvent(MessageDelta("another", 1, "elsewhere", "respond")))
            await pilot.pause(0.2)
        finally:
            ChatScreen.on_engine_event = original
    assert handled and handled[-2:] == [text[:end], "elsewhere"] and len(handled) < 5, len(handled)
