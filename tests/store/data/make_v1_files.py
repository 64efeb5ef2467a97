"""Writes the process files in v1/ as the vance of schema_version 1 wrote them (not a test).

Run once, against main at 13b20ac, before the tree fields moved out of ``engine_params``:

    VANCE_HOME=/tmp/vance-v1-fixture/home python tests/store/data/make_v1_files.py

It leaves two trees under $VANCE_HOME/processes, both stopped part-way so that a newer vance
has to take them up again (tests/store/test_process_versions.py):

- ``chat``: a Ford parent whose child asked a question: delivered, BLOCKED, still listed in
  the parent's ``engine_params["children"]`` (``delivery`` and ``deliveries`` on the child);
- ``benjy``: a Benjy run stopped with its second worker finished but not yet delivered
  (``worker`` on both workers, ``delivery`` on the first, the second in ``children``).

The workspace is /tmp/vance-v1-fixture/ws; the test puts its own folder in its place.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.engines.benjy_brain import Brain  # noqa: E402
from tests.engines.harness import recipe, respond  # noqa: E402
from vance_cli.config.scopes import Scopes  # noqa: E402
from vance_cli.config.settings import Settings  # noqa: E402
from vance_cli.events import EventBus  # noqa: E402
from vance_cli.llm.scripted import FunctionModel  # noqa: E402
from vance_cli.runtime.benjy import BenjyService  # noqa: E402
from vance_cli.runtime.runner import Runtime  # noqa: E402
from vance_cli.runtime.scheduler import Scheduler  # noqa: E402
from vance_cli.store.process import InboxItem, Process, Status  # noqa: E402

ROOT = Path("/tmp/vance-v1-fixture")
OUT = Path(__file__).with_name("v1")


def runtime(fn) -> Runtime:
    scopes = Scopes.discover(cwd=ROOT / "ws")
    settings = Settings.load(scopes, env={"VANCE_MODEL": "fn"})
    model = FunctionModel(fn)
    return Runtime(scopes, settings, bus=EventBus(), model_factory=lambda m, s: model)


def chat_tree() -> list[str]:
    def brain(request):
        users = [m.content for m in request.messages if m.role == "user"]
        if users[-1] == "do the thing":
            return respond("which file do you mean?")  # awaiting the parent's answer
        return respond(f"parent saw: {users[-1]}")

    rt = runtime(brain)
    ws = str(rt.scopes.cwd)
    parent = Process(engine="ford", recipe=recipe(), recipe_name="t", model="fn", workspace=ws, status=Status.IDLE)
    child = Process(engine="ford", recipe=recipe(), recipe_name="t", model="fn", parent=parent.id, workspace=ws)
    parent.engine_params["children"] = [child.id]
    rt.store.create(parent)
    child.inbox.append(InboxItem(content="do the thing"))
    rt.store.create(child)
    asyncio.run(Scheduler(rt).run(parent.id))
    return [parent.id, child.id]


def benjy_tree() -> list[str]:
    brain = Brain(items=2)
    service: BenjyService

    def fn(request):
        answer = brain(request)
        if brain.calls.get("WORKER", 0) >= 3:  # item 2's worker has started: stop after it
            service.request_stop()
        return answer

    rt = runtime(fn)
    service = BenjyService(rt)
    process, _ = service.start("write the item files", workspace=ROOT / "ws")
    asyncio.run(service.run(process.id))
    kids = sorted((p for p in rt.store.list()[0] if p.parent == process.id), key=lambda p: p.created)
    return [process.id, *(k.id for k in kids)]


def main() -> None:
    home = Path(os.environ["VANCE_HOME"])
    assert home.resolve().is_relative_to(ROOT), "set VANCE_HOME under /tmp/vance-v1-fixture"
    shutil.rmtree(ROOT, ignore_errors=True)
    (ROOT / "ws").mkdir(parents=True)
    trees = {"chat": chat_tree(), "benjy": benjy_tree()}
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()
    for ids in trees.values():
        for pid in ids:
            shutil.copy(home / "processes" / f"{pid}.json", OUT / f"{pid}.json")
    (OUT / "trees.json").write_text(json.dumps(trees, indent=2) + "\n")


if __name__ == "__main__":
    main()
