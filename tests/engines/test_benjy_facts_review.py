"""Issue 18 review (repro by the reviewer, kept). Review: facts outrank the model's judgement only when the REFLECT stage is on."""
from tests.engines.benjy_helpers import ans, cfg, queue, run, state, types
from vance_cli.engines.benjy.effects import SetStatus


def test_a_route_done_with_reflect_off_does_not_finish_a_run_whose_item_failed():
    # A recipe with route on and reflect off (allowed: every feature but interpret may be off),
    # no check command. Item #1 failed its evaluation at the attempt cap; route answers "done".
    # apply_route pushes DONE (reflect off) and on_done finishes: DONE, "goal achieved", exit 0,
    # with item #1 never done and criterion C1 open -- what issue 18 says must not happen
    # ("A run whose items failed is not 'DONE — goal achieved' with exit 0").
    c = cfg(reflect=False, check=None)
    s = state(items=1)
    s.items[0].status = "in_progress"
    s.items[0].attempts = 3
    s.items[0].lastError = "The reviewer judged the result 'fail'"
    queue(s, ("ROUTE", 1, {"trigger": "item_cap", "error": "fail"}))
    n = run(s, ans({"op": "done", "reason": "good enough"}), c).state
    assert types(n) == ["DONE"]
    out = run(n, None, c)
    assert [e.status for e in out.of(SetStatus)] != ["DONE"], "DONE with an unfinished item and an open criterion"
