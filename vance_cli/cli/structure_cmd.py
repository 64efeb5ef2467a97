"""`vance structure`: one-shot extraction of a validated JSON object from text.

Output contract: ``ok`` → the data JSON on stdout, exit 0; ``need-more-input`` → the need on
stderr, exit 3; ``stale`` → the errors on stderr, exit 4; ``refused`` (the model declined) → its
refusal on stderr, exit 5; ``--json`` → the whole result object on stdout in every case (same exit
codes). Notes (a reply cut off at max_tokens and asked again) go to stderr. Bad input exits 1 (unreadable file, invalid schema) or 2
(usage) with a message and no traceback (``VANCE_DEBUG=1`` shows one).

``--batch IN`` structures every record of a file or folder instead (``cli/structure_batch.py``,
``structure/batch.py``): one plan, one model client, N records in flight, results appended to OUT.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import typer

EXIT_NEED_MORE_INPUT = 3
EXIT_STALE = 4
EXIT_REFUSED = 5
STATUS_EXIT = {"ok": 0, "need-more-input": EXIT_NEED_MORE_INPUT, "stale": EXIT_STALE, "refused": EXIT_REFUSED}
MODES = ("json", "named", "text")


def guarded(fn: Callable[[], Any], *, json_out: bool = False) -> Any:
    """Run a command body: a VanceError becomes its message and exit code (traceback only with VANCE_DEBUG=1).

    With ``json_out`` a failure also prints an error object on stdout, so a script that parses
    stdout always gets one JSON object: ``{"status": "error", "errors": [...], "hint": ...,
    "errorType": ..., "exitCode": N}``.
    """
    from vance_cli.errors import EXIT_ERROR, VanceError

    try:
        return fn()
    except VanceError as exc:
        if json_out:
            _emit_error(exc.message, exc.hint, type(exc).__name__, exc.exit_code)
        if os.environ.get("VANCE_DEBUG") == "1":
            raise
        from vance_cli.terminal import err

        if exc.exit_code >= 128:  # a signal stopped it: main prints the message (and no line of its own)
            raise
        err(exc.render())
        raise typer.Exit(exc.exit_code) from None
    except (typer.Exit, typer.Abort):  # a chosen exit code, not a failure
        raise
    except Exception as exc:  # a bug: main reports it; the script still gets its JSON object
        if json_out:
            _emit_error(f"internal error: {type(exc).__name__}: {exc}", None, "InternalError", EXIT_ERROR)
        raise


def exit_for(result: Any, *, quiet: bool, stale_head: str) -> None:
    """End a structure call (``vance structure``, ``vance schemas infer``) by its status: ok returns;
    need-more-input, refused and stale say why on stderr (unless ``quiet``: --json printed the
    whole result) and exit 3, 5 and 4. ``stale_head`` is the line above the last errors."""
    from vance_cli.terminal import err

    if result.status == "ok":
        return
    if not quiet:
        if result.status == "need-more-input":
            err(f"need-more-input: {result.need}")
        elif result.status == "refused":
            err(f"refused: the model declined to answer: {result.refusal}")
        else:
            err(stale_head)
            for line in result.errors:
                err(f"- {line}")
    raise typer.Exit(STATUS_EXIT.get(result.status, EXIT_STALE))


def _emit_error(message: str, hint: str | None, kind: str, code: int) -> None:
    from vance_cli.structure.errors import error_object
    from vance_cli.terminal import emit_json

    emit_json(error_object(message, hint, kind, code))


def read_prompt(prompt: str | None) -> str:
    from vance_cli.cli.common import read_stdin_text, require_text
    from vance_cli.errors import UsageError

    if prompt == "-" or (prompt is None and sys.stdin is not None and not sys.stdin.isatty()):
        prompt = read_stdin_text()
    elif prompt is not None:
        require_text(prompt, "the prompt")
    if prompt is None:
        raise UsageError("no prompt given", hint='pass the text as an argument, or pipe it: echo "..." | vance structure - --schema S')
    if not prompt.strip():
        raise UsageError("the prompt is empty", hint='pass the text to structure, e.g. vance structure "Mike broke the build today" --schema S')
    return prompt


def probe_path(text: str) -> tuple[Any, str | None]:
    """(path, kind) when a --schema value names something on disk (kind "file", "dir" or "other"),
    else (None, None). Any other OSError (an unreadable folder on the way) is an InvalidSchema
    naming the path: the value clearly is one, and the user has to fix its permissions."""
    import errno
    import stat
    from pathlib import Path

    from vance_cli.structure.errors import InvalidSchema

    if not text or len(text) >= 4096 or "\n" in text or "\x00" in text or text.startswith(("{", "[")):
        return None, None
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~nosuchuser/..." is no path of this machine
        return None, None
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        # A description longer than a file name may be is just a description.
        if exc.errno in (errno.ENAMETOOLONG, errno.EINVAL, errno.ELOOP):
            return None, None
        raise InvalidSchema(
            f"cannot access schema file {path}: {exc.strerror or exc}",
            hint="check the permissions of the file and of the folders above it",
        ) from exc
    if stat.S_ISDIR(mode):
        return path, "dir"
    return path, "file" if stat.S_ISREG(mode) else "other"


def load_schema_arg(schema: str, mode: str | None, known: Callable[[], list[str]]) -> tuple[Any, str, bool]:
    """(schema value for the service, mode, inferred) from --schema and --mode."""
    from vance_cli.errors import UsageError
    from vance_cli.structure.errors import InvalidSchema
    from vance_cli.structure.service import infer_mode, parse_inline

    if mode is not None and mode not in MODES:
        raise UsageError(f"unknown --mode {mode!r}", hint="use --mode json, named or text")
    text = schema.strip()
    if not text:
        raise UsageError("--schema is empty", hint="pass a schema file, inline JSON, a registry name or a description")
    inferred = mode is None
    # Only json (stated or possible) looks at the disk: a name or a description is never a path.
    path, kind = probe_path(text) if mode in (None, "json") else (None, None)
    looks_like_file = not text.startswith(("{", "[")) and text.endswith(".json") and " " not in text
    if kind is None and mode in (None, "json") and looks_like_file:
        raise InvalidSchema(f"schema file {text} does not exist", hint="check the path, or pass the schema as inline JSON")
    if mode is None:
        # Something on disk was meant as a file (a directory is an error below); otherwise a
        # registry name, JSON, or (with whitespace) a description; a lone unknown word is an error.
        mode = "json" if kind is not None else infer_mode(text, known)
    if mode != "json":
        return text, mode, inferred
    if kind == "dir":
        raise InvalidSchema(
            f"--schema {path} is a directory, not a schema file",
            hint="pass a JSON Schema file, inline JSON, a registry name, or --mode text for a description",
        )
    if kind == "other":
        raise InvalidSchema(f"--schema {path} is not a regular file", hint="pass a JSON Schema file or inline JSON")
    if kind == "file":
        from vance_cli.structure.registry import read_schema_file

        return read_schema_file(path), mode, inferred
    return parse_inline(text), mode, inferred


def schema_in_context(schema: str, mode: str | None) -> tuple[Any, Any, Any, str, bool]:
    """(settings, registry, schema value, mode, inferred): the settings of this folder and --schema read under them."""
    from vance_cli.config.context import load_context
    from vance_cli.structure.registry import DEFAULT_TENANT, SchemaRegistry

    scopes, settings = load_context()
    registry = SchemaRegistry(scopes, tenant_id=str(settings.get("structure.tenantId", DEFAULT_TENANT)))
    value, used_mode, inferred = load_schema_arg(schema, mode, registry.known_names)
    return settings, registry, value, used_mode, inferred


def check_flags(schema: str | None, model: str | None, max_loops: int) -> None:
    """The flags a single call and a batch share: --schema given, --model not empty, --max-loops 1..10."""
    from vance_cli.cli.common import require_text
    from vance_cli.errors import UsageError

    if schema is None:
        raise UsageError("--schema is required", hint="pass a schema file, inline JSON, a registry name or a description")
    require_text(schema, "--schema")
    if model is not None:
        require_text(model, "--model")
        if not model.strip():
            raise UsageError("--model is empty", hint="pass a model string or alias, or leave --model out for structure.model")
    if not 1 <= max_loops <= 10:
        raise UsageError(f"--max-loops must be between 1 and 10, got {max_loops}", hint="use --max-loops 1..10")


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
        json_out: bool = typer.Option(False, "--json", help="Print the whole result object (status, usage, ...) on stdout; with --batch, progress events as JSON lines."),
        batch: str | None = typer.Option(
            None, "--batch", metavar="IN",
            help="Structure every record of IN: a JSONL file (one object per line: the text in 'prompt' or --field, an optional 'id'), "
            "a .csv file (the column 'prompt' or --field, an optional 'id' column) or a folder of text files (one record each, "
            "id = its path). One result line per record in OUT; rerun with the same OUT to go on after a crash. "
            "Exit 0 all ok or need-more-input, 6 any error, stale or refused.",
        ),
        out: str | None = typer.Option(None, "--out", "-o", metavar="OUT", help="With --batch: the results, JSONL, appended as they finish (default: IN's name + .out.jsonl, e.g. notes.jsonl.out.jsonl)."),
        jobs: int | None = typer.Option(None, "--jobs", "-j", help="With --batch: records in flight at once (default: 2 for a model on this machine or network, 8 for a hosted one; 1-64)."),
        field: str | None = typer.Option(None, "--field", help="With --batch: the JSONL field or CSV column with the text (default: prompt)."),
        engine: str | None = typer.Option(None, "--engine", help="With --batch: local (this process, the default) or ray (Ray workers; needs vance-cli[ray])."),
        ray_address: str | None = typer.Option(None, "--ray-address", help="With --engine ray: the Ray cluster (default: RAY_ADDRESS, else a new local instance)."),
    ) -> None:
        """Extract a validated JSON object from text. Exit 0 ok, 3 need-more-input, 4 stale, 5 refused.

        With --batch IN: every record of IN, results in OUT. Exit 0 all ok/need-more-input, 6 any error/stale/refused."""

        def batch_body() -> None:
            import functools

            from vance_cli.cli.common import structure_service
            from vance_cli.cli.structure_batch import check_batch_flags, check_engine_flags, out_path_for, run_batch
            from vance_cli.errors import UsageError

            if prompt is not None:
                raise UsageError("--batch takes its records from IN, not from a prompt argument", hint="drop the prompt, or drop --batch")
            check_flags(schema, model, max_loops)
            check_batch_flags(batch, jobs, field)
            use_engine = check_engine_flags(engine, ray_address)  # no Ray: said here, before anything is read
            out_path = out_path_for(batch, out)
            settings, registry, value, used_mode, _ = schema_in_context(schema, mode)
            run_batch(source=batch, out_path=out_path, service=structure_service(settings, registry), schema=value,
                      mode=used_mode, max_loops=max_loops, model=model, jobs=jobs, field=field, json_out=json_out,
                      engine=use_engine, ray_address=ray_address, make_service=functools.partial(structure_service, settings))

        def body() -> None:
            import asyncio

            from vance_cli.cli.common import structure_service
            from vance_cli.errors import UsageError
            from vance_cli.structure.service import StructureRequest
            from vance_cli.terminal import emit_json, err
            from vance_cli.text import json_text

            given = [flag for flag, value in (("--out", out), ("--jobs", jobs), ("--field", field), ("--engine", engine),
                                              ("--ray-address", ray_address)) if value is not None]
            if given:
                raise UsageError(f"{given[0]} goes with --batch",
                                 hint="vance structure --batch IN --schema S [--out OUT] [--jobs N] [--field F] [--engine ray]")
            check_flags(schema, model, max_loops)
            text = read_prompt(prompt)
            settings, registry, value, used_mode, inferred = schema_in_context(schema, mode)
            service = structure_service(settings, registry)
            request = StructureRequest(prompt=text, schema=value, schemaMode=used_mode, maxLoops=max_loops, model=model)
            result = asyncio.run(service.run_structured(request))
            result.modeInferred = inferred
            if not json_out:
                for note in result.notes:
                    err(f"note: {note}")
            for line in result.warnings or []:
                err(f"warning: {line}")
            if json_out:
                emit_json(result.to_dict())
            elif result.status == "ok":
                sys.stdout.write(json_text(result.data) + "\n")
                sys.stdout.flush()
            if result.stage == "builder":
                stale = f"stale: the schema builder gave no valid schema after {result.builderIterations or 0} attempt(s); last errors:"
            else:
                stale = f"stale: no valid output after {result.iterations} iteration(s); last errors:"
            exit_for(result, quiet=json_out, stale_head=stale)

        guarded(batch_body if batch is not None else body, json_out=json_out)
