"""StructureService: prompt + schema (inline, named, or described) → validated JSON (spec §2.2, §4).

Schema stage:
- ``json``: the inline schema, checked against the meta-schema of the draft its ``$schema``
  declares (none: 2020-12) first (an invalid schema is an InvalidSchema error, no model call);
- ``named``: the registry (project → user/"tenant" → bundled); the manual becomes a system block;
- ``text``: the builder (cached); its confidence gate may end the call with ``need-more-input``.
  The result's ``stage`` says which stage ended the call (``builder`` or ``content``);
  ``builderIterations`` and ``builderNotes`` (the builder call's own downgrades) stay apart from
  ``iterations`` and ``schemaDowngrades``, which are about the content stage and the target schema.

Content stage: ``call_for_json`` with ``allow_need=True`` (the ``_need`` escape), the model from
``structure.model`` (or the request's override), strictness from
``structure.requireProviderStrictOutput``. Models are made by an injectable factory so tests can
hand in scripted models; the default is ``vance_cli.llm.factory.make_model``.

Two steps: ``prepare`` works out what does not depend on the prompt (the schema, checked once; the
system prompt; one model client) as a StructurePlan, and ``run_plan`` runs the content stage for one
prompt under it. ``run_structured`` is both for one call; a batch (``structure/batch.py``) prepares
once and runs the plan per record, N at a time, over the one client.

``structure.requireProviderStrictOutput = true`` (default) asks for the provider's strict mode
whenever the model's capabilities have one and the schema can be expressed in it; ``false`` never
asks for strict output (for models that claim it but fail at it). Either way the caller's exact
schema is validated locally. The user scope's registry origin is ``registry:tenant:<id>`` with
``<id>`` from ``structure.tenantId`` (default ``local``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WrapValidator

from vance_cli.errors import UsageError
from vance_cli.llm.base import ChatModel
from vance_cli.messages import Message, Usage
from vance_cli.schema.check import check_schema
from vance_cli.structure.errors import InvalidSchema

if TYPE_CHECKING:
    from vance_cli.config.settings import Settings
    from vance_cli.structure.registry import SchemaRegistry

SchemaMode = Literal["json", "named", "text"]
MIN_LOOPS, MAX_LOOPS, DEFAULT_LOOPS = 1, 10, 3

CONTENT_SYSTEM_PROMPT = (
    "You convert the user's input into one JSON value that conforms to the given JSON Schema. "
    "Take every value from the input; do not add facts the input does not state."
)


def _as_given(value: Any, handler: Any) -> Any:
    """A schema object stays the caller's object (checked, not copied): its check and its
    prepared form are remembered by identity (schema/check.py, schema/refs.py), and a copy made
    a `--schema FILE` be checked and prepared twice (issue 20: 1.5 s each for a 5.8 MB schema)."""
    checked = handler(value)
    return value if isinstance(value, dict) else checked


class StructureRequest(BaseModel):
    """Spec §2.2 StructureRequest; ``schemaMode`` None means "infer from the schema value"."""

    model_config = ConfigDict(populate_by_name=True)

    prompt: str
    schema_: Annotated[dict[str, Any] | str, WrapValidator(_as_given)] = Field(alias="schema")
    schemaMode: SchemaMode | None = None
    maxLoops: int = DEFAULT_LOOPS
    model: str | None = None  # overrides structure.model (and the builder model) for this call


class StructureUsage(BaseModel):
    calls: int = 0
    promptTokens: int = 0
    completionTokens: int = 0
    totalTokens: int = 0
    cost: float = 0.0

    @classmethod
    def of(cls, usage: Usage) -> StructureUsage:
        return cls(
            calls=usage.calls,
            promptTokens=usage.prompt_tokens,
            completionTokens=usage.completion_tokens,
            totalTokens=usage.total_tokens,
            cost=usage.cost,
        )


class StructureResult(BaseModel):
    """Spec §2.1 return shape plus what a user needs to see the cost and the provider's share."""

    # "refused": the model declined to answer (its words in ``refusal``); not part of spec §2.1's
    # three statuses, which have no place for a refusal: it is neither missing input nor a
    # validation failure, and retrying would only press the model again.
    status: Literal["ok", "need-more-input", "stale", "refused"]
    data: Any = None
    need: str | None = None
    refusal: str | None = None
    errors: list[str] = Field(default_factory=list)
    schemaOrigin: str
    iterations: int = 0
    schemaMode: SchemaMode
    modeInferred: bool = False
    outputMode: str = ""  # "json_schema:strict" | "json_schema" | "json_object" | "prompt" | "" (no content call)
    model: str | None = None
    usage: StructureUsage = Field(default_factory=StructureUsage)
    # Keywords of the *target* schema the provider could not enforce (checked locally anyway);
    # the same for the same schema whether text mode built it now or took it from the cache.
    schemaDowngrades: list[str] = Field(default_factory=list)
    formatFallbacks: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # retries worth knowing about (a reply cut off at max_tokens)
    stage: Literal["builder", "content"] = "content"  # the stage that ended the call (builder: text mode's schema builder)
    schemaCached: bool | None = None  # text mode: the builder's schema came from the cache
    builderIterations: int | None = None  # text mode: builder attempts made (0 on a cache hit)
    builderNotes: list[str] | None = None  # text mode: the builder call's own downgrades and format fallbacks
    warnings: list[str] | None = None  # what went wrong around the call without failing it (e.g. the schema cache)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema", exclude=True)  # the schema used

    model_config = ConfigDict(populate_by_name=True)

    def to_dict(self) -> dict[str, Any]:
        """The wire shape: ``data`` only when ok, ``need`` only when need-more-input, ``errors`` only when stale."""
        out = self.model_dump(by_alias=True)
        if self.status != "ok":
            out.pop("data", None)
        if self.status != "need-more-input":
            out.pop("need", None)
        if self.status != "stale":
            out.pop("errors", None)
        if self.status != "refused":
            out.pop("refusal", None)
        for key in ("schemaCached", "builderIterations", "builderNotes", "warnings"):
            if out.get(key) is None:
                out.pop(key, None)
        return out


def _json_scalar(text: str) -> bool:
    """A JSON number, true, false or null: JSON, but no schema and no plausible description."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return not isinstance(value, (str, dict, list))


def infer_mode(schema: Any, known_names: Callable[[], list[str]] | None = None) -> SchemaMode:
    """Object, "{..." or "[..." → json; a registry name → named; other JSON that is no string → json
    (so it is rejected as "not a JSON object" instead of costing a builder call); else → text.

    With a registry to ask (``known_names``), a single token that names nothing there (no
    whitespace, not JSON) is taken for a mistyped name: SchemaNotFound suggesting the closest
    names. A one-word description needs ``schemaMode`` "text" (``--mode text``)."""
    if not isinstance(schema, str):
        return "json"
    text = schema.strip()
    if text.startswith(("{", "[")):
        return "json"
    names = known_names() if known_names is not None else None
    if names is not None and text in names:
        return "named"
    if _json_scalar(text):
        return "json"
    if names is not None and text and not any(c.isspace() for c in text) and not text.startswith('"'):
        from vance_cli.structure.registry import unknown_schema

        raise unknown_schema(
            text,
            names,
            hint="run `vance schemas list` for the names; to use it as a description of the fields, pass --mode text (schemaMode \"text\")",
        )
    return "text"


def parse_inline(schema: dict[str, Any] | str) -> dict[str, Any]:
    """An inline schema as a dict, checked against its draft's meta-schema (once per object)."""
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise InvalidSchema(
                f"the inline schema is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                hint="pass a JSON Schema object; for a registry name use mode named, for a description mode text",
            ) from exc
    return check_schema(schema, where="the inline schema")


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^a-zA-Z0-9_-]+", "-", text).strip("-")[:64] or "output"


@dataclass
class StructurePlan:
    """What ``StructureService.prepare`` worked out once for many prompts (a batch shares one):
    the checked schema and where it came from, the system prompt, one model client."""

    mode: SchemaMode
    inferred: bool
    schema: dict[str, Any]
    origin: str  # schemaOrigin
    name: str  # the provider schema's name
    system: str  # the content stage's system prompt (with a named schema's manual)
    model_name: str
    model: ChatModel | None  # None when the builder ended the call (``ended``)
    loops: int
    require_strict: bool
    usage: Usage = field(default_factory=Usage)  # what preparing cost (text mode's builder call)
    builder_info: dict[str, Any] = field(default_factory=dict)  # text mode: schemaCached, builderIterations, ...
    ended: StructureResult | None = None  # text mode: the builder's need-more-input / stale / refused


class StructureService:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        model_factory: Callable[[str], ChatModel] | None = None,
        clock: Callable[[], float] = time.time,
        registry: SchemaRegistry | None = None,
    ) -> None:
        self._settings = settings
        self._model_factory = model_factory
        self.clock = clock
        self._registry = registry

    # ------------------------------------------------------------------ wiring

    def settings(self) -> Settings:
        if self._settings is None:
            from vance_cli.config.scopes import Scopes
            from vance_cli.config.settings import Settings

            self._settings = Settings.load(Scopes.discover())
        return self._settings

    def registry(self) -> SchemaRegistry:
        if self._registry is None:
            from vance_cli.structure.registry import DEFAULT_TENANT, SchemaRegistry

            settings = self.settings()
            self._registry = SchemaRegistry(settings.scopes, tenant_id=str(settings.get("structure.tenantId", DEFAULT_TENANT)))
        return self._registry

    def _model(self, name: str) -> ChatModel:
        if self._model_factory is not None:
            return self._model_factory(name)
        from vance_cli.llm.factory import make_model

        return make_model(name, self.settings())

    def resolve_model(self, setting: str, override: str | None) -> str:
        settings = self.settings()
        return settings.resolve_model(override or settings.get(setting, "default:fast"))

    # ------------------------------------------------------------------ the call

    async def run_structured(self, request: StructureRequest, settings: Settings | None = None) -> StructureResult:
        """Run both stages; raises VanceError for bad input or a model call that fails for good.

        The same two steps a batch takes (``prepare`` once, ``run_plan`` per record), for one prompt."""
        if settings is not None and settings is not self._settings:
            self._settings = settings
            self._registry = None
        prompt = (request.prompt or "").strip()
        if not prompt:
            raise UsageError("the prompt is empty", hint="pass the text to structure as the argument or on stdin")
        plan = await self.prepare(request)
        if plan.ended is not None:
            return plan.ended
        return await self.run_plan(plan, prompt, extra_usage=plan.usage)

    async def prepare(self, request: StructureRequest) -> StructurePlan:
        """Everything about a call that does not depend on its prompt, worked out once: the schema
        (checked, looked up or built), the system prompt, the model client. ``request.prompt`` is
        not read. A text-mode builder that ends the call (need-more-input, stale, refused) leaves
        its result in ``ended`` and no model."""
        settings = self.settings()
        loops = request.maxLoops
        if not (MIN_LOOPS <= loops <= MAX_LOOPS):
            raise UsageError(f"maxLoops must be between {MIN_LOOPS} and {MAX_LOOPS}, got {loops}", hint="use --max-loops 1..10")

        mode = request.schemaMode
        inferred = mode is None
        raw = request.schema_
        if isinstance(raw, dict):
            mode, inferred = "json", request.schemaMode is None  # an object is always json (spec §2.1)
        elif mode is None:
            mode = infer_mode(raw, self.registry().known_names)
        require_strict = bool(settings.get("structure.requireProviderStrictOutput", True))
        usage = Usage()
        manual: str | None = None
        builder_info: dict[str, Any] = {}

        if mode == "json":
            schema = parse_inline(raw)
            origin = "inline"
            name = _slug(str(schema.get("title") or "output"))
        elif mode == "named":
            name = str(raw).strip()
            found = self.registry().get(name)
            schema, manual, origin = found.schema, found.manual, found.schema_origin
        else:
            description = str(raw).strip()
            if not description:
                raise UsageError("the schema description is empty", hint="describe the fields you want, e.g. 'name (string), age (integer)'")
            built = await self._build(description, request.model, require_strict)
            usage.add(built.usage)
            builder_info = {
                "schemaCached": built.cached,
                "builderIterations": built.iterations,
                "builderNotes": list(built.downgrades),
                "warnings": list(built.warnings) or None,
            }
            base = {
                "schemaOrigin": "inferred",
                "schemaMode": mode,
                "modeInferred": inferred,
                "iterations": 0,
                "usage": StructureUsage.of(usage),
                "stage": "builder",
                "model": built.model,
                **builder_info,
            }
            ended: StructureResult | None = None
            if built.status == "need-more-input":
                ended = StructureResult(status="need-more-input", need=built.need, schema=built.schema, **base)
            elif built.status == "refused":
                ended = StructureResult(status="refused", refusal=built.refusal, **base)
            elif built.status != "ok" or built.schema is None:
                ended = StructureResult(status="stale", errors=built.errors, **base)
            if ended is not None:
                return StructurePlan(
                    mode=mode, inferred=inferred, schema=built.schema or {}, origin="inferred", name="output",
                    system="", model_name=built.model or "", model=None, loops=loops,
                    require_strict=require_strict, usage=usage, builder_info=builder_info, ended=ended,
                )
            schema = built.schema
            origin = "inferred"
            name = _slug(str(schema.get("title") or "output"))

        model_name = self.resolve_model("structure.model", request.model)
        system = CONTENT_SYSTEM_PROMPT
        if manual:
            system += f"\n\n## Manual for the schema {name!r}\n\n{manual}"
        return StructurePlan(
            mode=mode, inferred=inferred, schema=schema, origin=origin, name=name, system=system,
            model_name=model_name, model=self._model(model_name), loops=loops,
            require_strict=require_strict, usage=usage, builder_info=builder_info,
        )

    def with_model(self, plan: StructurePlan) -> StructurePlan:
        """``plan`` with a model client made by this service: a plan sent to another process (a
        Ray worker of a batch) travels without one (``model=None``) and gets its own there."""
        if plan.ended is not None:
            raise UsageError("this plan has no content stage", hint="its builder ended the call: see plan.ended")
        return replace(plan, model=self._model(plan.model_name))

    async def run_plan(self, plan: StructurePlan, prompt: str, *, extra_usage: Usage | None = None) -> StructureResult:
        """The content stage for one prompt under a prepared plan (``prepare``): the call a batch
        makes per record, sharing the plan's schema and model client. ``extra_usage`` (what
        preparing cost, for a single call) is added to the result's usage. Raises UsageError for
        an empty prompt and ModelError when the model call fails for good."""
        if plan.model is None:
            raise UsageError("this plan has no content stage", hint="its builder ended the call: see plan.ended")
        prompt = (prompt or "").strip()
        if not prompt:
            raise UsageError("the prompt is empty", hint="pass the text to structure as the argument or on stdin")
        messages = [Message(role="system", content=plan.system), Message(role="user", content=prompt)]

        from vance_cli.llm.output.json_call import call_for_json

        out = await call_for_json(
            plan.model,
            messages=messages,
            schema=plan.schema,
            capabilities=plan.model.capabilities,
            max_loops=plan.loops,
            allow_need=True,
            require_strict=plan.require_strict,
            name=plan.name,
        )
        usage = Usage()
        if extra_usage is not None:
            usage.add(extra_usage)
        usage.add(out.usage)
        return StructureResult(
            status=out.status,
            data=out.data,
            need=out.need,
            refusal=out.refusal,
            errors=out.errors,
            schemaOrigin=plan.origin,
            iterations=out.iterations,
            schemaMode=plan.mode,
            modeInferred=plan.inferred,
            outputMode=out.output_mode,
            model=plan.model_name,
            usage=StructureUsage.of(usage),
            schemaDowngrades=list(out.schema_downgrades),
            formatFallbacks=out.format_fallbacks,
            notes=out.notes,
            stage="content",
            schema=plan.schema,
            **plan.builder_info,
        )

    def _builder(self, override: str | None, require_strict: bool):
        from vance_cli.structure.builder import SchemaBuilder, SchemaCache

        settings = self.settings()
        builder_name = self.resolve_model("structure.schemaBuilderModel", override)
        cache = SchemaCache(
            settings.scopes.data_dir(),
            ttl_days=float(settings.get("structure.schemaCacheTtlDays", 7)),
            clock=self.clock,
        )
        return SchemaBuilder(
            lambda: self._model(builder_name),  # made only on a cache miss
            model_name=builder_name,
            cache=cache,
            threshold=float(settings.get("structure.confidenceThreshold", 0.8)),
            require_strict=require_strict,
        )

    async def _build(self, description: str, override: str | None, require_strict: bool):
        return await self._builder(override, require_strict).build(description)

    async def infer_schema(self, description: str, *, model: str | None = None, use_cache: bool = True):
        """`vance schemas infer`: the builder's answer alone, no content call."""
        description = description.strip()
        if not description:
            raise UsageError("the schema description is empty", hint="describe the fields you want, e.g. 'name (string), age (integer)'")
        require_strict = bool(self.settings().get("structure.requireProviderStrictOutput", True))
        return await self._builder(model, require_strict).build(description, use_cache=use_cache)
