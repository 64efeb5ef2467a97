"""A long Markdown text as a column of Markdown widgets, each parsed once (issue 16).

Textual's ``Markdown.append`` re-parses the last top-level block, and a 60-item list is one block:
streaming a reply into one Markdown widget re-built the whole list at every paint, and a 64 KB
reply cost 18 times its unstreamed time. Here the text is cut into pieces of about ``CHUNK``
characters at boundaries where a cut does not change the rendering (a blank line before an
unindented line, or a new top-level list item, never inside a code fence); only the last piece
is ever parsed again. The cuts depend only on the text before them, so a text that grows (a
stream) gets the same pieces as the whole text at once (a message loaded from the process
file): the streamed reply and the finished message are the same widgets.

Where two pieces meet, the vertical gap is the one a single Markdown widget would show (margins
of siblings overlap there; across widgets they would add up): the later piece's first block
loses its top margin (the earlier piece's last block keeps its bottom one), a level-1/2 heading
gets its extra line back as the piece's own margin, and a list cut between two items shows no gap.
A message shorter than ``CHUNK`` is one plain Markdown widget, as before.

A settled piece far from the view is parked (``park_outside``): its blocks are removed and it
keeps its height as an empty widget, so a long reply costs a layout only the blocks near the view
(Textual's compositor places every widget of the screen at every layout, on screen or not: a
64 KB reply was ~1,450 block widgets and ~130 ms a layout). It is parsed again when it comes near
the view. After a width change a parked piece's height is an estimate (its old height scaled by
the widths) until it is shown again.

A settled piece near the view is shown as a picture of itself (``Piece.picture``): once it has
been laid out, the lines its blocks render are composed into one list of lines, and its blocks
are removed. A piece is then one widget to lay out instead of ten to thirty, and holds a few
objects per line instead of thousands per block (the full collections of the garbage collector
walk every one: during a 64 KB stream they and the layouts of ~120 widgets near the view held
keys for 30-90 ms). The picture is what the blocks showed, line for line. It is built again as
blocks when its width or the theme changes, and when the mouse comes over it (links, hover and
text selection belong to the blocks); a piece with something focusable or scrolled in it stays
blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import Horizontal, Vertical
from textual.geometry import NULL_SIZE, Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from vance_cli.tui.widgets import tcss

CHUNK = 1500  # characters: a piece is cut at the first safe boundary after this many
PICTURES = True  # settled pieces near the view are shown as pictures of their blocks (``Piece.picture``)
FAR_VIEWS = 2  # a settled piece this many screens of text above its reply's end comes parked (``Piece.park_unbuilt``)
FOLDING = True  # a reply wholly far from the view lays out none of its pieces (``MarkdownPieces.fold``)
LAID_RETRY_SECONDS = 0.02  # a layout was pending when a piece's change was applied: looked at again after this
PICTURES_PER_PASS = 2  # taken in one layout pass (~5 ms each, and a layout after): the rest at the next

_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_BREAKS_LIST = re.compile(r"#{1,6}(?:[ \t]|$)|>|(?:\*[ \t]*){3,}$|(?:-[ \t]*){3,}$|(?:_[ \t]*){3,}$")
_BIG_HEADING = re.compile(r"#{1,2}(?:[ \t]|$)")
_UNDECIDED = re.compile(r"[-*+]|\d{1,9}[.)]?|#{1,2}")  # the start of a line that may still become an item or a big heading
# A line that may define a link reference: Markdown resolves links above it (in the same piece)
_REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.MULTILINE)


@dataclass(frozen=True)
class Cut:
    at: int  # where the later piece starts (a line start)
    in_list: bool  # between two items of one list: no gap
    big_heading: bool  # the later piece starts with a level-1/2 heading (two lines above it)


class Splitter:
    """The cuts of a text, found incrementally while it grows (the scan resumes where it stopped)."""

    def __init__(self, chunk: int | None = None) -> None:
        self.chunk = chunk or CHUNK
        self._reset("")

    def _reset(self, text: str) -> None:
        self.text = text
        self.cuts: list[Cut] = []
        self._pos = 0  # the next line start to scan
        self._fence: tuple[str, int] | None = None  # (character, length) of an open fence
        self._blank = True  # the previous line was blank (the start counts as one)
        self._list = False  # the last top-level block is a list

    def split(self, text: str) -> list[Cut]:
        if not text.startswith(self.text[: self._pos]):
            self._reset(text)
        self.text = text
        pos = self._pos
        while (end := text.find("\n", pos)) >= 0:  # complete lines only: a cut never moves
            self._line(pos, text[pos:end])
            pos = end + 1
        self._pos = pos
        return self.cuts

    def tail(self, text: str) -> tuple[int, Cut | None]:
        """What a growing ``text`` (just split) shows now: (how much of it, a cut at its last,
        incomplete line or None).

        ``split`` cuts only at complete lines, but the piece before a cut must never have shown
        the line after it (that piece would get shorter, and be parsed again whole: a list of
        twenty items is eighty widgets built again, a 100 ms layout). So where a cut may come at
        the incomplete last line, it is decided from the line's first characters, as ``_line``
        will decide it once the line is complete: the line starts the next piece at once. Only
        while those first characters cannot decide it yet (``-``, ``12.``, ``#``: a list item? a
        big heading?) is the line held back."""
        pos, end = self._pos, len(text)
        if pos >= end or self._fence is not None or pos == 0:
            return end, None
        line = text[pos:]
        last = self.cuts[-1].at if self.cuts else 0
        if line[0] in " \t" or pos - last < self.chunk or not (self._blank or self._list):
            return end, None  # no cut can come here
        if not line.strip() or _UNDECIDED.fullmatch(line):
            return pos, None  # a blank line yet? an item marker, a heading's hashes?
        item = _ITEM.match(line) is not None
        if self._blank or item:
            return end, Cut(pos, item and self._list, _BIG_HEADING.match(line) is not None)
        return end, None

    def _line(self, pos: int, line: str) -> None:
        if self._fence is not None:
            m = _FENCE.match(line)
            if m and m.group(1)[0] == self._fence[0] and len(m.group(1)) >= self._fence[1] and not line[m.end():].strip():
                self._fence = None
            self._blank = False
            return
        if not line.strip():
            self._blank = True
            return
        top = line[0] not in " \t"
        item = top and _ITEM.match(line) is not None
        last = self.cuts[-1].at if self.cuts else 0
        if top and pos - last >= self.chunk and (self._blank or (item and self._list)) and pos > 0:
            self.cuts.append(Cut(pos, item and self._list, _BIG_HEADING.match(line) is not None))
        fence = _FENCE.match(line)
        if fence:
            self._fence = (fence.group(1)[0], len(fence.group(1)))
        if top:
            if item:
                self._list = True
            elif self._blank or fence or _BREAKS_LIST.match(line):
                self._list = False
            # else: a lazy continuation line of the list item or paragraph above
        self._blank = False


def pieces(text: str, cuts: list[Cut]) -> list[str]:
    starts = [0] + [c.at for c in cuts]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)], strict=True)]


def estimated_height(text: str, width: int) -> int:
    """The lines ``text`` takes as Markdown at ``width``, roughly: each line wrapped at word ends (in
    cells: CJK is two), a code line one, a blank line one (the margin between blocks), a heading, a
    fence, a rule or a table row one more. For a piece not built yet (``Piece.park_unbuilt``):
    within a line or two in forty for prose, lists, tables and code (a piece built above the view
    keeps the view in place anyway: ``MarkdownPieces.Grown``)."""
    width = max(8, width)
    lines, fenced = 0, False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            lines += 1 + fenced
            continue
        if fenced:  # a code line does not wrap (the block scrolls sideways)
            lines += 1
            continue
        cells = cell_len(line)  # wide characters (CJK) take two
        lines += -(-cells // (width - 3 if cells > width else width)) or 1
        if line.startswith("#") or line.startswith("|"):
            lines += 1  # a heading's margin; a table's rule under each row
        elif len(line) >= 3 and set(line) <= set("-=_* "):
            lines += 1  # a rule
    return max(1, lines)


def layout_pending(widget: Widget) -> bool:
    """Whether the screen has a layout to make: one was asked for, or a batch of updates is open
    (Textual's ``Markdown.update`` and ``append`` hold one across their mount, and the screen
    runs its after-refresh callbacks meanwhile without laying out: review 16t, a piece pictured
    at the height it had before its margins were set). Geometry read now may be stale."""
    try:
        return bool(getattr(widget.app, "_batch_count", 0) or getattr(widget.screen, "_layout_required", False))
    except Exception:  # noqa: BLE001 - no app or screen any more
        return False


def dragging(screen) -> bool:
    """Whether text is being selected with the mouse on ``screen`` (Textual's private flag)."""
    return bool(getattr(screen, "_selecting", False))


def forget_dead_styles() -> None:
    """Let go of the rendered lines of removed widgets that Textual still holds.

    Textual's ``StylesCache.get_inner_outer`` is an ``lru_cache(1024)`` on a method: it keeps the
    last 1,024 ``StylesCache`` objects it saw, with the lines each rendered, whether their widget
    still exists or not. A streamed reply re-parses its last piece at every paint and a parked
    piece drops its blocks, so those entries were mostly dead blocks: ~50,000 objects after a
    64 KB reply that every full collection of the garbage collector walked (~35 % of one). The
    cache only blends two colours: computing it again for the live widgets costs nothing to see."""
    try:
        from textual._styles_cache import StylesCache

        StylesCache.get_inner_outer.cache_clear()
    except (ImportError, AttributeError):  # pragma: no cover - a Textual without that cache
        pass


def drop_dead_lines(widgets: list[Widget]) -> None:
    """Drop the rendered lines of ``widgets`` that are no longer in the DOM.

    A removed Textual widget is cyclic garbage (parent, message queue, signals): only the cyclic
    collector frees it, and with it every line it rendered. Each line is a ``Strip`` with seven
    caches of its own (~16 objects), and they made most of what a full collection walked while a
    reply streamed (a 64 KB reply: 27,000 dead strips, 191,000 of their caches, of 768,000 garbage
    objects). Let go here, the lines go at once by reference counting; the widget alone is left
    for the collector. Textual's style cache lets go of them too (``forget_dead_styles``)."""
    for widget in widgets:
        if widget.is_attached:
            continue
        try:  # Textual's private caches (8.2): a Textual without them keeps its lines, no harm
            widget._styles_cache.clear()
            widget._render_cache = type(widget._render_cache)(NULL_SIZE, [])
        except (AttributeError, TypeError):  # pragma: no cover
            break
    forget_dead_styles()


class _GrowingList:
    """A list block that takes a longer version of itself by building only its last rows.

    Appending to a piece parses its last top-level block again, and Textual replaces a list
    block whole (``MarkdownBlock._update_from_block``: remove, mount the new one): while a list
    streams in, every paint built all its items again (twenty items, eighty widgets, a layout
    of 100 ms that held the keys). Here the rows of the items that did not change (same lines,
    same bullet) stay; the last old row and the new ones are built. Anything else (another kind
    of block, an ordered list whose numbers widen or start elsewhere) is replaced as Textual does."""

    _row_keys: list[tuple] = []
    _list_key: tuple = ()

    def compose(self) -> ComposeResult:
        items = [block for block in self._blocks if hasattr(block, "bullet")]  # type: ignore[attr-defined]
        self._row_keys = [(type(block).__name__, block.source_range, block.bullet) for block in items]
        self._list_key = self._numbering(items)
        yield from super().compose()  # type: ignore[misc]

    def _numbering(self, items: list) -> tuple:
        return ()

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        keep = len(self._row_keys) - 1
        if type(block) is type(self) and keep >= 0:
            rows = list(block.compose())  # sets the new block's keys (and empties its items)
            if block._list_key == self._list_key and block._row_keys[:keep] == self._row_keys[:keep] and len(rows) > keep:
                old = [child for child in self.children if isinstance(child, Horizontal)]  # type: ignore[attr-defined]
                if len(old) == keep + 1:
                    await old[-1].remove()
                    await self.mount_all(rows[keep:])  # type: ignore[attr-defined]
                    self._row_keys = block._row_keys
                    return
            block.compose = lambda: iter(rows)  # its rows, taken above  # type: ignore[method-assign]
        await super()._update_from_block(block)  # type: ignore[misc]


class PieceBulletList(_GrowingList, Markdown.BLOCKS["bullet_list_open"]):  # type: ignore[misc]
    pass


class PieceOrderedList(_GrowingList, Markdown.BLOCKS["ordered_list_open"]):  # type: ignore[misc]
    def _numbering(self, items: list) -> tuple:
        try:
            start = int(items[0].bullet) if items else 1
        except ValueError:
            start = 1
        return (start, len(f"{start + len(items) - 1}. "))


class Piece(Markdown):
    """One piece. ``append`` computes what to re-parse when it is called, so a second change while
    the first is still being applied would parse from a stale line and mount blocks twice: a piece
    takes a change only when the one before it is done (``ready``).

    The margins where pieces meet are set on the first and last block after each change (inline):
    a ``:first-child`` rule would do it, but Textual restyles every block such a rule matches at
    each mount into its parent, which made every paint of a streamed list cost its whole length."""

    BLOCKS = {**Markdown.BLOCKS, "bullet_list_open": PieceBulletList, "ordered_list_open": PieceOrderedList}

    def __init__(self, markdown: str, *, classes: str = "piece") -> None:
        super().__init__(markdown, classes=classes)
        self._busy: AwaitComplete | None = None  # the last update or append (the mount's is one)
        self._appendable = False  # its text came from appends only (see ``change``)
        self._fixed: dict[MarkdownBlock, tuple[bool, bool]] = {}  # margins set by ``fix_margins``
        self.after_cut = False  # a piece before it: its first block loses its top margin
        self.list_continues = False  # its last list goes on in the next piece: no bottom margin
        self.parked: tuple[int, int] | None = None  # (height, width) when parked (see ``park``)
        self._parser: MarkdownIt | None = None  # for ``_append_is_exact``
        self._picture: list[Strip] | None = None  # its lines, while its blocks are gone (``picture``)
        self._source = ""  # its Markdown, while parked (``get_selection``)
        self._theme = ""  # the app's theme when the picture was taken
        self._seen: object = None  # the change a layout pass found applied (``ripe``)
        self._unpicturable: object = None  # the change whose blocks cannot be pictured
        self.estimated = False  # parked at an estimated height, never built since (``park_unbuilt``)

    def _then_fix(self, change: AwaitComplete) -> AwaitComplete:
        before = list(self.walk_children(with_self=False))

        async def applied() -> None:
            await change
            self._relaid()  # first: fix_margins then starts no second chain
            self.fix_margins()
            drop_dead_lines(before)  # the blocks this change replaced

        self._busy = AwaitComplete(applied())
        return self._busy

    def _relaid(self) -> None:
        """Its blocks changed (a change applied, margins set): not to be pictured until they are
        laid out again (``_refreshed``). A settled piece's margins change when the next piece
        comes (a list that goes on there): it was laid out as the last piece, and a pass right
        then pictured it at its old height (a streamed reply 4 lines shorter than shown at once)."""
        self._seen = None
        self.call_after_refresh(self._refreshed, self._busy, 1)

    def _refreshed(self, busy: AwaitComplete, again: int, wait: float = LAID_RETRY_SECONDS) -> None:
        """A refresh of the screen after the change ``busy`` was applied: its blocks are laid out
        after the second (the first may come before their layout was asked for) unless a layout is
        still pending then (``layout_pending``): looked at again after ``wait``, twice as long
        each time up to a second (a screen under two others is not laid out until they close, and
        its pieces looked again 50 times a second each: review 16u): ``ripe``."""
        if busy is not self._busy or not self.is_attached:
            return
        if again:
            self.call_after_refresh(self._refreshed, busy, again - 1, wait)
        elif layout_pending(self):
            later = min(2 * wait, 1.0)
            self.set_timer(wait, lambda: self.call_after_refresh(self._refreshed, busy, 0, later))
        else:
            self._seen = busy
            self.post_message(MarkdownPieces.Laid(self))

    def update(self, markdown: str) -> AwaitComplete:
        self._appendable = not markdown
        return self._then_fix(super().update(markdown))

    @property
    def ready(self) -> bool:
        return self._initial_markdown is None and self._busy is not None and self._busy.is_done

    def park(self, text: str, picture: list[Strip] | None = None) -> None:
        """Drop the blocks, keep the height: nothing to lay out while the piece is out of view.
        With its ``picture`` (near the view), the piece shows it instead of its blocks. ``text``,
        its Markdown, is what a selection of it copies meanwhile."""
        size = self.outer_size
        self.parked = (size.height, size.width)
        self._source = text
        self._picture = picture
        self._theme = self.app.theme if picture is not None else ""
        self.styles.height = size.height
        self._fixed = {}
        blocks = list(self.walk_children(with_self=False))
        removed = self.remove_children()

        async def let_go() -> None:
            # A parked piece keeps no reference to its removed blocks (their content and caches,
            # hundreds of objects each: a 64 KB reply left ~300,000 for every full collection of
            # the garbage collector to walk, a pause of ~0.3-1.5 s). Textual keeps two: the last
            # list of displayed children (until asked again) and the cached arrangements (until
            # four newer ones; a parked piece is laid out at one size, once).
            await removed
            self.displayed_children  # noqa: B018
            clear = getattr(self, "_clear_arrangement_cache", None)  # Textual's own (widget.py)
            if clear is not None:
                clear()
            drop_dead_lines(blocks)

        self.call_later(let_go)

    def park_unbuilt(self, text: str, width: int) -> None:
        """Parked from the start, at its ``estimated_height``: it came far from the view (a long
        reply shown at once, a resumed chat), where its blocks would be built only to be dropped
        at the first parking pass (a 64 KB reply: ~1,250 blocks, a layout of ~0.8 s, then ~200,000
        objects of garbage, a full collection of ~0.5-1.4 s wherever it fell). Built when it
        comes near the view (``unpark``); the view keeps its place (``Grown``)."""
        height = estimated_height(text, width)
        self.parked = (height, width)
        self._source = text
        self.styles.height = height
        self.estimated = True

    def park_width(self, width: int) -> None:
        """The view is ``width`` wide now: a parked piece's height, scaled (shown again: exact)."""
        if self.parked is not None and width and self.parked[1] and width != self.parked[1]:
            if self.estimated:  # estimated again: a list's or a fence's height does not scale
                height = estimated_height(self._source, width)
            else:
                height = max(1, round(self.parked[0] * self.parked[1] / width))
            self.parked = (height, width)
            self.styles.height = height

    def unpark(self, text: str) -> None:
        """Parse ``text`` (the piece's own) again: it comes into view. It keeps its height (and its
        picture, if any: the blocks are painted over the same lines) until its blocks are in."""
        self.parked = None
        self.estimated = False
        self._appendable = False
        was = self.region  # where it is on the screen, parked (above the view, or not)
        update = Markdown.update(self, text)

        async def built() -> None:
            await update
            before = self.outer_size.height
            self.styles.clear_rule("height")
            self.forget_picture()
            self._source = ""
            self._carry_selection()
            self.call_after_refresh(self._grown, before, was)

        self._then_fix(AwaitComplete(built()))

    def _grown(self, before: int, was: Region) -> None:
        """Built again: its height may differ from the parked one (estimated: ``park_unbuilt``)."""
        grown = self.outer_size.height - before
        if grown and before and was.height and self.is_attached:
            self.post_message(MarkdownPieces.Grown(self, grown, was))

    # --- the picture of a settled piece near the view ---------------------------------------

    def ripe(self) -> bool | None:
        """Whether the piece may be pictured now: True; not yet, ask again at a later layout pass:
        None; no: False. Its last change must have been applied before this pass (the pass that
        first finds it applied may run before the new blocks are laid out); not while the mouse
        is over it, nor while some of its text is selected or text is being selected with the
        mouse (links, hover and selection belong to the blocks)."""
        if not PICTURES or not self.ready or self.parked is not None or self._unpicturable is self._busy:
            return False
        if dragging(self.screen) or self.selected:
            return False  # a selection's highlight and its text belong to the blocks
        if self._seen is not self._busy or layout_pending(self):
            return None  # not laid out since (``_refreshed``), or not as it is now: asked again then
        return not self.is_mouse_over  # over it or over one of its blocks

    def picture(self) -> list[Strip] | None:
        """The lines the piece shows now, as laid out on its screen (its blocks composed the way
        the screen's compositor composes them); None when it cannot be taken: something in it is
        not laid out yet, can be focused, or scrolls (a wide code block)."""
        try:
            from textual._compositor import Compositor

            full = self.screen._compositor.full_map
            base = full[self].region
        except Exception:  # noqa: BLE001 - no screen, not laid out, or a Textual without these
            return None
        if not base.width or not base.height:
            return None
        whole = Region(0, 0, base.width, base.height)
        placed = {}
        for widget in self.walk_children(with_self=True):
            geometry = full.get(widget)
            if geometry is None:
                if widget.display:
                    return None  # mounted after the last layout
                continue
            if widget is not self and (widget.focusable or widget.show_horizontal_scrollbar or widget.show_vertical_scrollbar):
                self._unpicturable = self._busy  # not while these blocks stay (``ripe``)
                return None
            region = geometry.region.translate((-base.x, -base.y))
            placed[widget] = geometry._replace(region=region, clip=whole)
        try:
            compositor = Compositor()
            compositor._full_map = placed
            compositor._full_map_invalidated = False
            compositor.root = self
            compositor.size = base.size
            return compositor.render_strips()
        except Exception:  # noqa: BLE001 - a Textual whose compositor differs: the blocks stay
            return None

    def pictured(self, width: int) -> bool:
        """Shown from its picture at ``width`` (and the theme it was taken in)."""
        return self.state == "picture" and self.parked[1] == width and self._theme == self.app.theme

    @property
    def state(self) -> str:
        """"blocks" (being built, or built), "picture" (its blocks' lines) or "parked" (its height only)."""
        if self.parked is None:
            return "blocks"
        return "picture" if self._picture is not None else "parked"

    def forget_picture(self) -> None:
        self._picture = None
        self._theme = ""

    def render_lines(self, crop: Region) -> list[Strip]:
        picture, size = self._picture, self.outer_size
        if picture and len(picture) == size.height and picture[0].cell_length == size.width:
            return [line.crop(crop.x, crop.right) for line in picture[crop.y:crop.bottom]]
        return super().render_lines(crop)

    def get_selection(self, selection):
        """A parked piece wholly in a selection (a select-all, a triple click) copies its Markdown.
        A selection that starts or ends in it counts screen lines, not Markdown's: nothing (the
        mouse over a piece makes it blocks first: ``on_enter``)."""
        if self.parked is not None:
            if selection.start is not None or selection.end is not None:
                return None
            return self._source.rstrip("\n"), "\n"
        return super().get_selection(selection)

    def on_enter(self, event: events.Enter) -> None:
        if event.node is self and self.state == "picture":
            self.post_message(MarkdownPieces.Thaw(self))

    def on_leave(self, event: events.Leave) -> None:
        """The mouse left it (or one of its blocks): a pass may picture it again (it waited for
        some scroll before: review 16u). While the mouse is still over it, ``ripe`` says no."""
        if self.state == "blocks" and self._seen is self._busy:
            self.post_message(MarkdownPieces.Laid(self))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.state == "picture" and self._theme != self.app.theme:
            self.post_message(MarkdownPieces.Thaw(self))

    @property
    def selected(self) -> bool:
        """Whether the piece or one of its blocks holds some of the screen's selected text."""
        try:
            selections = self.screen.selections
        except Exception:  # noqa: BLE001 - no screen
            return False
        return bool(selections) and any(widget in selections for widget in self.walk_children(with_self=True))

    def _carry_selection(self) -> None:
        """A piece that was wholly selected while parked (a select-all, a triple click) has its
        new blocks selected too: the copy takes their text, and they show the highlight."""
        try:
            selections = self.screen.selections
        except Exception:  # noqa: BLE001 - no screen any more
            return
        selection = selections.get(self)
        if selection is not None and selection.start is None and selection.end is None:
            carried = {}
            for widget, its in selections.items():  # in order: the copy joins them in this order
                carried[widget] = its
                if widget is self:
                    carried.update((block, selection) for block in self.walk_children())
            self.screen.selections = carried

    def change(self, old: str, new: str) -> None:
        """Show ``new`` instead of ``old``: appended when it extends it, else parsed anew.

        Textual 8.2's ``append`` after an ``update`` with text loses a list's first item (the
        line count it keeps is one short when the text ends in a newline), and appending after an
        empty start does not: so a piece that was set is emptied and then appended to."""
        if self.parked is not None:
            self.forget_picture()  # of the old text: it must not show between the new blocks
            self.unpark(new)
            self.post_message(MarkdownPieces.Thaw(self))  # parked or pictured again once built
            return
        if self._appendable and new.startswith(old) and self._append_is_exact(old, new):
            self._then_fix(Markdown.append(self, new[len(old):]))
            return

        async def anew() -> None:
            await Markdown.update(self, "")
            await Markdown.append(self, new)

        self._appendable = True
        self._then_fix(AwaitComplete(anew()))

    def _append_is_exact(self, old: str, new: str) -> bool:
        """Whether Textual's ``append`` of ``new`` after ``old`` shows what parsing all of ``new``
        shows; else the piece is parsed anew. It parses again from where the last block starts,
        and only that: wrong when a line that may define a link reference came (links above it
        would stay unresolved), and when no block of the whole new text starts there any more
        (the last block joined the one before it: a loose numbered list, "1. one\\n\\n2" ends
        in a paragraph "2", and "2. two" is the list's second item, not a new list numbered from
        2). A piece is at most a few thousand characters: one parse costs ~1 ms."""
        if _REFERENCE.search(new, max(0, old.rfind("\n") + 1)):
            return False
        start = self._last_parsed_line
        if not start:
            return True
        if self._parser is None:
            self._parser = self._parser_factory() if self._parser_factory is not None else MarkdownIt("gfm-like")
        return any(token.level == 0 and token.map and token.map[0] == start for token in self._parser.parse(new))

    def fix_margins(self) -> None:
        """The first block without its top margin (after a cut), the last without its bottom one (a
        list that goes on); a block that is no longer first or last gets its own margins back."""
        blocks = [child for child in self.children if isinstance(child, MarkdownBlock)]
        wanted: dict[MarkdownBlock, tuple[bool, bool]] = {}  # block: (no top, no bottom)
        if blocks and self.after_cut:
            wanted[blocks[0]] = (True, False)
        if blocks and self.list_continues:
            wanted[blocks[-1]] = (wanted.get(blocks[-1], (False, False))[0], True)
        changed = False
        for block in self._fixed.keys() - wanted.keys():
            block.styles.clear_rule("margin")
            block.refresh(layout=True)  # clear_rule asks for no layout (Textual 8.2): review 16u
            changed = True
        for block, (no_top, no_bottom) in wanted.items():
            if self._fixed.get(block) == (no_top, no_bottom):
                continue  # set already: setting a style again would lay the screen out again
            top, right, bottom, left = block.styles.margin
            if (no_top and top) or (no_bottom and bottom):
                block.styles.margin = (0 if no_top else top, right, 0 if no_bottom else bottom, left)
                changed = True
        self._fixed = wanted
        if changed and self._seen is not None:
            self._relaid()


class PieceMessage(Message):
    """About one piece; it goes on up to the pane that parks the pieces."""

    def __init__(self, piece: Piece) -> None:
        super().__init__()
        self.piece = piece


class MarkdownPieces(Vertical):
    """Markdown text as pieces; ``set_text`` re-parses only the pieces that changed (the last one
    when the text grew). A piece still busy with its last change takes the new text a moment later."""

    DEFAULT_CSS = tcss(__file__)
    RETRY_SECONDS = 0.02

    def __init__(self, text: str = "", *, classes: str | None = None, growing: bool = False) -> None:
        super().__init__(classes=classes)
        self._splitter = Splitter()
        self._wanted = text
        self._growing = growing  # a stream: its last line starts a piece at once or waits (Splitter.tail)
        self._shown: list[str] = []  # the text of each mounted piece
        self._retry = None
        self._folded: tuple[int, int] | None = None  # (height, width) while folded (``fold``)

    def _showable(self) -> tuple[str, list[Cut]]:
        """The text to show now and its cuts (with a stream's cut at its incomplete last line:
        ``Splitter.tail``)."""
        text = self._wanted
        cuts = self._splitter.split(text)
        if self._growing:
            end, cut = self._splitter.tail(text)
            text = text[:end]
            if cut is not None:
                cuts = [*cuts, cut]
        return text, cuts

    def compose(self) -> ComposeResult:
        text, cuts = self._showable()
        self._shown = pieces(text, cuts)
        far = self._far(self._shown)
        for i, piece in enumerate(self._shown):
            yield self._piece(piece, i, cuts, far=i in far)

    @property
    def text(self) -> str:
        """The text asked for (shown, or about to be)."""
        return self._wanted

    @property
    def growing(self) -> bool:
        return self._growing

    @property
    def shown(self) -> str:
        """The text the pieces hold now."""
        return "".join(self._shown)

    @staticmethod
    def _flags(piece: Piece, i: int, cuts: list[Cut]) -> None:
        """The margins where piece ``i`` meets its neighbours (see the module's docstring)."""
        after_cut = i > 0
        list_continues = i < len(cuts) and cuts[i].in_list
        piece.set_class(after_cut and cuts[i - 1].big_heading, "-big-heading")
        if (after_cut, list_continues) != (piece.after_cut, piece.list_continues):
            piece.after_cut, piece.list_continues = after_cut, list_continues
            if piece.is_mounted:
                piece.fix_margins()

    def _piece(self, text: str, i: int, cuts: list[Cut], *, far: bool = False) -> Piece:
        piece = Piece("" if far else text)
        if far:
            piece.park_unbuilt(text, self._width())
        self._flags(piece, i, cuts)
        return piece

    @property
    def pieces(self) -> list[Piece]:
        return list(self.query_children(Piece))

    class Thaw(PieceMessage):
        """A pictured piece is wanted as blocks (the mouse came over it, the theme changed), or a
        parked one is built again with a new text. It goes on up: the container that parks the
        pieces parks or pictures it again later."""

    class Laid(PieceMessage):
        """A piece may be pictured now (``Piece.ripe``): its last change is laid out, or the mouse
        left it. A settled piece's goes on up (the pane that parks the pieces makes a pass); the
        last piece's stops here (it stays blocks: it may still grow)."""

    def on_markdown_pieces_laid(self, message: Laid) -> None:
        widgets = self.pieces
        if not PICTURES or not widgets or message.piece is widgets[-1]:
            message.stop()

    class Grown(PieceMessage):
        """A parked piece was built again and is ``lines`` taller (or shorter) than it was while
        parked, at ``was`` on the screen then. It goes on up: the pane that scrolls keeps what it
        shows in place."""

        def __init__(self, piece: Piece, lines: int, was: Region) -> None:
            super().__init__(piece)
            self.lines = lines
            self.was = was

    def _far(self, texts: list[str]) -> set[int]:
        """The settled pieces (not the last) whose text ends ``FAR_VIEWS`` screens or more above
        the end of ``texts``: they come parked (``Piece.park_unbuilt``)."""
        try:
            screen_height = self.app.size.height
        except Exception:  # noqa: BLE001 - no app
            return set()
        width = self._width()
        far, below = set(), 0
        for i in range(len(texts) - 2, -1, -1):
            below += estimated_height(texts[i + 1], width)
            if below >= FAR_VIEWS * screen_height:
                far.update(range(i + 1))
                break
        return far

    def _width(self) -> int:
        """Its width, or before its first layout the app's less a message's frame (a guess: a
        parked piece takes the real one at its next parking pass, ``Piece.park_width``)."""
        return self.size.width or max(8, self.app.size.width - 6)

    def thaw(self) -> None:
        """Every pictured piece becomes blocks (text is being selected: a drag may cover them). A
        folded body has no pictures and stays folded (review 16s: a click unfolded every earlier
        reply, two layouts of all of them); a selection copies its pieces as they are."""
        for i, piece in enumerate(self.pieces):
            if piece.state == "picture" and i < len(self._shown):
                piece.unpark(self._shown[i])

    def on_markdown_pieces_thaw(self, message: Thaw) -> None:
        widgets = self.pieces
        piece = message.piece
        if piece in widgets and piece.state == "picture":
            i = widgets.index(piece)
            if i < len(self._shown):
                piece.unpark(self._shown[i])

    def park_outside(self, top: int, bottom: int) -> bool:
        """Park the settled pieces that lie wholly outside screen lines [top, bottom); picture the
        settled ones inside (``Piece.picture``) and show again as blocks the parked ones inside that
        have no picture at this width. The last piece (it may still grow) stays blocks. A finished
        reply wholly outside is folded then (``fold``). Returns whether a piece may be pictured or
        laid out at a later pass (``Piece.ripe``, ``unfold``)."""
        whole = self.region
        far = FOLDING and bool(whole.height) and (whole.bottom <= top or whole.y >= bottom) and not self._growing
        if self._folded is not None:
            if far and self._folded[1] == whole.width:
                return False
            self.unfold()
            return True  # its pieces are laid out at the next pass
        widgets = self.pieces
        last = len(self._shown) - 1
        later = False
        taken = 0
        for i, piece in enumerate(widgets):
            region = piece.region
            if not region.height:
                continue
            outside = region.bottom <= top or region.y >= bottom
            if piece.parked is not None:
                if outside:
                    piece.forget_picture()
                    if piece.parked[1] != region.width:
                        piece.park_width(region.width)
                elif i < len(self._shown) and not piece.pictured(region.width):
                    piece.unpark(self._shown[i])
                    later = later or (PICTURES and i < last)  # to picture once built
            elif i < last and not piece.ready:
                later = later or (PICTURES and not outside)  # to picture once built
            elif i < last:
                if outside:
                    if not piece.selected:  # what is selected stays blocks until copied
                        piece.park(self._shown[i])
                    continue
                if taken >= PICTURES_PER_PASS:
                    later = later or piece.state == "blocks"
                    continue
                ripe = piece.ripe()
                picture = piece.picture() if ripe else None
                if picture is not None:
                    piece.park(self._shown[i], picture)
                    taken += 1
                elif ripe is not False:
                    later = True  # not yet, or not laid out yet (never: ``ripe`` says so at the next pass)
        if far:
            self.fold(whole.width)  # its settled pieces parked above, as for any piece out of view
        return later

    def fold(self, width: int) -> None:
        """Far from the view: its pieces are not displayed (not laid out: a long chat's earlier
        replies were ~45 widgets each that every layout placed again, 335 after four 64 KB
        replies, a layout of 45-136 ms), it keeps its height. Its pieces stay (the settled ones
        parked, the last one built): a select-all copies them as before (``Piece.get_selection``).
        Laid out again when it comes near the view, at another width, when its text changes or
        text is being selected (``thaw``)."""
        if self._folded is not None:
            return
        height = self.outer_size.height
        pieces = self.pieces
        if not height or self._retry is not None or any(piece.selected for piece in pieces):
            return
        if any(piece.parked is None and not piece.ready for piece in pieces):
            return  # one is being built: its height changes (hidden, unseen: review 16s); a later pass
        self._folded = (height, width)
        self.styles.height = height
        for piece in pieces:
            piece.display = False

    def unfold(self) -> None:
        if self._folded is None:
            return
        self._folded = None
        for piece in self.pieces:
            piece.display = True
        self.styles.clear_rule("height")

    def set_text(self, text: str, *, growing: bool = False) -> None:
        """Show ``text``; ``growing``: a stream that goes on (see ``Splitter.tail``)."""
        self._wanted = text
        self._growing = growing
        if self.is_mounted:
            self._apply()

    def _apply(self) -> None:
        self._retry = None
        self.unfold()  # its pieces change: shown and laid out again
        text, cuts = self._showable()
        new = pieces(text, cuts)
        widgets = list(self.query_children(Piece))
        same = 0
        while same < min(len(new), len(self._shown)) - 1 and new[same] == self._shown[same]:
            same += 1  # settled pieces: never parsed again
        waiting = False
        far = self._far(new) if len(new) - len(widgets) > 1 else set()  # several settled at once
        for i in range(same, max(len(new), len(widgets))):
            if i >= len(new):
                widgets[i].remove()
            elif i >= len(widgets) and i < len(new) - 1:
                self.mount(self._piece(new[i], i, cuts, far=i in far))  # settled already: parsed once, as is
            elif i >= len(widgets):
                self.mount(self._piece("", i, cuts))  # the last: appended to once mounted (Piece.change)
                self._shown.append("")
                waiting = True
                continue
            else:
                body = widgets[i]
                self._flags(body, i, cuts)
                if new[i] == self._shown[i]:
                    continue
                if not body.ready:
                    waiting = True
                    continue
                body.change(self._shown[i], new[i])
            if i < len(self._shown):
                self._shown[i] = new[i] if i < len(new) else ""
            else:
                self._shown.append(new[i])
        del self._shown[len(new):]
        if waiting and self._retry is None:
            self._retry = self.set_timer(self.RETRY_SECONDS, self._apply)
