"""A stateless scripted "model" for Benjy runs: it answers from the request alone.

Controller calls are recognised by their stage's system prompt ("You are the ROUTE stage ...");
worker calls by their tools. Being stateless it gives the same answer to the same request after a
crash and resume, so the kill-anywhere test and the benchmark can use it (in-process through
FunctionModel, or behind the fake OpenAI server through ``reply_body``).

Default behaviour: interpret → a coding task with ``items`` items, each writing ``item<n>.txt``;
the worker writes its file then responds; evaluate → pass; reflect → yes; route → retry. Every
answer can be replaced per stage with ``overrides[stage] = fn(request_text) -> dict``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vance_cli.llm.base import ChatRequest
from vance_cli.messages import Message

STAGES = ("INTERPRET", "EVALUATE", "REFLECT", "ROUTE")
_ITEM = re.compile(r"Your item \(#(\d+)\): (.*)")


def stage_of(messages: list[Message] | list[dict]) -> str | None:
    for m in messages:
        role = m.role if isinstance(m, Message) else m.get("role")
        content = (m.content if isinstance(m, Message) else m.get("content")) or ""
        if role == "system":
            found = re.search(r"You are the (\w+) stage of Benjy", content)
            if found:
                return found.group(1)
    return None


def _text(m: Message | dict) -> str:
    return ((m.content if isinstance(m, Message) else m.get("content")) or "") if m is not None else ""


def _role(m: Message | dict) -> str:
    return m.role if isinstance(m, Message) else m.get("role", "")


@dataclass
class Brain:
    items: int = 3
    task_type: str = "coding"
    criteria: list[str] = field(default_factory=lambda: ["every item file exists"])
    overrides: dict[str, Callable[[str], dict[str, Any]]] = field(default_factory=dict)
    # worker behaviour: fn(item_number, prompt) -> list of (path, content) files to write
    worker_files: Callable[[int, str], list[tuple[str, str]]] | None = None
    calls: dict[str, int] = field(default_factory=dict)

    def controller(self, stage: str, prompt: str) -> dict[str, Any]:
        self.calls[stage] = self.calls.get(stage, 0) + 1
        if stage in self.overrides:
            return self.overrides[stage](prompt)
        if stage == "INTERPRET":
            return {
                "taskType": self.task_type,
                "criteria": [{"text": c} for c in self.criteria],
                "items": [{"title": f"write item{n}.txt", "description": f"create item{n}.txt", "criteria": [1]}
                          for n in range(1, self.items + 1)],
            }
        if stage == "EVALUATE":
            return {"verdict": "pass", "reasons": ["looks right"]}
        if stage == "REFLECT":
            return {"achieved": "yes", "gaps": []}
        return {"op": "retry", "reason": "try again"}

    def worker(self, messages: list) -> dict[str, Any]:
        self.calls["WORKER"] = self.calls.get("WORKER", 0) + 1
        first = next((_text(m) for m in messages if _role(m) == "user"), "")
        found = _ITEM.search(first)
        number = int(found.group(1)) if found else 0
        last = messages[-1]
        # a first turn, or a write that a crash interrupted (Ford never re-runs a started side
        # effect; it tells the model, which does the work again)
        if _role(last) == "user" or _text(last).startswith("INTERRUPTED"):
            files = self.worker_files(number, first) if self.worker_files else [(f"item{number}.txt", f"item {number}\n")]
            return {"tool_calls": [{"name": "file_write", "arguments": {"path": p, "content": c}} for p, c in files]}
        return {"tool_calls": [{"name": "respond", "arguments": {"message": f"wrote the files of item {number}", "awaiting_user_input": False}}]}

    def __call__(self, request: ChatRequest) -> dict[str, Any]:
        stage = stage_of(request.messages)
        if stage is not None:
            prompt = next((m.content or "" for m in request.messages if m.role == "user"), "")
            return {"text": json.dumps(self.controller(stage, prompt)), "usage": {"prompt_tokens": 100, "completion_tokens": 20}}
        return {**self.worker(request.messages), "usage": {"prompt_tokens": 50, "completion_tokens": 10}}

    def reply_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The same answer for an OpenAI request body (for the fake server's responder hook)."""
        messages = body.get("messages") or []
        stage = stage_of(messages)
        if stage is not None:
            prompt = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
            return {"text": json.dumps(self.controller(stage, prompt))}
        return self.worker(messages)
