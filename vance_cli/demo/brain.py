"""The scripted brain of `vance demo`: ``demo:<part>`` model strings (chat, structure, benjy).

Each brain answers by reading the request, as a model would (the stage's system prompt, the last
message, the worker's first message), so a demo process resumes with the same behaviour. The
texts the demo works on (notes, schema, goal, check script) live here beside the answers to them.
The demo hands ``model_factory`` to its Runtime and StructureService: the model layer knows no
``demo:`` strings.
"""

from __future__ import annotations

import json
from typing import Any

from vance_cli.llm.base import Capabilities, ChatRequest, Completion
from vance_cli.messages import ToolCall, Usage
from vance_cli.names import DEMO_PREFIX

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
    if stage == "REFLECT":  # judged from what the run shows it: a failed item is a gap
        shown = "\n".join(m.content or "" for m in request.messages if m.role == "user")
        failed = [line.strip() for line in shown.splitlines() if "[failed" in line]
        return _text({"achieved": "no", "gaps": failed[:3]} if failed else {"achieved": "yes", "gaps": []})
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
    """The ChatModel for a ``demo:<part>`` model string (what StructureService's factory takes)."""
    from vance_cli.errors import ConfigError
    from vance_cli.llm.scripted import FunctionModel

    part = model[len(DEMO_PREFIX):]
    brain = BRAINS.get(part)
    if brain is None:
        raise ConfigError(f"unknown demo model {model!r}", hint=f"demo models are: {', '.join(DEMO_PREFIX + b for b in BRAINS)}")
    return FunctionModel(brain, name=model, capabilities=CAPABILITIES)


def model_factory(model: str, settings: Any = None):
    """The demo's model factory for a Runtime (model string and settings in, a ChatModel out)."""
    return demo_model(model)
