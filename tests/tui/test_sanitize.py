"""Text a model or a file wrote reaches the screen without terminal control sequences.

Rich and Textual strip a few C0 characters (BEL, BS, CR, ...) but not ESC: an OSC 52 sequence in
a reply would write the person's clipboard, a CSI 2J clear their screen. The app runs model and
file text through vance_cli.text.for_terminal, as the plain CLI does. Checked on what the
app paints (its screenshot) and on what the widgets keep.
"""

from __future__ import annotations

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from vance_cli.events import JournalEvent, StatusChanged, TodosUpdated
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.store.process import Process, Status
from vance_cli.tui.app import VanceApp
from vance_cli.tui.sources.scripted import ScriptedRunSource
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.question_box import QuestionBox
from vance_cli.tui.widgets.tool_line import ToolLine

OSC52 = "\x1b]52;c;ZXZpbCBjbGlwYm9hcmQ=\x07"  # "evil clipboard", base64, into the clipboard
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b2J"


def _painted(app) -> str:
    """The app's screen as text (its SVG screenshot without the markup)."""
    import html
    import re

    svg = app.export_screenshot()
    svg = svg[svg.index("</defs>"):] if "</defs>" in svg else svg  # skip the style and font block
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


def _clean(painted: str) -> None:
    # (JSON arguments and error messages may quote the payload escaped, as \u001b or \x1b: text)
    for bad in ("\x1b", "\x9b", "\x07"):
        assert bad not in painted, repr(bad)


async def test_the_chat_paints_model_text_without_control_sequences(tmp_path):
    (tmp_path / "work").mkdir(exist_ok=True)
    call = {"tool_calls": [{"name": "file_list", "arguments": {"path": f".{OSC52}"}}]}
    app = make_app(ScriptedModel([call, respond(f"before{OSC52} middle{CLEAR} after{C1_CSI} end")]), recipe="ford")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: [m.text for m in app.screen.query(MessageView) if m.role == "assistant"])
        await pilot.pause()
        message = [m for m in app.screen.query(MessageView) if m.role == "assistant"][0]
        assert message.text == "before middle after end"
        line = app.screen.query_one(ToolLine)
        await pilot.click(ToolLine)  # expanded: the whole arguments and the result
        assert "\x1b" not in line.render_text() and "file_list" in line.render_text()
        painted = _painted(app)
        assert "before middle after end" in painted  # the sequences are gone, not just their ESC
        _clean(painted)


async def test_the_run_screen_paints_journal_todos_and_question_without_control_sequences():
    process = Process(engine="benjy", recipe_name="benjy-coding", status=Status.RUNNING)
    events = [
        TodosUpdated(process.id, [{"id": "1", "text": f"item{OSC52} one", "status": "open"}]),
        JournalEvent(process.id, f"**DO** item 1{CLEAR} went{C1_CSI} fine"),
        StatusChanged(process.id, "RUNNING", "BLOCKED", "question"),
    ]
    source = ScriptedRunSource(process, events, question=f"Which{OSC52} file{CLEAR}?")
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(QuestionBox)
        await wait_for(pilot, lambda: box.display)
        await pilot.pause()
        assert box.question == "Which file?"
        painted = _painted(app)
        for visible in ("item one", "went fine", "Which file?"):
            assert visible in painted, visible
        assert "ZXZpbCBjbGlwYm9hcmQ" not in painted and "[2J" not in painted
        _clean(painted)
