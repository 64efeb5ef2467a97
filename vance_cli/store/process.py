"""The persisted process: its fields, its status enum and the one guarded transition table.

The tree fields (``children``, ``worker``, ``delivery``, ``deliveries``) are the scheduler's
bookkeeping (runtime/scheduler.py says how a child's end reaches its parent exactly once). Files
of schema_version 1 kept them as keys of ``engine_params``; they are moved out on load.
"""

from __future__ import annotations

import secrets
import time
from enum import Enum
from typing import Annotated, Any

from pydantic import BaseModel, Field, PrivateAttr, model_validator

from vance_cli.errors import InvalidTransition
from vance_cli.messages import Message, Usage

# 2: the tree fields left engine_params (children, worker, delivery, deliveries).
# 3: a long history starts in a log beside the file ("history_log", store/history_log.py).
SCHEMA_VERSION = 3
# A file that names no log has nothing a vance of schema 2 cannot read: it is written as 2, so that
# vance still opens short chats (store/files.py ProcessStore._write).
SCHEMA_VERSION_NO_LOG = 2
_TREE_KEYS = ("children", "worker", "delivery", "deliveries")

# Seconds since the epoch, finite and below ~year 5000: a hand-edited or hostile "updated": 1e300
# is an unreadable file (reported per file), not a crash of every `vance ps`.
MAX_TIMESTAMP = 1e11
Timestamp = Annotated[float, Field(ge=0, le=MAX_TIMESTAMP, allow_inf_nan=False)]


class Status(str, Enum):
    READY = "READY"  # runnable: the runtime may start a turn
    RUNNING = "RUNNING"  # a turn is in progress (a crash leaves it here; resume treats it as READY)
    IDLE = "IDLE"  # waiting on a child process
    BLOCKED = "BLOCKED"  # waiting on a person
    DONE = "DONE"  # finished for good
    FAILED = "FAILED"  # stopped by an error; resumable by hand
    SUSPENDED = "SUSPENDED"  # paused by the user


# READY/BLOCKED → DONE: a parent closes a worker once its reply is delivered (runtime.scheduler).
_ALLOWED: dict[Status, frozenset[Status]] = {
    Status.READY: frozenset({Status.RUNNING, Status.SUSPENDED, Status.FAILED, Status.BLOCKED, Status.DONE}),
    Status.RUNNING: frozenset(
        {Status.READY, Status.IDLE, Status.BLOCKED, Status.DONE, Status.FAILED, Status.SUSPENDED}
    ),
    Status.IDLE: frozenset({Status.READY, Status.RUNNING, Status.FAILED, Status.SUSPENDED}),
    Status.BLOCKED: frozenset({Status.READY, Status.RUNNING, Status.SUSPENDED, Status.FAILED, Status.DONE}),
    Status.DONE: frozenset(),
    Status.FAILED: frozenset({Status.READY, Status.RUNNING}),
    Status.SUSPENDED: frozenset({Status.READY, Status.RUNNING}),
}


def can_transition(old: Status, new: Status) -> bool:
    return new == old or new in _ALLOWED[old]


class Todo(BaseModel):
    id: str
    text: str
    status: str = "open"  # open | in_progress | done | failed


class InboxItem(BaseModel):
    id: str = Field(default_factory=lambda: secrets.token_hex(4))
    kind: str = "user"  # user | event | steer | child (a worker's reply or end, from the scheduler)
    sender: str | None = None
    content: str
    meta: dict[str, Any] = Field(default_factory=dict)  # structured facts for the engine (never sent to a model)
    created: Timestamp = Field(default_factory=time.time)


class Delivery(BaseModel):
    """A child's end, delivered into its parent's inbox (the child is then closed or kept open)."""

    to: str  # the parent's id
    kind: str  # reply | ended (runtime/scheduler.py: child_outcome)
    at: Timestamp


def new_process_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class Process(BaseModel):
    schema_version: int = SCHEMA_VERSION
    id: str = Field(default_factory=new_process_id)
    engine: str
    recipe: dict[str, Any] = Field(default_factory=dict)  # snapshot of the recipe at start
    recipe_name: str | None = None
    model: str | None = None
    status: Status = Status.READY
    parent: str | None = None
    title: str | None = None
    workspace: str | None = None
    history: list[Message] = Field(default_factory=list)
    engine_params: dict[str, Any] = Field(default_factory=dict)
    todos: list[Todo] = Field(default_factory=list)
    inbox: list[InboxItem] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    created: Timestamp = Field(default_factory=time.time)
    updated: Timestamp = Field(default_factory=time.time)
    status_reason: str | None = None
    # The tree (runtime/scheduler.py). A parent lists its undelivered children, written before a
    # child's file exists; a delivered child drops out at the parent's next save.
    children: list[str] = Field(default_factory=list)
    # Spawned by a parent that waits on it (Benjy): closed once its end is taken in.
    worker: bool = False
    # This child's last end, delivered to its parent; None while it has not settled since.
    delivery: Delivery | None = None
    deliveries: int = Field(default=0, ge=0)  # how many times its end was delivered
    # Where the first messages of the history are on disk (store/history_log.py HistoryLog), as
    # the store last read or saved them; None: all in the process file. Set by store/files.py.
    _history_log: Any = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _tree_out_of_engine_params(cls, data: Any) -> Any:
        """A schema_version 1 file: its tree keys move from engine_params to their fields."""
        if not isinstance(data, dict) or not isinstance(data.get("schema_version", 1), int):
            return data
        params = data.get("engine_params")
        if data.get("schema_version", 1) >= 2 or not isinstance(params, dict):
            return data
        data = {**data, "engine_params": dict(params), "schema_version": SCHEMA_VERSION}
        for key in _TREE_KEYS:
            if key in params:
                data.setdefault(key, data["engine_params"].pop(key))
        return data

    def transition(self, new: Status, reason: str | None = None) -> Status:
        """The one place status changes; returns the old status. Raises InvalidTransition."""
        old = self.status
        if not can_transition(old, new):
            raise InvalidTransition(
                f"process {self.id}: cannot go from {old.value} to {new.value}",
                hint="this is a bug in the engine or a hand-edited process file",
            )
        self.status = new
        self.status_reason = reason
        return old

    def mark_running(self) -> Status:
        return self.transition(Status.RUNNING)

    def mark_blocked(self, reason: str | None = None) -> Status:
        return self.transition(Status.BLOCKED, reason)

    def mark_ready(self, reason: str | None = None) -> Status:
        return self.transition(Status.READY, reason)

    def mark_done(self, reason: str | None = None) -> Status:
        return self.transition(Status.DONE, reason)

    def mark_failed(self, reason: str | None = None) -> Status:
        return self.transition(Status.FAILED, reason)
