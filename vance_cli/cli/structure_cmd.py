"""`vance structure`: one-shot extraction of a validated JSON object from text.

Output contract: ``ok`` → the data JSON on stdout, exit 0; ``need-more-input`` → the need on
stderr, exit 3; ``stale`` → the errors on stderr, exit 4; ``--json`` → the whole result object on
stdout in every case (same exit codes). Bad input exits 1 (unreadable file, invalid schema) or 2
(usage) with a message and no traceback (``VANCE_DEBUG=1`` shows one).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import typer

EXIT_NEED_MORE_INPUT = 3
EXIT_STALE = 4
MODES = ("json", "named", "text")


def guarded(fn: Callable[[], Any]) -> Any:
    """Run a command body: a VanceError becomes its message and exit code (traceback only with VANCE_DEBUG=1)."""
    from vance_cli.errors import VanceError

    try:
        return fn()
    except VanceError as exc:
        if os.environ.get("VANCE_DEBUG") == "1":
            raise
        sys.stderr.write(exc.render() + "\n")
        sys.stderr.flush()
        raise typer.Exit(exc.exit_code) from None


def read_prompt(prompt: str | None) -> str:
    from vance_cli.errors import UsageError

    if prompt == "-" or (prompt is None and not sys.stdin.isatty()):
        prompt = sys.stdin.read()
    if prompt is None:
        raise UsageError("no prompt given", hint='pass the text as an argument, or pipe it: echo "..." | vance structure - --schema S')
    if not prompt.strip():
        raise UsageError("the prompt is empty", hint='pass the text to structure, e.g. vance structure "Mike broke the build today" --schema S')
    return prompt


def load_schema_arg(schema: str, mode: str | None, known: Callable[[], list[str]]) -> tuple[Any, str, bool]:
    """(schema value for the service, mode, inferred) from --schema and --mode."""
    from pathlib import Path

    from vance_cli.errors import UsageError
    from vance_cli.structure.errors import InvalidSchema
    from vance_cli.structure.service import parse_inline

    if mode is not None and mode not in MODES:
        raise UsageError(f"unknown --mode {mode!r}", hint="use --mode json, named or text")
    text = schema.strip()
    if not text:
        raise UsageError("--schema is empty", hint="pass a schema file, inline JSON, a registry name or a description")
    path = Path(text).expanduser() if len(text) < 4096 and "\n" not in text else None
    is_file = path is not None and path.is_file()
    inferred = mode is None
    looks_like_file = not text.startswith("{") and text.endswith(".json") and " " not in text
    if mode in (None, "json") and looks_like_file and not is_file:
        raise InvalidSchema(f"schema file {text} does not exist", hint="check the path, or pass the schema as inline JSON")
    if mode is None:
        if is_file or text.startswith("{"):
            mode = "json"
        elif text in known():
            mode = "named"
        else:
            mode = "text"
    if mode != "json":
        return text, mode, inferred
    if is_file:
        assert path is not None
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidSchema(f"cannot read schema file {path}: {exc}", hint="check the path and the file's permissions") from exc
        try:
            import json

            value = json.loads(raw)
        except ValueError as exc:
            raise InvalidSchema(f"schema file {path} is not valid JSON: {exc}", hint=f"fix the JSON in {path}") from exc
        from vance_cli.structure.errors import check_schema

        return check_schema(value, where=f"schema file {path}"), mode, inferred
    return parse_inline(text), mode, inferred


def register(app: typer.Typer) -> None:
    @app.command("structure")
    def structure(
        prompt: str | None = typer.Argument(None, help="Text to structure; '-' (or no argument with piped input) reads stdin."),
        # Checked by hand, not by click, so a missing or bad value is a Vance usage error (exit 2)
        # with a hint, whatever click flavour the entry point catches.
        schema: str | None = typer.Option(None, "--schema", "-s", help="Required. json: a file or inline JSON; named: a registry name; text: a description."),
        mode: str | None = typer.Option(None, "--mode", help="json | named | text (default: inferred from --schema)."),
        max_loops: int = typer.Option(3, "--max-loops", help="Content-stage iterations (1-10)."),
        model: str | None = typer.Option(None, "--model", help="Model string or alias for this call (default: structure.model)."),
        json_out: bool = typer.Option(False, "--json", help="Print the whole result object (status, usage, ...) on stdout."),
    ) -> None:
        """Extract a validated JSON object from text. Exit 0 ok, 3 need-more-input, 4 stale."""

        def body() -> None:
            import asyncio
            import json

            from vance_cli.cli.common import emit_json, err, load_context
            from vance_cli.errors import UsageError
            from vance_cli.structure.registry import DEFAULT_TENANT, SchemaRegistry
            from vance_cli.structure.service import StructureRequest, StructureService

            if schema is None:
                raise UsageError("--schema is required", hint="pass a schema file, inline JSON, a registry name or a description")
            if not 1 <= max_loops <= 10:
                raise UsageError(f"--max-loops must be between 1 and 10, got {max_loops}", hint="use --max-loops 1..10")
            text = read_prompt(prompt)
            scopes, settings = load_context()
            registry = SchemaRegistry(scopes, tenant_id=str(settings.get("structure.tenantId", DEFAULT_TENANT)))
            value, used_mode, inferred = load_schema_arg(schema, mode, registry.names)
            service = StructureService(settings, registry=registry)
            request = StructureRequest(prompt=text, schema=value, schemaMode=used_mode, maxLoops=max_loops, model=model)
            result = asyncio.run(service.run_structured(request))
            result.modeInferred = inferred
            if json_out:
                emit_json(result.to_dict())
            elif result.status == "ok":
                sys.stdout.write(json.dumps(result.data, ensure_ascii=False) + "\n")
                sys.stdout.flush()
            if result.status == "need-more-input":
                if not json_out:
                    err(f"need-more-input: {result.need}")
                raise typer.Exit(EXIT_NEED_MORE_INPUT)
            if result.status == "stale":
                if not json_out:
                    err(f"stale: no valid output after {result.iterations} iteration(s); last errors:")
                    for line in result.errors:
                        err(f"- {line}")
                raise typer.Exit(EXIT_STALE)

        guarded(body)
