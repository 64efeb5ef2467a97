"""The built-in `structure` tool (structure-tool spec §2.1): a thin wrapper around StructureService.

The result object (status, data | need | errors, schemaOrigin, iterations, usage, ...) goes back to
the calling model as JSON text. ``need-more-input``, ``stale`` and ``refused`` (the model declined,
its words in ``refusal``) are results, not tool errors: the caller decides whether to ask the user,
retry or give up. Bad input (an invalid inline schema,
an unknown schema name) is an error result naming the fix.

Settings come from ``ToolContext.settings``, the model for a model string from
``ToolContext.model_factory`` (the runtime's, so a ``demo:`` model stays the demo's brain).
"""

from __future__ import annotations

import json
from typing import Any

from vance_cli.tools.base import Tool, ToolContext, ToolResult

STRUCTURE = "structure"

DESCRIPTION = (
    "Convert free-form content into a validated JSON object. Provide a prompt describing what "
    "should be extracted, plus a schema (JSON Schema, registry name, or natural-language "
    "description). Returns the validated JSON, or an error indicating missing information "
    "(status need-more-input: ask the user, then call again with the answer added to the prompt)."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "Free-form input text to be structured."},
        "schema": {
            # anyOf, not the spec's oneOf: the alternatives are disjoint anyway, and every provider
            # accepts anyOf in tool parameters.
            "anyOf": [
                {"type": "object", "description": "JSON Schema 2020-12, inline."},
                {
                    "type": "string",
                    "description": (
                        "Schema name in registry (when schemaMode=named) OR natural-language "
                        "description (when schemaMode=text)."
                    ),
                },
            ]
        },
        "schemaMode": {
            # No "default": omitting it does not mean json, it means inference (StructureService.infer_mode).
            "type": "string",
            "enum": ["json", "named", "text"],
            "description": (
                "How to read 'schema'. Omitted: inferred — object → json, a registered name → named, "
                "else text. Ignored when 'schema' is an object (always json)."
            ),
        },
        "maxLoops": {"type": "integer", "default": 3, "minimum": 1, "maximum": 10},
    },
    "required": ["prompt", "schema"],
    "additionalProperties": False,
}


async def _run(args: dict[str, Any], ctx: ToolContext, *, error_json: bool = False) -> ToolResult:
    from vance_cli.errors import VanceError
    from vance_cli.structure.service import StructureRequest, StructureService

    settings = ctx.settings
    if settings is None:
        from vance_cli.config.scopes import Scopes
        from vance_cli.config.settings import Settings

        settings = Settings.load(Scopes.discover())
    service = StructureService(settings, model_factory=ctx.model_factory)
    # schemaMode stays None when omitted, so the service infers it and reports modeInferred.
    request = StructureRequest(
        prompt=args["prompt"],
        schema=args["schema"],
        schemaMode=args.get("schemaMode"),
        maxLoops=int(args.get("maxLoops", 3)),
        model=args.get("model"),
    )
    try:
        result = await service.run_structured(request)
    except VanceError as exc:
        from vance_cli.structure.errors import error_object

        failure = error_object(exc.message, exc.hint, type(exc).__name__, exc.exit_code)
        if error_json:  # vance mcp serve: exactly what `vance structure --json` prints
            return ToolResult(content=json.dumps(failure, ensure_ascii=False), ok=False, data=failure)
        return ToolResult(content=f"ERROR: structure: {exc.said()}", ok=False, data=failure)
    payload = result.to_dict()
    return ToolResult(content=json.dumps(payload, ensure_ascii=False), ok=True, data=payload)


MODEL_PARAMETER: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": "Model string or alias for this call (default: the structure.model setting).",
}


def make_tool(*, with_model: bool = False) -> Tool:
    """The tool a chat model calls; ``with_model`` adds the ``model`` argument (`vance mcp serve`:
    the caller may pick the model, as `vance structure --model` does; a chat model may not) and
    answers a failure with the error object of `vance structure --json`, as JSON text."""
    parameters = PARAMETERS
    run = _run
    if with_model:
        parameters = {**PARAMETERS, "properties": {**PARAMETERS["properties"], "model": MODEL_PARAMETER}}

        async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            return await _run(args, ctx, error_json=True)

    return Tool(name=STRUCTURE, description=DESCRIPTION, parameters=parameters, run=run)
