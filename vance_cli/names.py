"""The names Vance knows, as data: engines, tools, model aliases, transports, sandbox modes, defaults.

Lower floors check a name against this table instead of importing the module that implements it
(a recipe names an engine and its tools long before either is loaded). Each engine and tool name
maps to ``"module:attr"``, loaded on first use by the floor that owns it (engines/__init__.py,
tools/registry.py), like the command table in cli/main.py. Adding an engine or a built-in tool is
one line here plus its module. This file imports nothing of Vance and defines no behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# Engine name -> the engine class. The order is the order error messages list them in.
ENGINES: Mapping[str, str] = MappingProxyType(
    {
        "ford": "vance_cli.engines.ford:FordEngine",
        "arthur": "vance_cli.engines.arthur:ArthurEngine",
        "benjy": "vance_cli.engines.benjy.engine:BenjyEngine",
    }
)
KNOWN_ENGINES: tuple[str, ...] = tuple(ENGINES)

# Built-in tool name -> the factory that builds the Tool (called once per registry).
TOOLS: Mapping[str, str] = MappingProxyType(
    {
        "respond": "vance_cli.tools.respond:make_tool",
        "file_read": "vance_cli.tools.files:make_file_read",
        "file_list": "vance_cli.tools.files:make_file_list",
        "file_write": "vance_cli.tools.files:make_file_write",
        "exec_run": "vance_cli.tools.exec_run:make_tool",
        "structure": "vance_cli.tools.structure_tool:make_tool",
        "process_spawn": "vance_cli.tools.process_tools:make_process_spawn",
        "process_status": "vance_cli.tools.process_tools:make_process_status",
        "process_steer": "vance_cli.tools.process_tools:make_process_steer",
    }
)
KNOWN_TOOLS: tuple[str, ...] = tuple(sorted(TOOLS))

# Tools of a configured MCP server in a recipe's tool list: ``mcp:NAME/TOOL`` or ``mcp:NAME/*``
# (every tool it offers); the model sees each as ``mcp__NAME__TOOL`` (tools/mcp_client.py).
MCP_PREFIX = "mcp:"
MCP_TOOL_PATTERN = r"mcp:([A-Za-z0-9_-]{1,32})/(\*|[^/\s*]+)"

# Model aliases a recipe or `--model` may use; settings map them to model strings.
ALIAS_PREFIX = "default:"
MODEL_ALIASES: tuple[str, ...] = ("default:fast", "default:analyze", "default:code", "default:strong")
# An unset alias falls back to another before model.default: escalation (default:strong, the
# `coding` recipe Benjy escalates to) goes to the model configured for judgement, not the worker's.
ALIAS_FALLBACKS: Mapping[str, str] = MappingProxyType({"default:strong": "default:analyze"})

# The model strings of `vance demo`'s scripted brain (vance_cli/demo/brain.py): ``demo:chat`` and so on.
DEMO_PREFIX = "demo:"

# model.transport: auto picks direct for an OpenAI-style model with an api_base, else litellm.
TRANSPORTS: tuple[str, ...] = ("auto", "litellm", "direct")

# exec.sandbox: auto uses a sandbox when one is available, required refuses to run without one.
SANDBOX_MODES: tuple[str, ...] = ("auto", "required", "off")

# Seconds one model call may take (model.timeout); the connection itself gets less (llm/).
DEFAULT_MODEL_TIMEOUT = 120.0

# [model.temperature]: the sampling temperature sent with every request, per call type (a request's
# ``ChatRequest.purpose``). Low everywhere, zero where the answer is a decision or a record, so an
# evaluation run twice gets the same answers (servers default to 0.8 otherwise).
CALL_TYPES: tuple[str, ...] = ("chat", "worker", "controller", "structure", "summary")
DEFAULT_TEMPERATURES: Mapping[str, float] = MappingProxyType(
    {"chat": 0.2, "worker": 0.2, "controller": 0.0, "structure": 0.0, "summary": 0.2}
)

# [model.retries]: the transport retry budget (llm/retry.py). max_total bounds the whole call,
# attempts and waits included.
DEFAULT_RETRIES: Mapping[str, float | int] = MappingProxyType(
    {
        "attempts": 4,
        "base_delay": 0.5,
        "max_delay": 4.0,
        "max_total": 180.0,
    }
)
