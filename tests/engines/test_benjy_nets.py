"""Benjy's safety nets (spec §6), each with its effect; checkpoint grants; the bounded digest; the codec."""

from __future__ import annotations

import json

import pytest

from tests.engines.benjy_helpers import NOW, ans, cfg, ctx, failed, queue, run, state, types
from vance_cli.engines.benjy import render
from vance_cli.engines.benjy.effects import Say, SetStatus
from vance_cli.engines.benjy.inbound import inbound
from vance_cli.engines.benjy.nets import head_nets
from vance_cli.engines.benjy.state import BENJY_STATE_VERSION, BenjyState, InFlight, PendingQuestion, decode, encode
from vance_cli.errors import CorruptProcessFile

# --- stagnation ---------------------------------------------------------------------------------------


def test_progress_is_exactly_what_the_spec_counts():
    s = queue(state(items=2), ("CHECK", 1), ("EVALUATE", 1), ("CLOSE", 1), ("DO", 2))
    s.counters.stagnation = 4
    n = run(s, failed()).state  # a failed check changes no item or criterion status: stagnation
    assert n.counters.stagnation == 5
    s2 = queue(state(items=2), ("CLOSE", 1), ("DO", 2))
    s2.counters.stagnation = 4
    assert run(s2).state.counters.stagnation == 0  # an item reached a terminal state
    s3 = queue(state(items=1), ("EVALUATE", 1), ("CLOSE", 1))
    s3.counters.stagnation = 4
    assert run(s3, ans({"verdict": "pass", "reasons": [], "criteria": [{"id": 1, "status": "pass"}]})).state.counters.stagnation == 0
    s4 = queue(state(items=1), ("EVALUATE", 1), ("CLOSE", 1))
    s4.counters.stagnation = 4
    s4.items[0].attempts = 1
    assert run(s4, ans({"verdict": "fail", "reasons": ["x"]})).state.counters.stagnation == 5  # a retry is no progress


def test_stagnation_escalates_the_open_items_once_then_asks():
    c = cfg(maxStagnation=3)
    s = queue(state(items=2), ("ROUTE", 1, {"trigger": "check_failed", "error": "e"}))
    s.items[0].attempts = 1
    s.counters.stagnation = 2
    out = run(s, ans({"op": "retry", "item": 1, "reason": "r"}), c)
    n = out.state
    assert all(i.escalated for i in n.items) and n.counters.stagnationEscalated and n.counters.stagnation == 0
    assert "STAGNATION" in out.effects[0].text
    queue(n, ("ROUTE", 1, {"trigger": "check_failed", "error": "e"}))
    n.counters.stagnation = 2
    out2 = run(n, ans({"op": "retry", "item": 1, "reason": "r2"}), c)
    assert out2.state.pendingQuestion.reason == "stagnation"
    assert out2.of(SetStatus)[-1].status == "BLOCKED" and out2.of(Say)[0].kind == "question"


def test_stagnation_without_escalation_asks_at_once():
    c = cfg(maxStagnation=2, escalation=False)
    s = queue(state(items=1), ("CHECK", 1), ("EVALUATE", 1), ("CLOSE", 1))
    s.counters.stagnation = 1
    assert run(s, failed(), c).state.pendingQuestion.reason == "stagnation"


# --- wallclock and tokens (measured before a task runs) -----------------------------------------------


def test_wallclock_per_phase_asks_and_the_answer_restarts_the_phase():
    c = cfg(maxWallclockMinutes=1)
    s = queue(state(items=1), ("DO", 1))
    s.counters.phaseElapsed, s.counters.lastTick = 50.0, NOW
    assert head_nets(s, ctx(c, now=NOW + 5)) is None
    out = head_nets(s, ctx(c, now=NOW + 20))
    assert out.state.pendingQuestion.reason == "wallclock" and types(out.state) == ["DO #1"]
    n = inbound(out.state, {"id": "a", "kind": "user", "content": "go on", "meta": {}}, ctx(c, now=NOW + 3600)).state
    assert n.counters.phaseElapsed == 0.0
    assert head_nets(n, ctx(c, now=NOW + 3610)) is None


def test_time_between_runs_does_not_count():
    c = cfg(maxWallclockMinutes=1)
    s = queue(state(items=1), ("DO", 1))
    s.counters.phaseElapsed, s.counters.lastTick = 10.0, NOW
    from vance_cli.engines.benjy.effects import Ctx

    # resumed a day later: the run started now, so only the seconds since then count
    resumed = Ctx(cfg=c, now=NOW + 86_400 + 5, run_started=NOW + 86_400)
    assert head_nets(s, resumed) is None


def test_controller_token_budget_with_grant_baseline():
    c = cfg(maxTokens=1000)
    s = queue(state(items=1), ("DO", 1))
    s.counters.controllerTokens = 1001
    out = head_nets(s, ctx(c))
    assert out.state.pendingQuestion.reason == "tokens" and "1001 tokens" in out.state.pendingQuestion.text
    n = inbound(out.state, {"id": "a", "kind": "user", "content": "ok, more", "meta": {}}, ctx(c)).state
    assert n.counters.grantBaseline == 1001 and n.counters.controllerTokens == 1001
    assert head_nets(n, ctx(c)) is None
    n.counters.controllerTokens = 2002
    assert head_nets(n, ctx(c)).state.pendingQuestion.reason == "tokens"


# --- convergence, route-stuck, schema exhaustion, attempt cap -----------------------------------------


def test_convergence_cap_asks_after_max_reflect_no():
    c = cfg(maxReflectNo=2)
    s = queue(state(items=1), ("REFLECT",))
    s.items[0].status = "done"
    n = run(s, ans({"achieved": "no", "gaps": ["g"]}), c).state
    assert n.counters.reflectNo == 1 and n.queue[0].type == "ROUTE"
    queue(n, ("REFLECT",))
    out = run(n, ans({"achieved": "partially", "gaps": ["still g"]}), c)
    assert out.state.pendingQuestion.reason == "convergence" and "still g" in out.state.pendingQuestion.text
    answered = inbound(out.state, {"id": "a", "kind": "user", "content": "keep going", "meta": {}}, ctx(c)).state
    assert answered.counters.reflectNo == 0


def test_route_stuck_blocks_after_three_identical_decisions_on_an_unchanged_state():
    s = state(items=2)
    # changes nothing (a split without items is no decision at all: issue 18, test below)
    decision = {"op": "escalate", "item": None, "reason": "hmm"}
    for _ in range(2):
        queue(s, ("ROUTE", None, {"trigger": "message", "text": "x"}), ("DO", 2))
        s = run(s, ans(decision)).state
        assert s.outcome is None
    queue(s, ("ROUTE", None, {"trigger": "message", "text": "x"}), ("DO", 2))
    out = run(s, ans(decision))
    assert out.state.outcome == "blocked" and "stuck" in out.state.diagnosis


def test_schema_exhaustion_blocks_and_keeps_the_task():
    s = queue(state(items=1), ("EVALUATE", 1), ("CLOSE", 1))
    out = run(s, ans(None, status="stale", tokens=300))
    n = out.state
    assert n.outcome == "blocked" and "schema exhaustion" in n.diagnosis
    assert types(n) == ["EVALUATE #1", "CLOSE #1"]  # a later message retries it
    assert n.counters.controllerTokens == 300  # the spent tokens still count


def test_a_message_after_a_terminal_block_unblocks_and_routes():
    s = queue(state(items=1), ("EVALUATE", 1), ("CLOSE", 1))
    n = run(s, ans(None, status="stale")).state
    m = inbound(n, {"id": "m", "kind": "user", "content": "try with more care", "meta": {}}, ctx()).state
    assert m.outcome is None and types(m) == ["ROUTE", "EVALUATE #1", "CLOSE #1"]


# --- the digest is bounded ---------------------------------------------------------------------------


def _big(items: int) -> BenjyState:
    s = state(items=items, criteria=30)
    for n, item in enumerate(s.items):
        item.status = "done" if n % 3 else "open"
        item.evidence = ["check `make test`: exit 0 — " + "x" * 500] * 4
        item.lastError = "E" * 3000
    for n in range(40):
        s.note(f"fact {n} " + "y" * 600)
    queue(s, *[("DO", i + 1) for i in range(items)])
    return s


def test_the_digest_does_not_grow_with_the_run():
    small, large = render.digest(_big(20)), render.digest(_big(2000))
    assert len(large) <= len(small) + 100  # only the digits of ids and counts differ
    assert len(large) < 8000
    assert "(+18 more criteria)" in large and "+1992 more" in large
    assert large.count("\n  #") == small.count("\n  #") == render.DIGEST_ITEMS


def test_route_prompt_is_bounded_even_with_a_huge_error():
    s = _big(500)
    text = render.route_prompt(s, {"trigger": "check_failed", "error": "Z" * 100_000}, 1)
    assert len(text) < 12_000


# --- the codec --------------------------------------------------------------------------------------


def test_state_codec_round_trip_through_json():
    s = queue(state(items=3), ("CHECK", 1), ("ROUTE", 2, {"trigger": "message", "text": "hi"}))
    s.items[0].evidence = ["a", "b"]
    s.inFlight = InFlight(child="c1", item=3, attempt=2, escalated=True, recipe="coding")
    s.pendingQuestion = PendingQuestion(text="q", reason="tokens", asked=5.0)
    s.counters.routeRecent = ["f1", "f2"]
    s.config = cfg().model_dump(mode="json")
    raw = json.loads(json.dumps(encode(s)))
    assert raw["version"] == BENJY_STATE_VERSION
    back = decode(raw)
    assert encode(back) == encode(s) and isinstance(back.queue[1].payload, dict)


def test_a_newer_state_version_is_refused_with_a_fix():
    raw = encode(state(items=1))
    raw["version"] = BENJY_STATE_VERSION + 1
    with pytest.raises(CorruptProcessFile, match="newer"):
        decode(raw)


def test_the_state_survives_the_process_file(tmp_path):
    from vance_cli.engines.benjy.state import STATE_KEY, load_state
    from vance_cli.store.files import ProcessStore
    from vance_cli.store.process import Process

    store = ProcessStore(tmp_path)
    p = Process(engine="benjy")
    s = load_state(p)
    s.goal = "g"
    s.add_item("one")
    store.create(p)
    loaded = store.load(p.id)
    assert isinstance(loaded.engine_params[STATE_KEY], dict)
    assert encode(load_state(loaded)) == encode(s)
