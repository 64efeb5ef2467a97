"""The one guarded transition table of the process status."""

from __future__ import annotations

import pytest

from vance_cli.errors import InvalidTransition
from vance_cli.store.process import Process, Status, can_transition


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (Status.READY, Status.RUNNING),
        (Status.RUNNING, Status.BLOCKED),
        (Status.RUNNING, Status.READY),
        (Status.RUNNING, Status.DONE),
        (Status.RUNNING, Status.FAILED),
        (Status.RUNNING, Status.SUSPENDED),
        (Status.RUNNING, Status.IDLE),
        (Status.BLOCKED, Status.RUNNING),
        (Status.IDLE, Status.READY),
        (Status.FAILED, Status.RUNNING),
        (Status.SUSPENDED, Status.RUNNING),
        # a parent closes a worker after its reply (or question) is delivered
        (Status.READY, Status.DONE),
        (Status.BLOCKED, Status.DONE),
    ],
)
def test_allowed_transitions(old, new):
    assert can_transition(old, new)
    p = Process(engine="ford", status=old)
    assert p.transition(new) == old and p.status == new


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (Status.DONE, Status.READY),
        (Status.DONE, Status.RUNNING),
        (Status.FAILED, Status.DONE),
        (Status.SUSPENDED, Status.BLOCKED),
        (Status.IDLE, Status.BLOCKED),
    ],
)
def test_forbidden_transitions_raise_naming_both_states(old, new):
    assert not can_transition(old, new)
    p = Process(engine="ford", status=old)
    with pytest.raises(InvalidTransition, match=f"from {old.value} to {new.value}"):
        p.transition(new)
    assert p.status == old


def test_done_is_terminal():
    assert not any(can_transition(Status.DONE, s) for s in Status if s != Status.DONE)


def test_mark_helpers_pass_through_the_table():
    p = Process(engine="ford")
    p.mark_running()
    p.mark_blocked("waiting")
    assert (p.status, p.status_reason) == (Status.BLOCKED, "waiting")
    p.transition(Status.SUSPENDED)
    with pytest.raises(InvalidTransition):
        p.mark_blocked("again")
