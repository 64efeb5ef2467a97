"""The same call with the same result again is a loop, told to the model and bounded (issue 18).

A 0.5B model called ``process_steer {"id": "8"}`` eleven times in one turn, the same error each
time, until maxToolIterations. Ford now says so in the result, counts a correction, and ends the
turn with a diagnosis once the budget is spent.
"""
from tests.engines.harness import call, recipe, respond, run_engine
from vance_cli.engines.ford_repeat import REPEAT_KIND, is_repeat
from vance_cli.messages import Message, ToolCall
from vance_cli.store.process import Status


def _tool_results(run):
    return [m for m in run.process.history if m.role == "tool"]


def test_a_looping_call_ends_the_turn_before_the_iteration_cap(tmp_path):
    loop = {"tool_calls": [call("file_read", {"path": "missing.txt"})]}
    run = run_engine(tmp_path, [loop] * 12, recipe_snapshot=recipe(maxToolIterations=12, maxValidationCorrections=2))
    # 1 first call + 2 corrected repeats + the repeat that spends the budget
    assert len(run.model.requests) == 4
    results = _tool_results(run)
    assert results[0].meta.get("kind") is None and "REPEATED CALL" not in results[0].content
    assert all(r.meta.get("kind") == REPEAT_KIND and "REPEATED CALL: you already called `file_read`" in r.content for r in results[1:])
    assert run.process.status == Status.BLOCKED
    assert run.process.status_reason == "the model repeated the same call (file_read)"
    assert 'file_read {"path": "missing.txt"}' in run.messages[0]
    # what the model saw: the tool's own result first, the note after it
    assert results[1].content.startswith(results[0].content)
    on_disk = run.reloaded()
    assert [m.model_dump() for m in on_disk.history] == [m.model_dump() for m in run.process.history]


def test_the_note_lets_the_model_recover_and_answer(tmp_path):
    loop = {"tool_calls": [call("file_list", {})]}
    run = run_engine(tmp_path, [loop, loop, respond("The folder is empty.")])
    assert run.messages == ["The folder is empty."]
    assert run.process.status == Status.BLOCKED and run.process.status_reason == "awaiting user input"
    assert [r.meta.get("kind") for r in _tool_results(run)][:2] == [None, REPEAT_KIND]


def test_reading_again_after_a_write_is_not_a_loop(tmp_path):
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "ws" / "a.txt").write_text("one\n")
    snap = recipe(tools={"allowed": ["respond", "file_read", "file_write"]})
    read = {"tool_calls": [call("file_read", {"path": "a.txt"})]}
    write = {"tool_calls": [call("file_write", {"path": "a.txt", "content": "one\n"})]}
    run = run_engine(tmp_path, [read, write, read, respond("same")], recipe_snapshot=snap)
    assert run.messages == ["same"]
    assert all(r.meta.get("kind") != REPEAT_KIND for r in _tool_results(run))


def test_the_same_call_with_a_new_result_is_not_a_repeat():
    c1 = ToolCall(id="a", name="process_status", arguments='{"id": "8"}')
    c2 = ToolCall(id="b", name="process_status", arguments='{ "id":"8" }')
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[c1]),
        Message(role="tool", tool_call_id="a", name="process_status", content="RUNNING, 1 of 3 done", meta={"ok": True}),
        Message(role="assistant", tool_calls=[c2]),
    ]
    assert not is_repeat(history, c2, "RUNNING, 2 of 3 done", set())
    assert is_repeat(history, c2, "RUNNING, 1 of 3 done", set())  # key order and spacing aside
    # a call of the previous turn does not count
    assert not is_repeat([*history[:3], Message(role="user", content="again"), history[3]], c2, "RUNNING, 1 of 3 done", set())


def test_different_arguments_are_not_a_repeat(tmp_path):
    (tmp_path / "ws").mkdir(exist_ok=True)
    a = {"tool_calls": [call("file_read", {"path": "x.txt"})]}
    b = {"tool_calls": [call("file_read", {"path": "y.txt"})]}
    run = run_engine(tmp_path, [a, b, respond("neither exists")])
    assert run.messages == ["neither exists"]
    assert all(r.meta.get("kind") != REPEAT_KIND for r in _tool_results(run))


def test_a_correction_in_between_resets_the_count():
    c1 = ToolCall(id="a", name="file_read", arguments='{"path": "big.txt"}')
    c2 = ToolCall(id="b", name="file_read", arguments='{"path": "big.txt"}')
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[c1]),
        Message(role="tool", tool_call_id="a", name="file_read", content="x" * 800, meta={"ok": True}),
        Message(role="system", content="VALIDATION CHECK: relay it", meta={"kind": "correction"}),
        Message(role="assistant", tool_calls=[c2]),
    ]
    assert not is_repeat(history, c2, "x" * 800, set())
    assert is_repeat([m for m in history if m.meta.get("kind") != "correction"], c2, "x" * 800, set())
