"""`vance demo`: every capability, for real, offline. Only the model's words are scripted.

The demo runs the real engines, process files, workspace tools, structure service and check
command against a scripted "brain" (``demo:`` model strings, see ``brain``), in a state folder of
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

from vance_cli.llm.base import Capabilities, ChatRequest, Completion, ToolCall, Usage

DEMO_PREFIX = "demo:"
CAPABILITIES = Capabilities(family="other", tools=True, json_schema=True, strict_json_schema=False,
                            json_object=True, parallel_tool_calls=False)

NOTES_FILE = "notes.md"
NOTES = """# Release notes 0.3

- The importer now skips empty rows instead of failing.
- `--dry-run` prints the plan and writes nothing.
- Known issue: dates before 1970 are shown as 1970-01-01.
"""
CHAT_PROMPT = f"What changed in this release? The notes are in {NOTES_FILE}."

EXPENSE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Expense",
    "type": "object",
    "properties": {
        "merchant": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "amount": {"type": "number", "exclusiveMinimum": 0},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
    },
    "required": ["merchant", "date", "amount", "currency"],
    "additionalProperties": False,
}
STRUCTURE_COMPLETE = "Taxi from the airport to the hotel with City Cabs on 2026-03-04, 42.80 EUR."
STRUCTURE_INCOMPLETE = "Dinner with the team at Luigi's, about a hundred and twenty."


def _usage(prompt: int, completion: int) -> Usage:
    return Usage(calls=1, prompt_tokens=prompt, completion_tokens=completion)


def _call(name: str, arguments: dict[str, Any]) -> Completion:
    return Completion(tool_calls=[ToolCall(id="", name=name, arguments=json.dumps(arguments))],
                      finish_reason="tool_calls", usage=_usage(180, 30))


def _text(value: Any) -> Completion:
    text = value if isinstance(value, str) else json.dumps(value)
    return Completion(text=text, finish_reason="stop", usage=_usage(150, 40))


# ------------------------------------------------------------------ the brain


def chat_brain(request: ChatRequest) -> Completion:
    """Arthur's turn: first misbehaves (free text, no respond), then reads the file, then responds."""
    last = request.messages[-1]
    if last.role == "tool":
        content = last.content or ""
        bullets = [line[2:] for line in content.splitlines() if line.startswith("- ")]
        summary = "\n".join(f"- {b}" for b in bullets) or "- (the file was empty)"
        return _call("respond", {
            "message": f"Three changes in **0.3**, from `{NOTES_FILE}`:\n\n{summary}",
            "awaiting_user_input": True,
        })
    if last.role == "user" and "VALIDATION CHECK" in (last.content or ""):
        return _call("file_read", {"path": NOTES_FILE})
    # The misbehaviour the engine catches structurally: an answer as plain text, no respond call.
    return _text("Sure! Let me look at the release notes for you.")


def structure_brain(request: ChatRequest) -> Completion:
    """Content stage: one wrong type first (the reason loop fixes it), or an honest _need."""
    prompt = next((m.content or "" for m in request.messages if m.role == "user"), "")
    if "Luigi" in prompt:
        return _text({"result": None, "_need": "the date of the dinner and the currency of the amount"})
    if any(m.role == "assistant" for m in request.messages):  # the validator's reasons came back
        return _text({"result": {"merchant": "City Cabs", "date": "2026-03-04", "amount": 42.8, "currency": "EUR"},
                      "_need": None})
    return _text({"result": {"merchant": "City Cabs", "date": "2026-03-04", "amount": "42.80 EUR", "currency": "EUR"},
                  "_need": None})


BENJY_GOAL = "Write slugify(text) in slug.py: lowercase words joined by single dashes."
CHECK_FILE = "check_slug.py"
CHECK_SCRIPT = """from slug import slugify

for text, want in [("Hello, World!", "hello-world"), ("  Vance -- the   console ", "vance-the-console")]:
    got = slugify(text)
    assert got == want, f"slugify({text!r}) == {got!r}, want {want!r}"
print("slugify: 2 cases pass")
"""
# The first attempt forgets that runs of separators collapse into one dash; the check says so.
SLUG_FIRST = """def slugify(text):
    return "-".join(text.lower().replace(",", "").replace("!", "").split(" "))
"""
SLUG_FIXED = """import re


def slugify(text):
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)
"""


def _stage(request: ChatRequest) -> str | None:
    import re

    for m in request.messages:
        if m.role == "system":
            found = re.search(r"You are the (\w+) stage of Benjy", m.content or "")
            if found:
                return found.group(1)
    return None


def benjy_brain(request: ChatRequest) -> Completion:
    """Benjy's controller stages (recognised by their prompt) and its worker (by its tools)."""
    stage = _stage(request)
    if stage == "INTERPRET":
        return _text({
            "taskType": "coding",
            "criteria": [{"text": f"`python {CHECK_FILE}` passes"}, {"text": "slugify collapses runs of separators"}],
            "items": [{"title": "write slugify() in slug.py", "description": BENJY_GOAL, "criteria": [1, 2]}],
        })
    if stage == "EVALUATE":
        return _text({"verdict": "pass", "reasons": ["the check passes and the code is small and clear"]})
    if stage == "REFLECT":
        return _text({"achieved": "yes", "gaps": []})
    if stage == "ROUTE":
        return _text({"op": "retry", "item": 1, "reason": "the check names the failing case; try again with it"})
    if stage is not None:
        return _text({})
    # The worker: write the file, then report with respond.
    first = next((m.content or "" for m in request.messages if m.role == "user"), "")
    if request.messages[-1].role == "user":
        retry = "previous attempt did not pass" in first
        return _call("file_write", {"path": "slug.py", "content": SLUG_FIXED if retry else SLUG_FIRST})
    return _call("respond", {"message": "slug.py is written.", "awaiting_user_input": False})


BRAINS = {"chat": chat_brain, "structure": structure_brain, "benjy": benjy_brain}


def demo_model(model: str):
    """The ChatModel for a ``demo:<part>`` model string (the factory calls this)."""
    from vance_cli.errors import ConfigError
    from vance_cli.llm.scripted import FunctionModel

    part = model[len(DEMO_PREFIX):]
    brain = BRAINS.get(part)
    if brain is None:
        raise ConfigError(f"unknown demo model {model!r}", hint=f"demo models are: {', '.join(DEMO_PREFIX + b for b in BRAINS)}")
    return FunctionModel(brain, name=model, capabilities=CAPABILITIES)


# ------------------------------------------------------------------ the run


@dataclass
class Demo:
    home: Path
    out: TextIO
    err: TextIO
    json_out: bool = False
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
        workspace = self.home / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / NOTES_FILE).write_text(NOTES, encoding="utf-8")
        self.report = {"home": str(self.home), "workspace": str(workspace), "scripted": True}
        self.say("Vance demo · the model is SCRIPTED (no key, no network); engines, tools, process files are real.")
        self.say(f"state folder: {self.home}")
        total = 4
        self.heading(1, total, "chat: a tool call, and a misbehaving reply corrected")
        self.chat(workspace)
        self.heading(2, total, "structure: a reason loop, and an honest need-more-input")
        self.structure(workspace)
        self.heading(3, total, "benjy: a coding run, a failed check, a retry that sees the error, DONE")
        self.benjy()
        self.heading(4, total, "vance ps: what the demo made")
        self.ps(workspace)
        self.outro()
        return self.report

    def chat(self, workspace: Path) -> None:
        from vance_cli.cli.printer import HeadlessPrinter
        from vance_cli.events import JournalEvent, ToolStarted
        from vance_cli.runtime.runner import Runtime

        scopes, settings = self.context(workspace)
        runtime = Runtime(scopes, settings)
        seen: list[str] = []

        def narrate(event) -> None:
            if isinstance(event, ToolStarted):
                seen.append(f"tool:{event.name}")
            elif isinstance(event, JournalEvent):
                seen.append(f"journal:{event.text}")

        runtime.bus.subscribe(narrate)
        if not self.json_out:
            runtime.bus.subscribe(HeadlessPrinter(out=self.out, err=self.out, verbose=True))
        self.say(f"you> {CHAT_PROMPT}")
        process = runtime.new_process("arthur", model=DEMO_PREFIX + "chat", workspace=workspace)
        with runtime.session(process.id) as proc:
            runtime.send(proc, CHAT_PROMPT, save=False)
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
        from vance_cli.structure.service import StructureRequest, StructureService

        _, settings = self.context(workspace)
        service = StructureService(settings)
        results = []
        for prompt in (STRUCTURE_COMPLETE, STRUCTURE_INCOMPLETE):
            self.say(f"$ vance structure {json.dumps(prompt)} --schema expense.json")
            result = asyncio.run(service.run_structured(
                StructureRequest(prompt=prompt, schema=EXPENSE_SCHEMA, model=DEMO_PREFIX + "structure")))
            if result.status == "ok":
                self.say(f"  ok after {result.iterations} attempt(s): {json.dumps(result.data)}")
            else:
                self.say(f"  {result.status}: {result.need or result.errors}  (exit 3: ask the person, then retry)")
            results.append({"status": result.status, "iterations": result.iterations, "data": result.data, "need": result.need})
        self.report["structure"] = results

    def benjy(self) -> None:
        import shlex
        import sys

        from vance_cli.runtime.benjy import BenjyService
        from vance_cli.runtime.runner import Runtime

        workspace = self.home / "benjy-workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / CHECK_FILE).write_text(CHECK_SCRIPT, encoding="utf-8")
        scopes, settings = self.context(workspace)
        runtime = Runtime(scopes, settings)
        check = f"{shlex.quote(sys.executable)} {CHECK_FILE}"
        service = BenjyService(runtime)
        self.say(f'$ vance benjy run "{BENJY_GOAL}" --check "python {CHECK_FILE}"')
        process, _ = service.start(BENJY_GOAL, workspace=workspace, check=check, model=DEMO_PREFIX + "benjy")
        watch = None
        if not self.json_out:
            watch = runtime.bus.subscribe(BenjyNarrator(self.say))
        try:
            result = asyncio.run(service.run(process.id))
        finally:
            if watch is not None:
                watch()
        status = service.status(process.id)
        failed = [e for item in result.state["items"] for e in item["evidence"] if e.startswith("check ") and "exit 0" not in e]
        for line in failed:
            self.say("  the failed check said: " + line.split(" — ", 1)[-1])
        if result.synthesis and not self.json_out:
            self.say(result.synthesis)
        self.say(f"[{process.id} {result.status.value}] · workspace {workspace}")
        self.report["benjy"] = {
            "process": process.id, "status": result.status.value, "workspace": str(workspace),
            "checks": status["counters"].get("checks"), "workerSpawns": status["counters"].get("workerSpawns"),
            "todos": status["todos"], "failedChecks": failed,
        }

    def ps(self, workspace: Path) -> None:
        from vance_cli.store.files import ProcessStore

        scopes, _ = self.context(workspace)
        from vance_cli.cli.procs import tree_order

        processes, _ = ProcessStore.for_scopes(scopes).list()
        for p, depth in tree_order(processes):
            ident = ("  " * (depth - 1) + "└ " if depth else "") + p.id
            self.say(f"{ident:<27} {p.engine:<7} {p.recipe_name:<16} {p.status.value:<8} {(p.title or '')[:40]}")
        self.report["processes"] = [{"id": p.id, "engine": p.engine, "status": p.status.value, "parent": p.parent}
                                    for p in processes]

    def outro(self) -> None:
        self.say("\nThat was a scripted model. The same with a real one:")
        self.say("  export VANCE_MODEL=openai/gpt-4.1-mini OPENAI_API_KEY=...   # or see: vance doctor")
        self.say(f'  vance chat -p "{CHAT_PROMPT}"')
        self.say(f'  vance structure "{STRUCTURE_COMPLETE}" --schema examples/schemas/expense.json')
        self.say(f'  vance benjy run "{BENJY_GOAL}" --check "python {CHECK_FILE}" --workspace DIR')
        self.say(f"Look at what the demo wrote: VANCE_HOME={self.home} vance ps")


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


def run_demo(*, home: Path | None, json_out: bool, out: TextIO, err: TextIO) -> dict[str, Any]:
    home = (home or default_home()).resolve()
    home.mkdir(parents=True, exist_ok=True)
    return Demo(home=home, out=out, err=err, json_out=json_out).run()
