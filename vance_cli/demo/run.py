"""`vance demo`: every capability, for real, offline. Only the model's words are scripted.

The demo runs the real engines, process files, workspace tools, structure service and check
command against a scripted "brain" (``demo:`` model strings, vance_cli/demo/brain.py), in a state folder of
its own, so nothing of the person's own processes is touched. The brain answers by looking at the
request, as a model would, so it behaves the same when a demo process is resumed.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

# ------------------------------------------------------------------ the run


@dataclass
class Demo:
    home: Path
    out: TextIO
    err: TextIO
    json_out: bool = False
    live: bool = False  # show the Benjy run in the console (a terminal, no --json)
    report: dict[str, Any] = field(default_factory=dict)

    def say(self, text: str = "") -> None:
        if not self.json_out:
            self.out.write(text + "\n")
            self.out.flush()

    def heading(self, n: int, total: int, title: str) -> None:
        self.say(f"\n── {n}/{total} {title} " + "─" * max(0, 60 - len(title)))

    def context(self, workspace: Path):
        from vance_cli.config.scopes import Scopes
        from vance_cli.config.settings import Settings

        scopes = Scopes(user=self.home, project=None, cwd=workspace)
        # An empty environment: the person's VANCE_MODEL or keys play no part in the demo.
        return scopes, Settings.load(scopes, env={})

    def run(self) -> dict[str, Any]:
        # Said first, before the engines are imported: the demo starts as quickly as --help.
        self.say("Vance demo · the model is SCRIPTED (no key, no network); engines, tools, process files are real.")
        self.say(f"state folder: {self.home}")
        from vance_cli.demo import brain

        workspace = self.home / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / brain.NOTES_FILE).write_text(brain.NOTES, encoding="utf-8")
        self.report = {"home": str(self.home), "workspace": str(workspace), "scripted": True}
        total = 4
        self.heading(1, total, "chat: a tool call, and a misbehaving reply corrected")
        self.chat(workspace)
        self.heading(2, total, "structure: a reason loop, and an honest need-more-input")
        self.structure(workspace)
        self.heading(3, total, "benjy: a coding run, a failed check, a retry that sees the error, DONE")
        self.benjy()
        self.heading(4, total, "vance ps: what the demo made")
        self.ps(workspace)
        self.report["problems"] = problems(self.report)
        self.report["ok"] = not self.report["problems"]
        self.outro()
        return self.report

    def chat(self, workspace: Path) -> None:
        from vance_cli.demo import brain
        from vance_cli.events import JournalEvent, ToolStarted
        from vance_cli.output.printers import HeadlessPrinter
        from vance_cli.runtime.runner import Runtime

        scopes, settings = self.context(workspace)
        runtime = Runtime(scopes, settings, model_factory=brain.model_factory)
        seen: list[str] = []

        def narrate(event) -> None:
            if isinstance(event, ToolStarted):
                seen.append(f"tool:{event.name}")
            elif isinstance(event, JournalEvent):
                seen.append(f"journal:{event.text}")

        runtime.bus.subscribe(narrate)
        if not self.json_out:
            runtime.bus.subscribe(HeadlessPrinter(out=self.out, err=self.out, verbose=True))
        self.say(f"you> {brain.CHAT_PROMPT}")
        process = runtime.new_process("arthur", model=brain.DEMO_PREFIX + "chat", workspace=workspace)
        with runtime.session(process.id) as proc:
            runtime.send(proc, brain.CHAT_PROMPT, save=False)
            asyncio.run(self._drive(runtime, proc))
            corrections = [m for m in proc.history if (m.meta or {}).get("kind") == "correction"]
            self.say(f"[{proc.id} {proc.status.value}] · {len(corrections)} correction(s) · "
                     f"{sum(1 for s in seen if s.startswith('tool:'))} tool call(s)")
            self.report["chat"] = {"process": proc.id, "status": proc.status.value,
                                   "corrections": len(corrections), "events": seen}

    @staticmethod
    async def _drive(runtime, process) -> None:
        try:
            await runtime.drive(process)
        finally:
            await runtime.aclose()

    def structure(self, workspace: Path) -> None:
        from vance_cli.demo import brain
        from vance_cli.structure.service import StructureRequest, StructureService

        _, settings = self.context(workspace)
        service = StructureService(settings, model_factory=brain.demo_model)
        results = []
        for prompt in (brain.STRUCTURE_COMPLETE, brain.STRUCTURE_INCOMPLETE):
            self.say(f"$ vance structure {json.dumps(prompt)} --schema expense.json")
            result = asyncio.run(service.run_structured(
                StructureRequest(prompt=prompt, schema=brain.EXPENSE_SCHEMA, model=brain.DEMO_PREFIX + "structure")))
            if result.status == "ok":
                self.say(f"  ok after {result.iterations} attempt(s): {json.dumps(result.data)}")
            else:
                self.say(f"  {result.status}: {result.need or result.errors}  (exit 3: ask the person, then retry)")
            results.append({"status": result.status, "iterations": result.iterations, "data": result.data, "need": result.need})
        self.report["structure"] = results

    def benjy(self) -> None:
        import shlex
        import sys

        from vance_cli.demo import brain
        from vance_cli.runtime.benjy import BenjyService
        from vance_cli.runtime.runner import Runtime

        workspace = self.home / "benjy-workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / brain.CHECK_FILE).write_text(brain.CHECK_SCRIPT, encoding="utf-8")
        scopes, settings = self.context(workspace)
        runtime = Runtime(scopes, settings, model_factory=brain.model_factory)
        check = f"{shlex.quote(sys.executable)} {brain.CHECK_FILE}"
        service = BenjyService(runtime)
        self.say(f'$ vance benjy run "{brain.BENJY_GOAL}" --check "python {brain.CHECK_FILE}"')
        process, _ = service.start(brain.BENJY_GOAL, workspace=workspace, check=check, model=brain.DEMO_PREFIX + "benjy")
        if self.live:
            self.say("  (the run is shown in the console; Esc returns to the demo when it is DONE)")
            result = self.run_in_console(service, process.id)
        else:
            watch = runtime.bus.subscribe(BenjyNarrator(self.say)) if not self.json_out else None
            try:
                result = asyncio.run(service.run(process.id))
            finally:
                if watch is not None:
                    watch()
        status = service.status(process.id)
        # What the retry's fresh worker was told: the failed check's output, in its first message.
        failed = []
        workers = [p for p in runtime.store.list()[0] if p.parent == process.id]
        for worker in sorted(workers, key=lambda p: p.created):
            first = next((m.content or "" for m in worker.history if m.role == "user"), "")
            if "did not pass" in first:
                failed.append(first.split("did not pass:", 1)[-1].strip())
        for text in failed:
            lines = [line.strip() for line in text.split("\n\n", 1)[0].splitlines() if line.strip()]
            shown = next((line for line in reversed(lines) if "Error" in line), lines[0] if lines else "")
            self.say("  the retry's worker was told: " + shown)
        if result.synthesis and not self.json_out:
            self.say(result.synthesis)
        self.say(f"[{process.id} {result.status.value}] · workspace {workspace}")
        self.report["benjy"] = {
            "process": process.id, "status": result.status.value, "workspace": str(workspace),
            "checks": status["counters"].get("checks"), "workerSpawns": status["counters"].get("workerSpawns"),
            "items": status["items"],
            "todos": status["todos"], "failedChecks": failed,
        }

    @staticmethod
    def run_in_console(service, pid: str):
        """The run in the console's run screen (todo box, journal, status), then its result."""
        from vance_cli.tui import run_benjy_live

        return run_benjy_live(service, pid)

    def ps(self, workspace: Path) -> None:
        from vance_cli.output.tree import tree_label, tree_order
        from vance_cli.store.files import ProcessStore

        scopes, _ = self.context(workspace)
        processes, _ = ProcessStore.for_scopes(scopes).list()
        for p, depth in tree_order(processes):
            ident = tree_label(p.id, depth)
            self.say(f"{ident:<27} {p.engine:<7} {p.recipe_name:<16} {p.status.value:<8} {(p.title or '')[:40]}")
        self.report["processes"] = [{"id": p.id, "engine": p.engine, "status": p.status.value, "parent": p.parent}
                                    for p in processes]

    def outro(self) -> None:
        from vance_cli.demo import brain

        for problem in self.report["problems"]:
            self.say(f"NOT AS SCRIPTED: {problem}")

        import shlex

        q = lambda path: shlex.quote(str(path))  # noqa: E731
        schema = self.home / "expense.json"
        schema.write_text(json.dumps(brain.EXPENSE_SCHEMA, indent=2) + "\n", encoding="utf-8")
        self.say("\nThat was a scripted model. The same with a real one:")
        self.say("  export VANCE_MODEL=openai/gpt-5.4-mini OPENAI_API_KEY=...   # or see: vance doctor")
        self.say(f'  cd {q(self.home / "workspace")} && vance chat -p "{brain.CHAT_PROMPT}"')
        self.say(f'  vance structure "{brain.STRUCTURE_COMPLETE}" --schema {q(schema)}')
        self.say(f"  mkdir slug && cp {q(self.home / 'benjy-workspace' / brain.CHECK_FILE)} slug/ && "
                 f'vance benjy run "{brain.BENJY_GOAL}" --check "python {brain.CHECK_FILE}" --workspace slug')
        self.say(f"Look at what the demo wrote: VANCE_HOME={self.home} vance ps")


def problems(report: dict[str, Any]) -> list[str]:
    """Where the demo did not go as scripted (an empty list: every part showed what it should)."""
    out = []
    chat = report.get("chat") or {}
    if chat.get("status") != "BLOCKED" or not chat.get("corrections"):
        out.append(f"chat: expected a corrected turn waiting for you, got {chat.get('status')} with "
                   f"{chat.get('corrections')} correction(s)")
    statuses = [r.get("status") for r in report.get("structure") or []]
    if statuses != ["ok", "need-more-input"]:
        out.append(f"structure: expected ok then need-more-input, got {', '.join(map(str, statuses)) or 'nothing'}")
    benjy = report.get("benjy") or {}
    items = benjy.get("items") or {}
    if benjy.get("status") != "DONE" or not items or set(items) != {"done"}:
        out.append(f"benjy: expected DONE with every item done, got {benjy.get('status')} with items {items}")
    return out


class BenjyNarrator:
    """Benjy's journal headlines and todo changes as plain lines (the console shows them in panels)."""

    def __init__(self, say) -> None:
        self.say = say
        self.last_todos: list[str] = []

    def __call__(self, event) -> None:
        from vance_cli.events import JournalEvent, TodosUpdated, ToolStarted

        if isinstance(event, JournalEvent):
            lines = [line.strip() for line in event.text.splitlines() if line.strip()]
            if lines:
                self.say("  journal: " + lines[0].strip("* ").replace("**", ""))

        elif isinstance(event, TodosUpdated):
            todos = [f"[{'x' if t.get('status') == 'done' else ' '}] {t.get('text')}" for t in event.todos]
            if todos != self.last_todos:
                self.last_todos = todos
                for line in todos:
                    self.say("  todo " + line)
        elif isinstance(event, ToolStarted):
            self.say(f"  worker · {event.name}")


def default_home() -> Path:
    return Path(tempfile.mkdtemp(prefix="vance-demo-"))


def run_demo(*, home: Path | None, json_out: bool, out: TextIO, err: TextIO, live: bool = False) -> dict[str, Any]:
    home = (home or default_home()).resolve()
    home.mkdir(parents=True, exist_ok=True)
    return Demo(home=home, out=out, err=err, json_out=json_out, live=live and not json_out).run()
