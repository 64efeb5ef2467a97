"""The editor side of an ACP connection for the tests (tests/acp/): it records the session updates,
answers permission requests as told and writes files when it offers the fs capability."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    RequestPermissionResponse,
)


class EditorClient:
    """What an editor does: shows updates, answers permission requests as told, writes files."""

    def __init__(self, answer: str | None = "allow_once", fs: bool = True) -> None:
        self.answer = answer
        self.fs = fs
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests: list[Any] = []
        self.writes: list[tuple[str, str]] = []

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kw: Any):
        self.permission_requests.append((session_id, tool_call, options))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def write_text_file(self, content: str, path: str, session_id: str, **kw: Any):
        self.writes.append((path, content))
        Path(path).write_text(content, encoding="utf-8")
        return None

    async def read_text_file(self, path: str, session_id: str, **kw: Any):
        raise NotImplementedError

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def message_text(self) -> str:
        return "".join(u.content.text for _, u in self.updates if u.session_update == "agent_message_chunk")

    def tool_statuses(self, tool_call_id: str) -> list[str]:
        return [u.status for _, u in self.updates
                if u.session_update in ("tool_call", "tool_call_update") and u.tool_call_id == tool_call_id and u.status]


async def initialize(conn: Any, client: EditorClient) -> None:
    """``initialize`` as an editor sends it (its fs capability as ``client`` offers it), checked."""
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=client.fs, write_text_file=client.fs))
    init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=caps)
    assert init.protocol_version == acp.PROTOCOL_VERSION
    assert init.agent_capabilities.load_session is True
