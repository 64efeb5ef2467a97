"""What a display shows while a model call streams: free text, or the growing `respond` message.

Display only. The engine hands every StreamDelta of a call to a StreamView, which emits a
MessageDelta event whenever the visible text changes; the engine's decisions come from the
finished Completion, never from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from vance_cli.events import Event, MessageDelta
from vance_cli.llm.base import StreamDelta
from vance_cli.tools.respond import RESPOND, partial_message

RENDER_SECONDS = 0.05


class StreamView:
    def __init__(self, process_id: str, call: int, emit: Callable[[Event], None]) -> None:
        self.process_id = process_id
        self.call = call
        self._emit = emit
        self._text: list[str] = []
        self._names: dict[int, str] = {}
        self._arguments: dict[int, list[str]] = {}
        self._shown = ""
        self._size = 0  # characters received so far
        self._rendered_at = (0, 0.0)  # (size, monotonic time) of the last render

    def _due(self) -> bool:
        """Render again? Joining and parsing everything received at every delta made a long reply
        quadratic (a 64 KB reply in ~4,000 deltas); rendering when the text has grown by an eighth
        (or 64 characters), or 50 ms have passed, keeps the total linear and the display live."""
        size, at = self._rendered_at
        return self._size - size >= 64 + size // 8 or time.monotonic() - at >= RENDER_SECONDS

    def feed(self, delta: StreamDelta) -> None:
        if delta.restart:
            self._text.clear()
            self._names.clear()
            self._arguments.clear()
            self._size = 0
            self._rendered_at = (0, 0.0)
            self._show("", "text")
            return
        if delta.text:
            self._text.append(delta.text)
            self._size += len(delta.text)
        if delta.tool_index is not None:
            if delta.tool_name:
                self._names.setdefault(delta.tool_index, delta.tool_name)
            if delta.arguments:
                self._arguments.setdefault(delta.tool_index, []).append(delta.arguments)
                self._size += len(delta.arguments)
        if not self._due():
            return  # the final message replaces the streamed text anyway (MessageEvent)
        self._rendered_at = (self._size, time.monotonic())
        respond = next((i for i, name in sorted(self._names.items()) if name == RESPOND), None)
        if respond is not None:
            message = partial_message("".join(self._arguments.get(respond, [])))
            if message is not None:
                self._show(message, "respond")
            return
        self._show("".join(self._text), "text")

    def _show(self, text: str, kind: str) -> None:
        if text != self._shown:
            self._shown = text
            self._emit(MessageDelta(self.process_id, self.call, text, kind))
