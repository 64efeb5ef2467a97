"""`vance schemas list|show|add|rm|infer|plan`: the schema registry from the command line.

``add`` and ``rm`` manage the override table (TinyDB) of the project or user scope; files in a
scope's ``schemas/`` folder are edited by hand. ``infer`` previews the text-mode builder's schema
and confidence without a content call (exit 3 when the confidence gate would stop, 4 when the
builder fails). ``plan`` shows what a structure call would ask of a model's provider (the schema
sent, the format, every downgrade, strict or why not) without calling it: the capabilities come
from the model's profile (the provider table, litellm's model map file, config.toml).
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from vance_cli.cli.structure_cmd import exit_for, guarded


def _registry():
    from vance_cli.config.context import load_context
    from vance_cli.structure.registry import DEFAULT_TENANT, SchemaRegistry

    scopes, settings = load_context()
    return SchemaRegistry(scopes, tenant_id=str(settings.get("structure.tenantId", DEFAULT_TENANT))), settings


def register(app: typer.Typer) -> None:
    schemas = typer.Typer(
        name="schemas",
        help="Named schemas for `vance structure --mode named` (project → user → bundled).",
        no_args_is_help=True,
    )

    @schemas.command("list")
    def list_(json_out: bool = typer.Option(False, "--json", help="One JSON object per schema.")) -> None:
        """List every schema; shadowed entries are marked with the origin that wins, broken ones warned about on stderr."""

        def body() -> None:
            from vance_cli.terminal import emit_json, err, out

            registry, _ = _registry()
            entries, broken = registry.scan()
            # A broken entry is skipped, not fatal: say which file and what is wrong, keep exit 0.
            for b in broken:
                what = f"schema {b.name!r}" if b.name else "schemas"
                err(f"warning: skipped {what} from {b.source}: {b.problem}")
            if json_out:
                for e in entries:
                    row = e.schema.as_dict()
                    row.pop("schema")
                    row["manual"] = bool(row["manual"])
                    row["shadowedBy"] = e.shadowed_by
                    emit_json(row)
                return
            if not entries:
                sys.stdout.write("no schemas\n")
                return
            width = max(len(e.schema.name) for e in entries)
            owidth = max(len(e.schema.schema_origin) for e in entries)
            for e in entries:
                s = e.schema
                note = f"  (shadowed by {e.shadowed_by})" if e.shadowed_by else ""
                manual = " +manual" if s.manual else ""
                out(f"{s.name:<{width}}  {s.schema_origin:<{owidth}}  v{s.version:<5} {s.description}{manual}{note}")

        guarded(body)

    @schemas.command("show")
    def show(
        name: str = typer.Argument(..., help="Schema name."),
        manual: bool = typer.Option(False, "--manual", help="Print the manual instead of the schema."),
        json_out: bool = typer.Option(False, "--json", help="The whole entry (schema, manual, origin, version) as JSON."),
    ) -> None:
        """Print a schema (stdout) and where it comes from (stderr)."""

        def body() -> None:

            from vance_cli.terminal import emit_json, err, out
            from vance_cli.text import json_text

            registry, _ = _registry()
            found = registry.get(name)
            if json_out:
                emit_json(found.as_dict())
                return
            if manual:
                out(found.manual or "")
                if not found.manual:
                    err(f"{name} has no manual")
                return
            sys.stdout.write(json_text(found.schema, indent=2) + "\n")
            err(f"# {found.schema_origin}, version {found.version}, {found.source}" + (", with manual" if found.manual else ""))

        guarded(body)

    @schemas.command("add")
    def add(
        name: str = typer.Argument(..., help="Schema name (letters, digits, - _ .)."),
        file: Path = typer.Argument(..., help="The JSON Schema file ('-': stdin)."),  # noqa: B008 - typer idiom
        manual: Path | None = typer.Option(None, "--manual", help="A Markdown manual for the content stage."),  # noqa: B008
        scope: str | None = typer.Option(None, "--scope", help="project | user (default: project if there is one, else user)."),
    ) -> None:
        """Add or replace an override; replacing bumps the minor version."""

        def body() -> None:

            from vance_cli.structure.errors import InvalidSchema
            from vance_cli.structure.registry import MAX_SCHEMA_FILE_BYTES, check_name, parse_schema_json
            from vance_cli.terminal import err

            check_name(name)
            path = Path(file).expanduser()
            if str(file) == "-":  # the schema on stdin (bounded, like every stdin read)
                from vance_cli.cli.common import read_stdin_text

                raw = read_stdin_text()
            else:
                try:
                    if path.is_file() and path.stat().st_size > MAX_SCHEMA_FILE_BYTES:
                        raise InvalidSchema(
                            f"schema file {path} is larger than {MAX_SCHEMA_FILE_BYTES // (1024 * 1024)} MiB",
                            hint="a JSON Schema is a few KB; check the path",
                        )
                    with path.open("rb") as f:
                        data = f.read(MAX_SCHEMA_FILE_BYTES + 1)
                    if len(data) > MAX_SCHEMA_FILE_BYTES:  # a pipe or device (/dev/stdin, /dev/zero)
                        raise InvalidSchema(
                            f"schema file {path} is larger than {MAX_SCHEMA_FILE_BYTES // (1024 * 1024)} MiB; it was not read to its end",
                            hint="a JSON Schema is a few KB; check the path",
                        )
                    raw = data.decode("utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise InvalidSchema(f"cannot read schema file {path}: {exc}", hint="check the path") from exc
            schema = parse_schema_json(raw, f"schema file {file}", fix=f"fix the JSON in {file}")
            manual_text = None
            if manual is not None:
                try:
                    manual_text = Path(manual).expanduser().read_text(encoding="utf-8").strip() or None
                except (OSError, UnicodeDecodeError) as exc:
                    raise InvalidSchema(f"cannot read manual file {manual}: {exc}", hint="check the path") from exc
            registry, _ = _registry()
            added = registry.add(name, schema, manual=manual_text, scope=scope)
            err(f"added {added.name} version {added.version} as {added.schema_origin} ({added.source})")

        guarded(body)

    @schemas.command("rm")
    def rm(
        name: str = typer.Argument(..., help="Schema name."),
        scope: str | None = typer.Option(None, "--scope", help="project | user (default: the first scope that has it)."),
    ) -> None:
        """Remove an override (files and bundled schemas are not touched)."""

        def body() -> None:
            from vance_cli.terminal import err

            registry, _ = _registry()
            removed = registry.remove(name, scope=scope)
            err(f"removed {removed.name} ({removed.schema_origin})")
            now = registry.find(name)
            if now is not None:
                err(f"{name} now resolves to {now.schema_origin}")

        guarded(body)

    @schemas.command("infer")
    def infer(
        description: str = typer.Argument(..., help="What the output should contain, in words."),
        model: str | None = typer.Option(None, "--model", help="Builder model (default: structure.schemaBuilderModel)."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Ask the builder even when the cache has an answer."),
        json_out: bool = typer.Option(False, "--json", help="The builder's whole answer as JSON."),
    ) -> None:
        """Preview the schema the text mode would build, with its confidence."""

        def body() -> None:
            import asyncio

            from vance_cli.cli.common import structure_service
            from vance_cli.terminal import emit_json, err
            from vance_cli.text import json_text

            registry, settings = _registry()
            service = structure_service(settings, registry)
            built = asyncio.run(service.infer_schema(description, model=model, use_cache=not no_cache))
            for line in built.warnings:
                err(f"warning: {line}")
            if json_out:
                emit_json(built.as_dict())
            else:
                if built.schema is not None:
                    sys.stdout.write(json_text(built.schema, indent=2) + "\n")
                if built.confidence is not None:
                    err(f"confidence {built.confidence:.2f}" + (" (cached)" if built.cached else ""))
                for q in built.clarifying_questions:
                    err(f"question: {q}")
            exit_for(built, quiet=json_out, stale_head="stale: the builder gave no valid schema; last errors:")

        guarded(body)

    @schemas.command("plan")
    def plan(
        schema: str = typer.Argument(..., help="A registry name, a schema file or JSON text."),
        model: str | None = typer.Option(None, "--model", help="Model alias or litellm model string (default: structure.model)."),
        json_out: bool = typer.Option(False, "--json", help="One JSON object: model, family, format, strict, strictOff, downgrades, schema."),
    ) -> None:
        """Show the schema a structure call would send to MODEL's provider, the response format, every
        downgrade (JSON pointer and reason) and whether strict is on, and if not why. No model call."""

        def body() -> None:
            from vance_cli.cli.common import require_text
            from vance_cli.errors import UsageError
            from vance_cli.llm.output.plan import build_plan, format_chain, plan_report
            from vance_cli.terminal import emit_json

            require_text(schema, "SCHEMA")
            if model is not None:
                require_text(model, "--model")
                if not model.strip():
                    raise UsageError("--model is empty", hint="pass a model string or alias, or leave --model out for structure.model")
            registry, settings = _registry()
            value, origin = _plan_schema(schema, registry)
            asked = (model or "").strip() or str(settings.get("structure.model", "default:fast"))
            model_name = settings.resolve_model(asked)
            caps, notes = _offline_capabilities(model_name, asked, settings)
            require_strict = bool(settings.get("structure.requireProviderStrictOutput", True))
            built = build_plan(value, caps, mode=format_chain(caps)[0], allow_need=True, require_strict=require_strict)
            report = {**plan_report(built, caps, model=model_name, require_strict=require_strict), "schemaOrigin": origin, "notes": notes}
            if json_out:
                emit_json(report)
            else:
                _print_plan(report)

        guarded(body, json_out=json_out)

    app.add_typer(schemas, name="schemas")


def _plan_schema(text: str, registry) -> tuple[dict, str]:
    """(checked schema, origin) for ``vance schemas plan``'s SCHEMA: resolved as ``vance structure
    --schema`` resolves it (a file, JSON text or a registry name); a description is refused, since
    building a schema from one takes a model call."""
    from vance_cli.cli.structure_cmd import load_schema_arg
    from vance_cli.errors import UsageError
    from vance_cli.structure.errors import SchemaNotFound
    from vance_cli.structure.service import parse_inline

    if not text.strip():
        raise UsageError("SCHEMA is empty", hint="pass a registry name, a schema file or JSON text")
    from vance_cli.structure.errors import InvalidSchema

    try:
        value, mode, _ = load_schema_arg(text, None, registry.known_names)
    except SchemaNotFound:
        registry.get(text.strip())  # the same did-you-mean, with this command's options in the hint
        raise
    except InvalidSchema as exc:
        if "not valid JSON" not in str(exc):
            raise
        # the shared hint names `vance structure`'s --mode, which this command does not have
        raise InvalidSchema(str(exc), hint="pass a JSON Schema object, a schema file or a registry name") from exc
    if mode == "text":
        raise UsageError(
            "SCHEMA is a registry name, a schema file or JSON text, not a description",
            hint="build a schema from a description with `vance schemas infer DESCRIPTION` (a model call), then plan its output",
        )
    if mode == "named":
        found = registry.get(value)
        return found.schema, found.schema_origin
    return parse_inline(value), "inline"


def _offline_capabilities(model: str, asked: str, settings) -> tuple[object, list[str]]:
    """(capabilities, notes) of a resolved model string without calling it or importing litellm:
    a demo or scripted model's own, else its profile's (the provider table, litellm's model map
    file, config.toml). An unknown bare name is a ConfigError suggesting the closest known one."""
    from vance_cli.llm.factory import SCRIPTED_PREFIX
    from vance_cli.names import DEMO_PREFIX

    if model.startswith((SCRIPTED_PREFIX, DEMO_PREFIX)):
        from vance_cli.cli.common import model_factory

        return model_factory(model, settings).capabilities, []
    _check_model_name(model, asked, settings)
    from vance_cli.llm.profile import profile_for

    profile = profile_for(model, settings)
    notes = []
    if profile.detect_server:
        notes.append(
            f"the server at {profile.api_base} is asked what it is on the first call (a llama.cpp server gets its "
            "own family); this plan uses the provider table's answer"
        )
    return profile.capabilities, notes


def _check_model_name(model: str, asked: str, settings) -> None:
    """A model string litellm can route: a provider prefix, a model configured in config.toml (or
    an api_base for it), or a name litellm's model map knows."""
    from vance_cli.errors import ConfigError
    from vance_cli.llm import model_map
    from vance_cli.names import MODEL_ALIASES
    from vance_cli.text import did_you_mean

    configured = [m for m in (settings.get("models") or {}) if isinstance(m, str)]
    if "/" in model or ":" in model or model in configured or settings.model_options(model).get("api_base"):
        return
    if model_map.model_info(model) is not None:
        return
    aliases = [a for a in (*MODEL_ALIASES, *(settings.get("aliases") or {})) if isinstance(a, str)]
    via = f" ({asked} resolves to it)" if asked != model else ""
    raise ConfigError(
        f"unknown model {model!r}{via}{did_you_mean(model, [*aliases, *configured, *model_map.names()])}",
        hint="pass a litellm model string (with its provider, e.g. openai/gpt-4o-mini), an alias such as "
        "default:fast, or a model configured with an api_base in config.toml",
    )


def _print_plan(report: dict) -> None:
    from vance_cli.terminal import out
    from vance_cli.text import json_text

    rules = f", {report['rules']} rules" if report["rules"] != report["family"] else ""
    out(f"model       {report['model']} (family {report['family']}{rules})")
    out(f"schema      {report['schemaOrigin']}")
    out(f"format      {report['format']}")
    off = report["strictOff"]
    if report["strict"]:
        out("strict      on")
    else:
        where = f"{off['pointer']} is " if off and off["pointer"] else ""
        out(f"strict      off: {where}{off['reason']}" if off else "strict      off")
    for note in report["notes"]:
        out(f"note        {note}")
    by_reason: dict[tuple[str, str], list[str]] = {}
    for d in report["downgrades"]:
        by_reason.setdefault((d["reason"], d["in"]), []).append(d["pointer"])
    out(f"downgrades  {len(report['downgrades'])}" if by_reason else "downgrades  none")
    for (reason, where), pointers in by_reason.items():
        sent = " (in the schema sent)" if where == "sent" else ""
        out(f"  {', '.join(pointers)}{sent}: {reason}")
    if report["schema"] is None:
        out("schema sent none: the prompt carries your schema as written")
        return
    out("schema sent")
    out(json_text(report["schema"], indent=2))
