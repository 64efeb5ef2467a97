"""Issue 18 review (repros by the reviewer, kept): the repeat rule leaves no unanswered call, and a side-effecting poll is not a loop."""
from tests.engines.harness import call, recipe, respond, run_engine
from vance_cli.engines.ford_repeat import REPEAT_KIND
from vance_cli.store.process import InboxItem


def _orphans(messages):
    """Tool call ids of assistant messages with no tool message answering them."""
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    return [c.id for m in messages if m.role == "assistant" for c in (m.tool_calls or []) if c.id not in answered]


def test_a_repeat_that_ends_the_turn_leaves_no_unanswered_tool_call_on_the_wire(tmp_path):
    # The reply that spends the budget carries a second call: the turn ends at the repeat and the
    # second call never gets a result. The next turn's request then has an assistant tool_call
    # with no tool message, which OpenAI ("tool_calls must be followed by tool messages
    # responding to each tool_call_id") and Anthropic (tool_use without tool_result) reject with 400.
    snap = recipe(maxValidationCorrections=0)
    first = {"tool_calls": [call("file_list", {}, id="a")]}
    again = {"tool_calls": [call("file_list", {}, id="b"), call("file_read", {"path": "x.txt"}, id="c")]}
    run = run_engine(tmp_path, [first, again], recipe_snapshot=snap)
    assert run.process.status_reason == "the model repeated the same call (file_list)"
    # the person writes again: the next turn's request
    process = run.reloaded()
    process.inbox.append(InboxItem(content="and now?"))
    run.store.save(process)
    run2 = run_engine(tmp_path, [respond("ok")], process=run.store.load(process.id), store=run.store)
    sent = run2.model.requests[0].messages
    assert _orphans(sent) == [], f"unanswered tool calls sent to the provider: {_orphans(sent)}"


def test_polling_a_side_effecting_command_is_not_a_loop(tmp_path):
    # exec_run runs the command again each time: the same output is not "the same call with the
    # same result, nothing changed" (the command itself changed the counter file; time passed; a
    # background job may be coming up). Here the 5th run says ready; the turn is cut at the 4th.
    snap = recipe(tools={"allowed": ["respond", "exec_run"]})
    poll = "n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; [ $n -ge 5 ] && echo ready || echo waiting"
    c = {"tool_calls": [call("exec_run", {"command": poll})]}
    run = run_engine(tmp_path, [c, c, c, c, c, respond("the service is ready")], recipe_snapshot=snap)
    kinds = [m.meta.get("kind") for m in run.process.history if m.role == "tool"]
    assert REPEAT_KIND not in kinds, run.transcript()
    assert run.messages == ["the service is ready"], run.messages
