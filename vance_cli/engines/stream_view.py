"""What a display shows while a model call streams: free text, or the growing `respond` message.

Display only. The engine hands every StreamDelta of a call to a StreamView, which emits a
MessageDelta event whenever the visible text changes; the engine's decisions come from the
finished Completion, never from here.
"""

from __future__ import annotations

from collections.abc import Callable

from vance_cli.events import Event, MessageDelta
from vance_cli.llm.streaming import StreamDelta
from vance_cli.tools.respond import RESPOND, partial_message


class StreamView:
    def __init__(self, process_id: str, call: int, emit: Callable[[Event], None]) -> None:
        self.process_id = process_id
        self.call = call
        self._emit = emit
        self._text: list[str] = []
        self._names: dict[int, str] = {}
        self._arguments: dict[int, list[str]] = {}
        self._shown = ""

    def feed(self, delta: StreamDelta) -> None:
        if delta.restart:
            self._text.clear()
            self._names.clear()
            self._arguments.clear()
            self._show("", "text")
            return
        if delta.text:
            self._text.append(delta.text)
        if delta.tool_index is not None:
            if delta.tool_name:
                self._names.setdefault(delta.tool_index, delta.tool_name)
            if delta.arguments:
                self._arguments.setdefault(delta.tool_index, []).append(delta.arguments)
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
