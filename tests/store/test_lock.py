"""One writer per process: a second holder gets ProcessLocked naming the first; locks die with their holder."""

from __future__ import annotations

import signal

import pytest

from tests.store.helpers import finish, spawn, wait_for_line
from vance_cli.errors import ProcessLocked
from vance_cli.store.files import ProcessStore
from vance_cli.store.lock import describe_holder, read_holder

HOLDER = """
import sys
from vance_cli.store.files import ProcessStore
store = ProcessStore(sys.argv[-1])
with store.lock("p1"):
    print("locked", flush=True)
    sys.stdin.readline()  # hold until the test closes stdin
print("released", flush=True)
"""


@pytest.fixture
def store(tmp_path) -> ProcessStore:
    return ProcessStore(tmp_path / "processes")


def test_a_second_process_is_refused_with_the_holder_named(store):
    child = spawn(HOLDER, "--flag", str(store.root))
    try:
        wait_for_line(child, "locked")
        with pytest.raises(ProcessLocked) as info, store.lock("p1"):
            pytest.fail("the lock was granted twice")
        message = info.value.message
        assert message.startswith(f"process p1 is in use by vance pid {child.pid} (")
        assert "--flag" in message
        assert " since " in message
        assert info.value.hint == "wait for it to finish or stop it"
        assert store.holder("p1")["pid"] == child.pid

        child.stdin.close()
        wait_for_line(child, "released")
        assert child.wait(timeout=10) == 0
    finally:
        finish(child)

    assert store.holder("p1") is None
    with store.lock("p1"):
        assert store.holder("p1")["pid"] != child.pid


def test_a_killed_holder_leaves_no_lock_behind(store):
    child = spawn(HOLDER, str(store.root))
    try:
        wait_for_line(child, "locked")
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        finish(child)
    # The stale file still names the dead holder, but neither the kernel nor holder() believes it.
    assert read_holder(store.lock_path("p1"))["pid"] == child.pid
    assert store.holder("p1") is None
    with store.lock("p1"):
        pass


def test_the_lock_is_exclusive_within_one_process_too(store):
    with (
        store.lock("p1"),
        pytest.raises(ProcessLocked, match="process p1 is in use by vance pid"),
        store.lock("p1"),
    ):
        pass
    with store.lock("p1"):  # free again after the block
        pass


def test_the_lock_is_released_when_the_block_raises(store):
    with pytest.raises(RuntimeError), store.lock("p1"):
        raise RuntimeError("engine crashed")
    assert read_holder(store.lock_path("p1")) is None
    with store.lock("p1"):
        pass


def test_locks_of_different_processes_are_independent(store):
    with store.lock("p1"), store.lock("p2"):
        assert store.lock_path("p1").name == "p1.lock"
        assert store.holder("p2") is not None


def test_describe_holder_without_info_still_reads_well():
    assert describe_holder(None) == "another vance (holder unknown)"
    text = describe_holder(
        {
            "pid": 7,
            "argv": ["/usr/bin/vance", "chat"],
            "since": "2026-01-01T10:00:00+00:00",
            "host": "elsewhere",
        }
    )
    assert (
        text
        == "vance pid 7 (vance chat) on host elsewhere since 2026-01-01T10:00:00+00:00"
    )
