"""Benjy tells the truth (issue 18): the person's check, the gate, facts over the model's judgement."""

from __future__ import annotations

from tests.engines.benjy_helpers import ans, cfg, failed, passed, queue, run, state, types
from vance_cli.engines.benjy.effects import DoInput, Say, SetStatus
from vance_cli.engines.benjy.inbound import inbound
from vance_cli.engines.benjy.render import evaluate_prompt
from vance_cli.engines.benjy.routing import invalid_route
from vance_cli.engines.benjy.state import InFlight

# --- 1. the person's check always runs ------------------------------------------------------------


def test_a_reply_on_an_analysis_item_goes_to_the_check_when_a_check_command_is_set():
    s = state(items=1, task_type="analysis")
    s.inFlight = InFlight(child="c1", item=1, attempt=1, recipe="benjy-do-coding")
    reply = {"id": "r", "kind": "child", "sender": "c1", "content": "", "meta": {"kind": "reply", "message": "done"}}
    n = inbound(s, reply, __import__("tests.engines.benjy_helpers", fromlist=["ctx"]).ctx()).state
    assert types(n) == ["CHECK #1", "EVALUATE #1", "CLOSE #1"]


def test_the_done_gate_runs_the_check_once_more_and_a_failure_is_not_done():
    s = queue(state(items=1), ("DONE",))
    s.items[0].status = "done"
    out = run(s, failed(output="ModuleNotFoundError: No module named 'fizzbuzz'\n"))
    n = out.state
    assert n.outcome is None and not [e for e in out.of(SetStatus) if e.status == "DONE"]
    assert not [e for e in out.of(Say) if e.kind == "synthesis"]
    assert n.counters.checks == 1 and n.lastCheck is not None and not n.lastCheck.passed and n.lastCheck.item is None
    assert types(n) == ["ROUTE"] and n.queue[0].payload["trigger"] == "final_check_failed"
    assert "No module named 'fizzbuzz'" in n.queue[0].payload["error"]
    assert n.counters.reflectNo == 1  # bounded by the convergence cap


def test_the_done_gate_with_a_passing_check_is_done():
    s = queue(state(items=1), ("DONE",))
    s.items[0].status = "done"
    out = run(s, passed())
    assert out.state.outcome == "done" and out.state.lastCheck.passed
    assert [e.status for e in out.of(SetStatus)] == ["DONE"]


def test_a_final_check_failing_again_and_again_ends_in_a_checkpoint_question():
    c = cfg(maxReflectNo=2, route=False)
    s = queue(state(items=1), ("DONE",))
    s.items[0].status = "done"
    n = run(s, failed(), c).state
    assert types(n) == ["ROUTE"]
    n = run(n, None, c).state  # the mechanical route: one item to make the check pass
    assert n.items[-1].title == "Make the check `make test` pass" and types(n) == ["DO #2"]
    n.items[1].status = "done"
    queue(n, ("DONE",))
    out = run(n, failed(), c)
    assert out.state.pendingQuestion.reason == "convergence" and out.state.outcome is None
    assert "final check" in out.state.pendingQuestion.text


# --- 2. a finished run reaches the gate -------------------------------------------------------------


def test_every_item_closed_goes_to_reflect_not_route():
    s = queue(state(items=2), ("CLOSE", 2))
    s.items[0].status = "done"
    assert types(run(s).state) == ["REFLECT"]


def test_a_split_without_items_is_an_invalid_route_answer():
    assert "needs the new smaller items" in invalid_route({"op": "split", "items": [], "reason": "x"})
    assert invalid_route({"op": "split", "reason": "x"}) is not None
    assert invalid_route({"op": "revise", "item": 1, "items": [{"title": " "}], "reason": "x"}) is not None
    assert invalid_route({"op": "split", "items": [{"title": "a"}], "reason": "x"}) is None
    assert invalid_route({"op": "retry", "reason": "x"}) is None


def test_a_split_without_items_never_counts_toward_route_stuck():
    s = state(items=2)
    s.items[0].status = "done"
    decision = {"op": "split", "items": [], "reason": "split without items"}
    for _ in range(4):
        queue(s, ("ROUTE", None, {"trigger": "queue_empty", "open": [2]}))
        out = run(s, ans(decision))
        s = out.state
        assert s.outcome is None and s.counters.routeRecent == []
        assert "invalid answer, not a decision" in out.effects[0].text
    # the mechanical policy decided instead: the open item is retried
    assert "DO #2" in types(s)


# --- 3. EVALUATE judges what the check cannot; no file changed = not done ---------------------------


def _reply(meta):
    return {"id": "r", "kind": "child", "sender": "c1", "content": "", "meta": {"kind": "reply", "message": "Task done!", **meta}}


def test_a_coding_worker_that_changed_no_file_has_not_done_its_item():
    from tests.engines.benjy_helpers import ctx

    s = state(items=1)
    s.items[0].attempts = 1
    s.inFlight = InFlight(child="c1", item=1, attempt=1, recipe="benjy-do-coding", before="abc")
    out = inbound(s, _reply({"workspaceChanged": False}), ctx())
    n = out.state
    assert types(n) == ["DO #1"] and "changed no file" in n.queue[0].payload["error"]
    assert "no file changed" in out.effects[0].text
    # at the attempt cap it is a branch, never a pass
    s.items[0].attempts = 3
    assert [t.payload.get("trigger") for t in inbound(s, _reply({"workspaceChanged": False}), ctx()).state.queue] == ["item_cap"]
    # a worker that changed a file goes on to the check; an analysis item may change nothing
    assert types(inbound(s, _reply({"workspaceChanged": True}), ctx()).state) == ["CHECK #1", "EVALUATE #1", "CLOSE #1"]
    s.taskType = "analysis"
    assert types(inbound(s, _reply({"workspaceChanged": False}), ctx()).state) == ["CHECK #1", "EVALUATE #1", "CLOSE #1"]


def test_do_records_the_workspace_fingerprint_with_the_worker():
    s = queue(state(items=1), ("DO", 1))
    n = run(s, DoInput("c9", "fp1")).state
    assert n.inFlight.child == "c9" and n.inFlight.before == "fp1"


def test_evaluate_after_a_passing_check_judges_only_what_the_check_cannot():
    s = queue(state(items=1), ("CHECK", 1), ("EVALUATE", 1))
    n = run(s, passed()).state
    prompt = evaluate_prompt(n, n.items[0])
    assert "Judge only what the check cannot show" in prompt
    assert "Judge only" not in evaluate_prompt(state(items=1), state(items=1).items[0])


# --- 5. facts outrank the model -------------------------------------------------------------------


def test_reflect_yes_while_the_last_check_failed_is_partially():
    from vance_cli.engines.benjy.render import reflect_prompt

    s = queue(state(items=1), ("CHECK", 1))
    n = run(s, failed()).state
    assert "Last check (item #1): FAILED — check `make test`: exit 1" in reflect_prompt(n)  # the gate sees the fact
    n.items[0].status = "done"
    queue(n, ("REFLECT",))
    out = run(n, ans({"achieved": "yes", "gaps": []}))
    m = out.state
    assert m.outcome is None and types(m) == ["ROUTE"] and m.counters.reflectNo == 1
    assert m.queue[0].payload["achieved"] == "partially"
    assert any("check `make test`: exit 1" in g for g in m.queue[0].payload["gaps"])
    assert "yes overruled by the facts" in out.effects[0].text


def test_reflect_yes_with_every_item_failed_ends_in_a_question_not_done():
    c = cfg(maxReflectNo=2)
    s = state(items=1)
    s.items[0].status, s.items[0].attempts, s.items[0].lastError = "failed", 3, "check failed 3 times"
    n = s
    for _ in range(2):
        queue(n, ("REFLECT",))
        out = run(n, ans({"achieved": "yes", "gaps": []}), c)
        n = out.state
        assert n.outcome is None and n.criteria[0].status == "open"
    assert n.pendingQuestion.reason == "convergence" and "item #1" in n.pendingQuestion.text
    assert [e.status for e in out.of(SetStatus)] == ["BLOCKED"]


def test_reflect_yes_after_a_split_passes_the_criteria_of_the_replacing_items():
    s = queue(state(items=3), ("REFLECT",))
    s.items[0].status = "dropped"  # replaced by the split into items 2 and 3
    s.items[1].status = s.items[2].status = "done"
    n = run(s, ans({"achieved": "yes", "gaps": []})).state
    assert n.criteria[0].status == "pass" and types(n) == ["DONE"]


def test_after_a_reset_the_old_plans_failed_items_do_not_keep_the_run_from_done():
    s = state(items=2)
    s.items[0].status, s.items[0].attempts = "failed", 3
    s.todoFrom = 1  # a reset: item 2 is the new plan's, on the same criterion
    s.items[1].status = "done"
    queue(s, ("REFLECT",))
    n = run(s, ans({"achieved": "yes", "gaps": []})).state
    assert n.criteria[0].status == "pass" and types(n) == ["DONE"]


def test_a_split_of_a_failed_item_replaces_it():
    s = state(items=1)
    s.items[0].status, s.items[0].attempts = "failed", 3
    queue(s, ("ROUTE", None, {"trigger": "reflect_gaps", "gaps": ["item #1 failed"]}))
    n = run(s, ans({"op": "split", "item": 1, "items": [{"title": "smaller a"}], "reason": "smaller"})).state
    assert [i.status for i in n.items] == ["dropped", "open"] and types(n) == ["DO #2"]


# --- 6. revise is not progress ----------------------------------------------------------------------


def test_a_route_revise_is_not_progress():
    s = state(items=1)
    s.items[0].attempts = 1
    s.counters.stagnation = 4
    queue(s, ("ROUTE", 1, {"trigger": "check_failed", "error": "boom"}))
    n = run(s, ans({"op": "revise", "item": 1, "items": [{"title": "reworded"}], "reason": "clearer"})).state
    assert n.items[0].title == "reworded" and n.counters.stagnation == 5


def test_a_route_that_keeps_rewording_one_item_trips_the_stagnation_net():
    from tests.engines.benjy_helpers import ctx

    c = cfg(maxStagnation=8, escalation=False, maxItemAttempts=10)
    s = queue(state(items=1), ("DO", 1))
    for n in range(4):  # DO → reply → CHECK failed → ROUTE revise, again and again
        s = run(s, DoInput(f"c{n}"), c).state
        s = inbound(s, {"id": "r", "kind": "child", "sender": f"c{n}", "content": "",
                        "meta": {"kind": "reply", "message": "did it"}}, ctx(c)).state
        s = run(s, failed(), c).state
        if s.pendingQuestion is not None:
            break
        assert types(s)[0] == "ROUTE #1"
        s = run(s, ans({"op": "revise", "item": 1, "items": [{"title": f"reworded {n}"}], "reason": "clearer"}), c).state
        if s.pendingQuestion is not None:
            break
    assert s.outcome is None and s.pendingQuestion is not None and s.pendingQuestion.reason == "stagnation"
    assert s.items[0].title == "reworded 1"  # 2 rewordings, then the net (8 tasks without progress)
