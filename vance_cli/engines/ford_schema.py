"""Tool calls by schema (issue 18): for models that cannot call tools, one JSON object per turn.

With ``tool_mode = "schema"`` a Ford turn sends no ``tools`` parameter. It asks, under
``response_format``, for one JSON object that must be one of the offered calls::

    {"tool": "file_read", "arguments": {...}} | ... | {"tool": "respond", "arguments": {...}}

(the arguments' schemas are the tools' own), and the reply becomes the native ToolCall it names:
the respond rules, corrections, at-most-once side effects and the journal do not change. The
provider schema and the response format come from llm/output/plan.py (``build_plan``, the one
place that prepares a schema per family, and ``format_chain``: json_schema → json_object → the
schema in the prompt); the reply is read back with json_call's ``parse_reply``.

``tool_mode = "auto"`` resolves here: schema for llama.cpp's ``llama-server`` (json_schema becomes
a grammar: constrained decoding), schema with json_object and the schema in the prompt for
llama-cpp-python's server (it answers json_schema with HTTP 500; its capabilities say
json_schema = false), native for every other family.

The model sees the tools in a section appended to the system prompt (the same bytes on every call,
so a server's prompt cache keeps the prefix), and the history on the wire as text: a call as the
JSON object the model wrote, a result as a user message, because a chat template without tool
support (llama-cpp-python's chatml) drops ``tool`` messages.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vance_cli.engines.ford_text import call_shape
from vance_cli.llm.base import Capabilities, Completion, ToolSpec
from vance_cli.messages import Message, ToolCall

SCHEMA_CORRECTION = (
    "VALIDATION CHECK: your previous response was not one tool call. Reply with exactly one JSON "
    'object {{"tool": <one of: {names}>, "arguments": {{...}}}} and nothing else; to answer the '
    'user, use the tool "respond" with your reply as its "message" argument.'
)
# No call object is written out in the correction: a model that echoes it must not have its echo
# recovered as a call (ford_text.recover_calls) and a placeholder delivered as its answer.
LOCAL_SCHEMA_FAMILIES = ("llama-server", "llama-cpp-python")
# Key in engine_params: the response format of the schema calls, once a provider rejected a better one.
FORMAT_KEY = "tool_format"


def resolve_tool_mode(capabilities: Capabilities) -> str:
    """"native" or "schema" for a model's ``tool_mode`` (see the module docstring)."""
    mode = capabilities.tool_mode
    if mode == "auto":
        return "schema" if capabilities.family in LOCAL_SCHEMA_FAMILIES else "native"
    return mode


def call_schema(specs: Iterable[ToolSpec]) -> dict[str, Any]:
    """One JSON object that must be one of the offered calls."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"tool": {"const": spec.name}, "arguments": spec.parameters or {"type": "object"}},
                "required": ["tool", "arguments"],
                "additionalProperties": False,
            }
            for spec in specs
        ]
    }


@dataclass
class SchemaCalls:
    """How one turn asks for its calls by schema, and how a reply reads back."""

    specs: list[ToolSpec]
    capabilities: Capabilities
    mode: str  # "json_schema" | "json_object" | "prompt"

    @classmethod
    def for_turn(cls, specs: list[ToolSpec], capabilities: Capabilities, remembered: str | None) -> SchemaCalls:
        from vance_cli.llm.output.plan import format_chain

        chain = format_chain(capabilities)
        mode = remembered if remembered in chain else chain[0]
        return cls(specs=specs, capabilities=capabilities, mode=mode)

    def step_down(self) -> str | None:
        """The next response format after a provider rejected this one (None: none left)."""
        from vance_cli.llm.output.plan import format_chain

        chain = format_chain(self.capabilities)
        at = chain.index(self.mode) if self.mode in chain else len(chain) - 1
        if at + 1 >= len(chain):
            return None
        self.mode = chain[at + 1]
        self.__dict__.pop("_plan", None)
        return self.mode

    @property
    def plan(self) -> Any:
        plan = self.__dict__.get("_plan")
        if plan is None:
            from vance_cli.llm.output.plan import build_plan

            plan = self.__dict__["_plan"] = build_plan(
                call_schema(self.specs), self.capabilities, mode=self.mode, require_strict=False, name="tool_call"
            )
        return plan

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.specs]

    def wrap(self, call: dict[str, Any]) -> dict[str, Any]:
        """A call object in the shape the reply takes (inside the plan's envelope when it has one)."""
        from vance_cli.llm.output.plan import RESULT_KEY

        return {RESULT_KEY: call} if self.plan.envelope else call

    def instructions(self) -> str:
        """The tools section of the system prompt: the same text on every call of the process."""
        example = json.dumps(self.wrap({"tool": "<tool name>", "arguments": {}}))
        lines = [
            "## Tools",
            f"You act by calling one tool per reply. Reply with exactly one JSON object and nothing else: {example}",
            "The tool's result comes back in the next message. End every turn with the `respond` tool: its "
            '"message" is what the user reads.',
            "",
        ]
        for spec in self.specs:
            lines.append(f"- `{spec.name}`: {' '.join(spec.description.split())}")
            lines.append(f"  arguments (JSON Schema): {json.dumps(spec.parameters, ensure_ascii=False, separators=(',', ':'))}")
        return "\n".join(lines)

    def correction(self) -> str:
        return SCHEMA_CORRECTION.format(names=", ".join(self.names))

    def wire(self, messages: list[Message]) -> list[Message]:
        """The request messages with the tools section in the system prompt and calls as text."""
        out: list[Message] = []
        section = self.instructions()
        if messages and messages[0].role == "system":
            head, rest = messages[0], messages[1:]
            out.append(head.model_copy(update={"content": f"{head.content}\n\n{section}" if head.content else section}))
        else:
            out.append(Message(role="system", content=section))
            rest = messages
        for m in rest:
            if m.role == "assistant" and m.tool_calls:
                calls = [json.dumps(self.wrap({"tool": c.name, "arguments": _arguments(c)}), ensure_ascii=False) for c in m.tool_calls]
                out.append(Message(role="assistant", content="\n".join(calls)))
            elif m.role == "tool":
                out.append(Message(role="user", content=f"Result of `{m.name}`:\n{m.content or '(the tool returned no output)'}"))
            else:
                out.append(m)
        return out

    def read(self, completion: Completion) -> Completion:
        """The reply as the native call it names, when it is one of the offered calls; else as it
        came (plain text: the engine's recovery and corrections take it from there)."""
        from vance_cli.llm.output.json_call import parse_reply
        from vance_cli.llm.output.plan import RESULT_KEY

        text = completion.text or ""
        if completion.tool_calls or not text.strip():
            return completion
        value, problem = parse_reply(text)
        if problem is not None:
            return completion
        if isinstance(value, dict) and set(value) == {RESULT_KEY}:
            value = value[RESULT_KEY]
        shape = call_shape(value)
        if shape is None or shape[0] not in self.names:
            return completion
        name, arguments = shape
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        call = ToolCall(id=f"call_{secrets.token_hex(6)}", name=name, arguments=raw)
        return completion.model_copy(update={"text": None, "tool_calls": [call]})


def _arguments(call: ToolCall) -> Any:
    try:
        return call.parsed_arguments()
    except ValueError:
        return call.arguments
