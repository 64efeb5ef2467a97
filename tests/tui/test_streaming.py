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
from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces, Piece, Splitter, pieces
from vance_cli.tui.widgets.message_view import MessageView
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


def _rows(svg: str) -> list[str]:
    rows: dict[float, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', svg):
        rows.setdefault(float(m.group(2)), []).append((float(m.group(1)), html.unescape(m.group(3))))
    return ["".join(t for _, t in sorted(v)).replace("\xa0", " ").rstrip() for _, v in sorted(rows.items())]


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
    whole = await _screen_rows(Markdown(text))
    monkeypatch.setattr(markdown_pieces, "CHUNK", 120)
    split = MarkdownPieces(text)
    rows = await _screen_rows(split)
    assert len(split._splitter.cuts) > 5  # really in pieces
    assert any(c.in_list for c in split._splitter.cuts) and any(c.big_heading for c in split._splitter.cuts)
    assert rows == whole


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
            if streamed:
                await _stream(app, pilot, text, step=11)
            else:
                app.controller.emit(MessageEvent(app.controller.process_id, text))
            await wait_for(pilot, lambda: [m.text for m in app.screen.query(MessageView) if m.role == "assistant"] == [text])
            await pilot.pause(0.5)
            pid = app.controller.process_id  # random per app: the status bar differs there
            return [row for row in _rows(app.export_screenshot()) if pid not in row]

    assert await rows(True) == await rows(False)
