"""Benjy's pure handlers, one task type at a time; inbound translation; chain templates."""

from __future__ import annotations

import pytest

from tests.engines.benjy_helpers import NOW, ans, cfg, ctx, failed, passed, queue, run, state, types
from vance_cli.engines.benjy.config import chain_for
from vance_cli.engines.benjy.effects import Dialog, Journal, Say, SetStatus, Spawn
from vance_cli.engines.benjy.inbound import inbound
from vance_cli.engines.benjy.state import InFlight, PendingQuestion, encode

# --- chain templates --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_type", "check", "evaluate", "chain"),
    [
        # the person's check runs whatever task type interpret picked (issue 18)
        ("info", True, True, ("DO", "CHECK", "CLOSE")),
        ("coding", True, True, ("DO", "CHECK", "EVALUATE", "CLOSE")),
        ("planning", True, True, ("DO", "CHECK", "EVALUATE", "CLOSE")),
        ("analysis", True, True, ("DO", "CHECK", "EVALUATE", "CLOSE")),
        ("info", False, True, ("DO", "CLOSE")),
        ("analysis", False, True, ("DO", "EVALUATE", "CLOSE")),
        ("coding", False, True, ("DO", "EVALUATE", "CLOSE")),  # no check command: the stage falls out
        ("coding", True, False, ("DO", "CHECK", "CLOSE")),
        ("coding", False, False, ("DO", "CLOSE")),
        ("planning", True, False, ("DO", "CHECK", "CLOSE")),
        ("planning", False, False, ("DO", "CLOSE")),
    ],
)
def test_chain_templates_drop_disabled_stages(task_type, check, evaluate, chain):
    assert chain_for(task_type, check=check, evaluate=evaluate) == chain
    assert cfg(check="x" if check else None, evaluate=evaluate).chain(task_type) == chain


# --- purity -------------------------------------------------------------------------------------------


def test_a_step_never_modifies_its_input_state():
    s = queue(state(items=2), ("CHECK", 1), ("EVALUATE", 1), ("CLOSE", 1))
    before = encode(s)
    out = run(s, failed())
    assert encode(s) == before
    assert out.state is not s and out.state.items[0] is not s.items[0]
    assert out.state.items[1] is s.items[1]  # untouched items are shared, not copied


def test_a_step_refuses_a_task_that_is_not_the_head():
    s = queue(state(items=1), ("DO", 1), ("CLOSE", 1))
    from vance_cli.engines.benjy.handlers import step

    with pytest.raises(ValueError, match="not the head"):
        step(s, s.queue[1], None, ctx())


# --- inbound (spec §3 table) ------------------------------------------------------------------------


def _inbox(content="hello", kind="user", sender=None, meta=None, id="m1"):
    return {"id": id, "kind": kind, "sender": sender, "content": content, "meta": meta or {}}


def test_the_first_message_is_the_goal_and_queues_interpret():
    from vance_cli.engines.benjy.state import BenjyState

    out = inbound(BenjyState(), _inbox("build the thing"), ctx())
    assert out.state.goal == "build the thing" and types(out.state) == ["INTERPRET"]
    assert out.of(Dialog)[0].text == "build the thing"  # the dialog keeps the raw wording
    assert "**GOAL:**" in out.of(Journal)[0].text


def test_a_message_during_the_run_becomes_a_route_task_at_the_head():
    s = queue(state(items=2), ("DO", 2))
    out = inbound(s, _inbox("also handle the empty case"), ctx())
    head = out.state.queue[0]
    assert head.type == "ROUTE" and head.payload == {"trigger": "message", "text": "also handle the empty case"}
    assert types(out.state)[1:] == ["DO #2"]


def test_an_answer_clears_the_question_grants_and_routes():
    s = queue(state(items=1), ("DO", 1))
    s.pendingQuestion = PendingQuestion(text="no progress; continue?", reason="stagnation")
    s.counters.stagnation, s.counters.reflectNo, s.counters.phaseElapsed = 15, 2, 900.0
    s.counters.controllerTokens, s.counters.grantBaseline = 5000, 100
    out = inbound(s, _inbox("yes, go on"), ctx(now=NOW + 50))
    n = out.state
    assert n.pendingQuestion is None
    assert (n.counters.stagnation, n.counters.reflectNo, n.counters.phaseElapsed) == (0, 0, 0.0)
    assert n.counters.grantBaseline == 100  # only a token checkpoint moves the baseline
    assert n.counters.controllerTokens == 5000  # the truth is never reset
    assert n.queue[0].payload == {"trigger": "answer", "question": "no progress; continue?", "answer": "yes, go on"}


def test_an_answer_to_a_token_checkpoint_moves_the_baseline_only():
    s = queue(state(items=1), ("DO", 1))
    s.pendingQuestion = PendingQuestion(text="budget", reason="tokens")
    s.counters.controllerTokens, s.counters.grantBaseline = 5000, 100
    n = inbound(s, _inbox("ok"), ctx()).state
    assert (n.counters.grantBaseline, n.counters.controllerTokens) == (5000, 5000)


def test_stop_as_the_answer_leaves_the_run_blocked():
    s = state(items=1)
    s.pendingQuestion = PendingQuestion(text="continue?", reason="wallclock")
    out = inbound(s, _inbox(" Stop "), ctx())
    assert out.state.pendingQuestion is not None and out.state.queue == []
    assert out.of(SetStatus)[0].status == "BLOCKED"


def test_the_in_flight_workers_reply_queues_the_rest_of_the_chain():
    s = queue(state(items=2), ("DO", 2))
    s.inFlight = InFlight(child="w1", item=1, attempt=1, recipe="benjy-do-coding")
    meta = {"kind": "reply", "message": "wrote a.py", "status": "READY", "tokens": 70}
    out = inbound(s, _inbox("[worker replied]", kind="child", sender="w1", meta=meta), ctx())
    n = out.state
    assert n.inFlight is None and types(n) == ["CHECK #1", "EVALUATE #1", "CLOSE #1", "DO #2"]
    assert n.items[0].summary == "wrote a.py" and n.counters.workerTokens == 70


def test_a_worker_that_ended_without_a_reply_routes():
    s = queue(state(items=1))
    s.inFlight = InFlight(child="w1", item=1, attempt=1, recipe="benjy-do-coding")
    meta = {"kind": "ended", "status": "BLOCKED", "reason": "maxToolIterations reached"}
    n = inbound(s, _inbox("x", kind="child", sender="w1", meta=meta), ctx()).state
    assert n.inFlight is None
    assert n.queue[0].type == "ROUTE" and n.queue[0].payload["trigger"] == "worker_ended"
    assert "maxToolIterations" in n.queue[0].payload["error"]


def test_everything_else_is_ignored_and_journaled():
    s = queue(state(items=1), ("DO", 1))
    s.inFlight = InFlight(child="w1", item=1, attempt=1, recipe="benjy-do-coding")
    for item in (_inbox("x", kind="child", sender="someone-else", meta={"kind": "reply", "message": "hi"}),
                 _inbox("tool result", kind="event")):
        out = inbound(s, item, ctx())
        assert encode(out.state)["queue"] == encode(s)["queue"] and out.state.inFlight == s.inFlight
        assert "IGNORED" in out.of(Journal)[0].text


# --- INTERPRET ------------------------------------------------------------------------------------------


def test_interpret_sets_task_type_criteria_and_the_first_items():
    s = queue(state(items=0, criteria=0), ("INTERPRET",))
    data = {"taskType": "coding", "criteria": [{"text": "tests pass", "sourceRef": "req.md"}, {"text": "documented"}],
            "items": [{"title": "write f", "description": "in f.py", "criteria": [1]}, {"title": "document f", "criteria": [2]}]}
    out = run(s, ans(data))
    n = out.state
    assert n.taskType == "coding" and [c.text for c in n.criteria] == ["tests pass", "documented"]
    assert n.criteria[0].sourceRef == "req.md"
    assert [(i.title, i.criteria) for i in n.items] == [("write f", [1]), ("document f", [2])]
    assert types(n) == ["DO #1", "DO #2"]
    assert n.counters.controllerTokens == 100 and n.counters.controllerCalls == 1


def test_interpret_truncates_the_batch_to_max_initial_items_and_says_so():
    s = queue(state(criteria=0), ("INTERPRET",))
    data = {"taskType": "info", "criteria": [], "items": [{"title": f"t{n}"} for n in range(7)]}
    out = run(s, ans(data), cfg(maxInitialItems=3))
    assert len(out.state.items) == 3
    assert "TRUNCATED" in out.of(Journal)[0].text and "7 items" in out.of(Journal)[0].text
    uncapped = run(s, ans(data), cfg(maxInitialItems=0))  # < 1: explicitly no cap
    assert len(uncapped.state.items) == 7


def test_interpret_falls_back_to_an_allowed_task_type():
    s = queue(state(criteria=0), ("INTERPRET",))
    out = run(s, ans({"taskType": "coding", "criteria": [], "items": [{"title": "x"}]}), cfg(task_types=("info", "analysis")))
    assert out.state.taskType == "info"


# --- DO ------------------------------------------------------------------------------------------------


def test_do_records_the_worker_before_it_exists_and_waits():
    s = queue(state(items=2), ("DO", 1), ("DO", 2))
    out = run(s, "child-1")
    n = out.state
    assert n.inFlight == InFlight(child="child-1", item=1, attempt=1, escalated=False, recipe="benjy-do-coding")
    assert n.items[0].status == "in_progress" and n.items[0].attempts == 1
    spawn = out.of(Spawn)[0]
    assert (spawn.child, spawn.recipe) == ("child-1", "benjy-do-coding")
    assert out.of(SetStatus)[0].status == "IDLE"
    assert types(n) == ["DO #2"]


def test_the_workers_prompt_is_pristine_item_criteria_and_only_the_error():
    s = queue(state(items=1), ("DO", 1, {"error": "check failed: expected 2, got 3"}))
    s.items[0].attempts = 1
    s.items[0].summary = "FIRST WORKER'S OWN WORDS"
    prompt = run(s, "c2").of(Spawn)[0].prompt
    assert "Your item (#1): item 1" in prompt and "details 1" in prompt
    assert "criterion 1" in prompt
    assert "attempt 2 of 3" in prompt and "expected 2, got 3" in prompt
    assert "FIRST WORKER'S OWN WORDS" not in prompt  # never the previous worker's history


def test_do_on_a_capped_item_routes_instead_of_spawning():
    s = queue(state(items=1), ("DO", 1))
    s.items[0].attempts = 3
    out = run(s, "c")
    assert out.of(Spawn) == [] and out.state.inFlight is None
    assert out.state.queue[0].type == "ROUTE" and out.state.queue[0].payload["trigger"] == "item_cap"


def test_an_escalated_item_goes_to_the_escalation_recipe_with_one_more_attempt():
    s = queue(state(items=1), ("DO", 1))
    s.items[0].attempts, s.items[0].escalated = 3, True
    out = run(s, "c")
    assert out.of(Spawn)[0].recipe == "coding" and out.state.inFlight.escalated


# --- CHECK ----------------------------------------------------------------------------------------------


def test_check_passed_keeps_the_chain():
    s = queue(state(items=1), ("CHECK", 1), ("EVALUATE", 1), ("CLOSE", 1))
    n = run(s, passed()).state
    assert types(n) == ["EVALUATE #1", "CLOSE #1"] and n.counters.checks == 1
    assert n.items[0].evidence[-1].startswith("check `make test`: exit 0")


def test_check_failed_is_a_branch_with_the_output_as_error():
    s = queue(state(items=2), ("CHECK", 1), ("EVALUATE", 1), ("CLOSE", 1), ("DO", 2))
    out = run(s, failed())
    n = out.state
    assert types(n) == ["ROUTE #1", "DO #2"]
    assert n.queue[0].payload["trigger"] == "check_failed"
    assert "expected 2, got 3" in n.queue[0].payload["error"] and "exit 1" in n.queue[0].payload["error"]
    assert "expected 2, got 3" in n.items[0].lastError


# --- EVALUATE -------------------------------------------------------------------------------------------


def test_evaluate_pass_keeps_close_and_records_criteria():
    s = queue(state(items=1), ("EVALUATE", 1), ("CLOSE", 1))
    n = run(s, ans({"verdict": "pass", "reasons": ["ok"], "criteria": [{"id": 1, "status": "pass", "evidence": "seen"}]})).state
    assert types(n) == ["CLOSE #1"] and n.criteria[0].status == "pass" and n.criteria[0].evidence == "seen"


def test_evaluate_fail_is_a_mechanical_retry_without_route():
    s = queue(state(items=1), ("EVALUATE", 1), ("CLOSE", 1))
    s.items[0].attempts = 1
    n = run(s, ans({"verdict": "needs_change", "reasons": ["handle the empty list"]})).state
    assert types(n) == ["DO #1"] and "handle the empty list" in n.queue[0].payload["error"]


def test_evaluate_fail_at_the_cap_routes():
    s = queue(state(items=1), ("EVALUATE", 1), ("CLOSE", 1))
    s.items[0].attempts = 3
    n = run(s, ans({"verdict": "fail", "reasons": ["wrong"]})).state
    assert types(n) == ["ROUTE #1"] and n.queue[0].payload["trigger"] == "item_cap"


# --- CLOSE, the gate, REFLECT, DONE ---------------------------------------------------------------------


def test_close_finishes_the_item_and_the_empty_queue_goes_to_reflect():
    s = queue(state(items=1), ("CLOSE", 1))
    s.items[0].status = "in_progress"
    n = run(s).state
    assert n.items[0].status == "done" and types(n) == ["REFLECT"]
    assert n.counters.stagnation == 0


def test_without_reflect_an_empty_queue_goes_to_done():
    s = queue(state(items=1), ("CLOSE", 1))
    assert types(run(s, None, cfg(reflect=False)).state) == ["DONE"]


def test_an_empty_queue_with_open_items_routes():
    s = queue(state(items=2), ("CLOSE", 1))
    n = run(s).state
    assert types(n) == ["ROUTE"] and n.queue[0].payload == {"trigger": "queue_empty", "open": [2]}


def test_reflect_yes_passes_open_criteria_and_finishes():
    s = queue(state(items=1), ("REFLECT",))
    s.items[0].status = "done"
    n = run(s, ans({"achieved": "yes", "gaps": []})).state
    assert n.criteria[0].status == "pass" and types(n) == ["DONE"]


def test_reflect_yes_does_not_pass_a_criterion_of_a_failed_item():
    # Found by review: a model's "yes" turned "`python check.py` passes" into [pass] although the
    # only item's check never passed.
    s = queue(state(items=2, criteria=2), ("REFLECT",))
    s.items[0].status, s.items[1].status = "done", "failed"
    s.items[1].criteria = [2]
    n = run(s, ans({"achieved": "yes", "gaps": []})).state
    assert [c.status for c in n.criteria] == ["open", "open"]
    # and the facts outrank the "yes" (issue 18): an item failed, so it is "partially", not DONE
    assert types(n) == ["ROUTE"] and n.counters.reflectNo == 1


def test_reflect_partially_routes_with_the_gaps():
    s = queue(state(items=1), ("REFLECT",))
    s.items[0].status = "done"
    n = run(s, ans({"achieved": "partially", "gaps": ["no README"]})).state
    assert n.counters.reflectNo == 1
    assert n.queue[0].type == "ROUTE" and n.queue[0].payload["gaps"] == ["no README"]


def test_done_writes_the_synthesis_without_a_model_and_clears_the_todos():
    from vance_cli.engines.benjy.render import todos

    s = queue(state(items=2), ("DONE",))
    # item 2 dropped: a failed one would not reach DONE at all (the facts rule, test_benjy_facts_review)
    s.items[0].status, s.items[1].status = "done", "dropped"
    s.items[0].evidence = ["check `make test`: exit 0"]
    out = run(s)
    text = out.of(Say)[0].text
    assert out.of(Say)[0].kind == "synthesis" and out.of(SetStatus)[0].status == "DONE"
    assert "**Goal:** make it work" in text and "#1 [done] item 1" in text and "1 item replaced by a split, revise or reset" in text
    assert "[open] criterion 1" in text and "controller tokens" in text
    assert run(s).of(Say)[0].text == text  # deterministic
    assert todos(out.state) == [] and out.state.outcome == "done"


# --- ROUTE ----------------------------------------------------------------------------------------------


def _route(s, decision, trigger="check_failed", item=1, c=None, error="boom"):
    queue(s, ("ROUTE", item, {"trigger": trigger, "error": error}), *[(t.type, t.item) for t in s.queue])
    return run(s, ans(decision), c)


def test_route_retry_requeues_the_item_with_the_error():
    s = state(items=2)
    s.items[0].attempts = 1
    n = _route(s, {"op": "retry", "item": 1, "reason": "flaky"}).state
    assert types(n) == ["DO #1"] and n.queue[0].payload["error"] == "boom"


def test_route_retry_on_a_capped_item_is_discarded_and_the_item_fails():
    s = state(items=2)
    s.items[0].attempts = 3
    out = _route(s, {"op": "retry", "item": 1, "reason": "again"})
    assert out.state.items[0].status == "failed"
    assert "discarded" in out.of(Journal)[0].text
    assert types(out.state) == ["ROUTE"]  # the queue ran empty with item 2 open


def test_route_split_replaces_the_item_capped_to_max_initial_items():
    s = state(items=1)
    out = _route(s, {"op": "split", "item": 1, "items": [{"title": f"part {n}"} for n in range(4)], "reason": "too big"}, c=cfg(maxInitialItems=2))
    n = out.state
    assert n.items[0].status == "dropped" and [i.title for i in n.items[1:]] == ["part 0", "part 1"]
    assert types(n) == ["DO #2", "DO #3"]
    assert "TRUNCATED" in out.of(Journal)[0].text


def test_route_revise_rewrites_the_item_and_runs_it_again():
    s = state(items=1)
    s.items[0].attempts = 1
    n = _route(s, {"op": "revise", "item": 1, "items": [{"title": "smaller", "description": "only f"}], "reason": "r"}).state
    assert (n.items[0].title, n.items[0].description) == ("smaller", "only f") and types(n) == ["DO #1"]


def test_route_escalate_marks_the_item_and_off_means_retry():
    s = state(items=1)
    s.items[0].attempts = 3
    n = _route(s, {"op": "escalate", "item": 1, "reason": "too hard"}).state
    assert n.items[0].escalated and types(n) == ["DO #1"]
    s2 = state(items=1)
    s2.items[0].attempts = 1
    n2 = _route(s2, {"op": "escalate", "item": 1, "reason": "x"}, c=cfg(escalation=False)).state
    assert not n2.items[0].escalated and types(n2) == ["DO #1"]


def test_route_ask_parent_blocks_with_the_question():
    s = state(items=1)
    out = _route(s, {"op": "ask_parent", "question": "Which database?", "reason": "ambiguous"}, trigger="message")
    assert out.state.pendingQuestion.text == "Which database?" and out.state.pendingQuestion.reason == "ask_parent"
    assert out.of(Say)[0].kind == "question" and out.of(SetStatus)[0].status == "BLOCKED"


def test_route_done_goes_through_the_reflection_gate():
    s = state(items=1)
    assert types(_route(s, {"op": "done", "reason": "all there"}).state)[0] == "REFLECT"
    assert types(_route(state(items=1), {"op": "done", "reason": "x"}, c=cfg(reflect=False)).state)[0] == "DONE"


def test_route_reset_drops_the_open_plan_and_interprets_again():
    s = state(items=2)
    s.items[0].status = "done"
    n = _route(s, {"op": "reset", "reason": "wrong approach"}).state
    assert [i.status for i in n.items] == ["done", "dropped"] and types(n) == ["INTERPRET"]
    assert n.queue[0].payload["reset"] == "wrong approach"
    from vance_cli.engines.benjy.render import todos

    assert todos(s) != [] and todos(n) == []  # a reset emits the cleared list
    n.add_item("new plan")
    assert [t["text"] for t in todos(n)] == ["new plan"]


def test_route_blocked_is_terminal_with_a_diagnosis():
    out = _route(state(items=1), {"op": "blocked", "reason": "the API key is missing"})
    assert out.state.outcome == "blocked" and "the API key is missing" in out.state.diagnosis
    assert out.of(Say)[0].kind == "diagnosis"


# --- the mechanical policy (route off) -----------------------------------------------------------------


def test_route_off_retries_until_the_cap_then_escalates_then_blocks():
    c = cfg(route=False)
    s = state(items=1)
    s.items[0].attempts = 1
    queue(s, ("ROUTE", 1, {"trigger": "check_failed", "error": "e"}))
    assert types(run(s, None, c).state) == ["DO #1"]
    s.items[0].attempts = 3
    n = run(s, None, c).state
    assert n.items[0].escalated and types(n) == ["DO #1"]
    s.items[0].escalated, s.items[0].attempts = True, 4
    assert run(s, None, c).state.outcome == "blocked"
    assert run(s, None, cfg(route=False, escalation=False)).state.outcome == "blocked"


def test_route_off_turns_reflection_gaps_into_items():
    c = cfg(route=False)
    s = queue(state(items=1), ("ROUTE", None, {"trigger": "reflect_gaps", "gaps": ["add docs", "add tests"]}))
    s.items[0].status = "done"
    n = run(s, None, c).state
    assert [i.title for i in n.items[1:]] == ["add docs", "add tests"] and types(n) == ["DO #2", "DO #3"]


def test_route_off_notes_a_message_and_continues():
    c = cfg(route=False)
    s = queue(state(items=2), ("ROUTE", None, {"trigger": "message", "text": "fyi"}), ("DO", 2))
    assert types(run(s, None, c).state) == ["DO #2"]
