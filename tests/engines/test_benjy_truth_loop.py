"""Benjy tells the truth (issue 18), in process: real files, real workers, a real check, scripted models."""

from __future__ import annotations

import asyncio
import sys

from tests.engines.benjy_brain import Brain, stage_of
from tests.engines.test_benjy_loop import Harness
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.events import EventBus
from vance_cli.llm.scripted import FunctionModel
from vance_cli.runtime.benjy_service import BenjyService
from vance_cli.runtime.runner import Runtime
from vance_cli.store.process import Status


def _journal(process) -> str:
    return "\n".join(m.content or "" for m in process.history if m.meta.get("kind") == "journal")


def test_the_check_runs_whatever_task_type_interpret_picks_and_once_more_at_done(tmp_path):
    h = Harness(tmp_path, Brain(items=2, task_type="analysis"))
    process = h.run(h.start())
    assert process.status == Status.DONE
    journal = _journal(process)
    assert "**CHECK #1:** passed" in journal and "**CHECK #2:** passed" in journal
    assert "**DONE GATE:** final check passed (exit 0)" in journal
    assert process.engine_params["benjyState"].counters.checks == 3


def test_a_recipe_with_check_off_runs_the_check_given_by_check(tmp_path):
    # benjy-research says `check: off` and allows no coding task type; --check switches it on
    h = Harness(tmp_path, Brain(items=1, task_type="analysis"))
    process = h.run(h.start(recipe="benjy-research"))
    assert process.status == Status.DONE
    assert "**CHECK #1:** passed" in _journal(process)


def test_a_run_whose_final_check_fails_is_not_done_until_it_passes(tmp_path):
    check = "import os, sys\nbroken = os.path.exists('BROKEN') and open('BROKEN').read() != 'fixed'\nprint('broken' if broken else 'ok')\nsys.exit(1 if broken else 0)\n"
    reflects = {"n": 0}

    def reflect(prompt):  # the workspace changes after the last item check (someone broke it)
        reflects["n"] += 1
        if reflects["n"] == 1:
            (h.ws / "BROKEN").write_text("yes")
        return {"achieved": "yes", "gaps": []}

    def route(prompt):
        assert "Branch: final_check_failed" in prompt and "broken" in prompt
        return {"op": "split", "items": [{"title": "repair BROKEN", "description": "write 'fixed' to BROKEN"}], "reason": "fix it"}

    def files(n, prompt):
        return [("BROKEN", "fixed")] if "repair BROKEN" in prompt else [(f"item{n}.txt", f"item {n}\n")]

    h = Harness(tmp_path, Brain(items=1, worker_files=files, overrides={"REFLECT": reflect, "ROUTE": route}))
    (h.ws / "check.py").write_text(check)
    process = h.run(h.start(check=f"{sys.executable} check.py"))
    assert process.status == Status.DONE
    journal = _journal(process)
    assert "**DONE GATE:** final check failed (exit 1) — not DONE" in journal
    assert "**ROUTE (final_check_failed):** split into #2" in journal
    assert (h.ws / "BROKEN").read_text() == "fixed" and reflects["n"] == 2
    assert journal.rindex("final check passed") > journal.rindex("final check failed")


def test_a_route_split_without_items_is_rejected_with_its_reason_and_the_run_reaches_the_gate(tmp_path):
    # issue 18: "split without items" three times on queue_empty ended a passing run as route-stuck
    brain = Brain(items=2, worker_files=lambda n, p: [(f"item{n}.txt", "BAD\n" if n == 1 and "attempt" not in p else f"item {n}\n")])
    corrections: list[str] = []

    def fn(request):
        if stage_of(request.messages) == "ROUTE":
            if not any(m.role == "assistant" for m in request.messages):  # the first answer: a split without items
                return {"text": '{"op": "split", "reason": "split the item"}', "usage": {"prompt_tokens": 100, "completion_tokens": 20}}
            corrections.append(request.messages[-1].content or "")
            return {"text": '{"op": "retry", "item": 1, "reason": "try again"}', "usage": {"prompt_tokens": 100, "completion_tokens": 20}}
        return brain(request)

    h = Harness(tmp_path, fn)
    process = h.run(h.start())
    assert process.status == Status.DONE, process.status_reason
    assert corrections and "needs the new smaller items" in corrections[0]
    state = process.engine_params["benjyState"]
    assert [i.status for i in state.items] == ["done", "done"] and state.counters.routeRecent != []
    assert "REFLECT" in _journal(process) and "Route is stuck" not in _journal(process)


def test_a_coding_worker_that_changes_no_file_is_retried_not_evaluated(tmp_path):
    brain = Brain(items=1)
    said = {"n": 0}

    def fn(request):
        if request.tools and stage_of(request.messages) is None and said["n"] == 0:
            said["n"] += 1  # the first worker only talks: "Task done! No more changes to make."
            return {"tool_calls": [{"name": "respond", "arguments": {"message": "Task done! No more changes to make.",
                                                                       "awaiting_user_input": False}}]}
        return brain(request)

    h = Harness(tmp_path, fn)
    process = h.run(h.start())
    assert process.status == Status.DONE
    journal = _journal(process)
    assert "**REPLY #1:** no file changed — not done → retry" in journal
    second = [r for r in h.worker_requests() if r.messages[-1].role == "user"][1]
    assert "changed no file in the workspace" in second.messages[-1].content
    assert brain.calls["EVALUATE"] == 1  # only the attempt that did something was judged
    assert "#1 [done] write item1.txt (2 attempts)" in process.history[-1].content


def test_the_escalated_worker_runs_on_the_strong_alias(tmp_path, vance_home):
    (vance_home / "config.toml").write_text(
        '[aliases]\n"default:code" = "openai/small"\n"default:strong" = "openai/big"\n'
    )
    brain = Brain(items=1, worker_files=lambda n, p: [("item1.txt", "BAD\n")])
    models: list[str] = []

    def factory(name, settings):
        def fn(request):
            if request.tools and stage_of(request.messages) is None:
                models.append(name)
                if name == "openai/big":
                    return Brain(items=1).worker(request.messages)
            return brain(request)

        return FunctionModel(fn)

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text("import sys\nsys.exit(1 if 'BAD' in open('item1.txt').read() else 0)\n")
    scopes = Scopes.discover()
    rt = Runtime(scopes, Settings.load(scopes, env={"VANCE_MODEL": "openai/base"}), bus=EventBus(), model_factory=factory)
    svc = BenjyService(rt)
    brain.overrides["ROUTE"] = lambda prompt: {"op": "escalate", "item": 1, "reason": "the small model cannot"}
    with svc.start("write item1.txt", workspace=ws, check=f"{sys.executable} check.py") as started:
        pid = started.process.id
    process = asyncio.run(svc.run(pid)).process
    assert process.status == Status.DONE
    assert "openai/small" in models and models[-1] == "openai/big"
    assert Settings.load(scopes, env={"VANCE_MODEL": "openai/base"}).resolve_model("default:strong") == "openai/big"
