"""Text mode (spec §3.3): a builder call turns a description into a JSON Schema, with a cache.

The builder answers ``{"schema", "confidence", "clarifyingQuestions"}``; the schema is held to the
simplified meta-schema shipped as ``schemas/_meta-schema.json`` *and* to Draft 2020-12. Up to two
attempts (reason feedback in between), then ``stale``. ``confidence`` below
``structure.confidenceThreshold`` or any clarifying question → ``need-more-input`` with the question,
and no content stage.

Accepted schemas are cached in the TinyDB table ``structure_schema_cache`` of the state scope
(``<state>/data/structure.json``), keyed by sha256 over the normalized description and the builder
model. Normalization trims, collapses runs of whitespace and applies Unicode NFC; it does not
change case, because "userId" and "userid" are different field names. Entries older than
``structure.schemaCacheTtlDays`` (default 7) are ignored and deleted on lookup; the clock is
injectable so tests can move time.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vance_cli.errors import StoreError
from vance_cli.llm.base import ChatModel
from vance_cli.messages import Message, Usage
from vance_cli.text import json_pointer

CACHE_TABLE = "structure_schema_cache"
META_SCHEMA_NAME = "_meta-schema.json"
MAX_BUILDER_ATTEMPTS = 2

BUILDER_SYSTEM_PROMPT = (
    "Convert the following description to JSON Schema 2020-12. Output only the schema, no prose.\n"
    'Answer with one JSON object: {"schema": <the JSON Schema>, "confidence": <0..1, how sure you are '
    'that the schema captures the description>, "clarifyingQuestions": [<questions, only when the '
    "description is ambiguous or incomplete>]}.\n"
    "The schema's root is an object. Use only these keywords: type (object, array, string, number, "
    "integer, boolean), title, description, properties, required, additionalProperties (true/false), "
    "items, minItems, maxItems, uniqueItems, enum, pattern, minLength, maxLength, format, minimum, "
    "maximum, exclusiveMinimum, exclusiveMaximum, multipleOf. List every field in required unless the "
    "description says it is optional. Keep field names as the description writes them."
)


def normalize_description(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def cache_key(description: str, model: str) -> str:
    return hashlib.sha256(f"{normalize_description(description)}\n{model}".encode()).hexdigest()


def load_meta_schema(folder: Path | None = None) -> dict[str, Any]:
    """The simplified meta-schema from the bundled schemas folder."""
    if folder is None:
        from vance_cli.config.scopes import bundled_dir

        folder = bundled_dir("schemas")
    return json.loads((folder / META_SCHEMA_NAME).read_text(encoding="utf-8"))


def answer_schema(meta: dict[str, Any]) -> dict[str, Any]:
    """The builder's reply: the schema (a meta-schema root) plus confidence and questions."""
    root = {k: v for k, v in meta.items() if k not in ("$schema", "$id", "$defs", "title", "description")}
    return {
        "type": "object",
        "properties": {
            "schema": root,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "clarifyingQuestions": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["schema", "confidence", "clarifyingQuestions"],
        "additionalProperties": False,
        "$defs": meta.get("$defs", {}),
    }


class SchemaCache:
    """Built schemas by description hash; expired rows are dropped when met."""

    def __init__(self, data_dir: Path, *, ttl_days: float = 7, clock: Callable[[], float] = time.time) -> None:
        self.data_dir = data_dir
        self.ttl_seconds = float(ttl_days) * 86400.0
        self.clock = clock

    def get(self, description: str, model: str) -> dict[str, Any] | None:
        from tinydb import Query

        from vance_cli.structure.db import DB_FILE, open_db

        if not (self.data_dir / DB_FILE).is_file():
            return None
        key = cache_key(description, model)
        with open_db(self.data_dir) as db:
            table = db.table(CACHE_TABLE)
            row = table.get(Query().key == key)
            if row is None:
                return None
            if self.clock() - float(row.get("created", 0)) > self.ttl_seconds:
                table.remove(Query().key == key)
                return None
            return dict(row)

    def put(self, description: str, model: str, entry: dict[str, Any]) -> None:
        from tinydb import Query

        from vance_cli.structure.db import open_db

        key = cache_key(description, model)
        row = {
            "key": key,
            "description": normalize_description(description),
            "model": model,
            "created": self.clock(),
            **entry,
        }
        with open_db(self.data_dir) as db:
            db.table(CACHE_TABLE).upsert(row, Query().key == key)


@dataclass
class BuildResult:
    status: str  # "ok" | "need-more-input" | "stale" | "refused"
    schema: dict[str, Any] | None = None
    confidence: float | None = None
    clarifying_questions: list[str] = field(default_factory=list)
    need: str | None = None
    errors: list[str] = field(default_factory=list)
    cached: bool = False
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    downgrades: list[str] = field(default_factory=list)
    model: str = ""
    refusal: str | None = None  # status "refused": the builder model's refusal
    warnings: list[str] = field(default_factory=list)  # e.g. the cache could not be written

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            **({"refusal": self.refusal} if self.refusal else {}),
            "schema": self.schema,
            "confidence": self.confidence,
            "clarifyingQuestions": self.clarifying_questions,
            "need": self.need,
            "errors": self.errors,
            "cached": self.cached,
            "iterations": self.iterations,
            "warnings": self.warnings,
            "model": self.model,
            "usage": {
                "calls": self.usage.calls,
                "promptTokens": self.usage.prompt_tokens,
                "completionTokens": self.usage.completion_tokens,
                "totalTokens": self.usage.total_tokens,
                "cost": self.usage.cost,
            },
        }


def _draft_check(answer: Any) -> list[str]:
    """Draft 2020-12 validity of the built schema (the meta-schema check already passed)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    schema = answer.get("schema") if isinstance(answer, dict) else None
    try:
        Draft202012Validator.check_schema(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    except SchemaError as exc:
        where = json_pointer(["schema", *exc.absolute_path])
        return [f"{where}: not a valid JSON Schema 2020-12 ({exc.message})"]
    return []


def _need_text(questions: list[str], confidence: float, threshold: float) -> str:
    if questions:
        return " ".join(q.strip() for q in questions if q.strip())
    return (
        f"the schema description is too vague to build a schema from (builder confidence {confidence:.2f} "
        f"< {threshold:g}); describe each field with its type"
    )


class SchemaBuilder:
    def __init__(
        self,
        model: ChatModel | Callable[[], ChatModel],
        *,
        model_name: str,
        cache: SchemaCache | None = None,
        threshold: float = 0.8,
        require_strict: bool = True,
        meta_schema: dict[str, Any] | None = None,
    ) -> None:
        # A zero-argument factory defers making the model (and importing a transport) until a cache miss.
        self._model = model
        self.model_name = model_name
        self.cache = cache
        self.threshold = float(threshold)
        self.require_strict = require_strict
        self.meta_schema = meta_schema if meta_schema is not None else load_meta_schema()

    @property
    def model(self) -> ChatModel:
        if not isinstance(self._model, ChatModel):
            self._model = self._model()
        return self._model

    def _gate(self, result: BuildResult) -> BuildResult:
        conf = result.confidence if result.confidence is not None else 0.0
        if result.clarifying_questions or conf < self.threshold:
            result.status = "need-more-input"
            result.need = _need_text(result.clarifying_questions, conf, self.threshold)
        return result

    async def build(self, description: str, *, use_cache: bool = True) -> BuildResult:
        from vance_cli.llm.output.json_call import call_for_json

        warnings: list[str] = []
        if use_cache and self.cache is not None:
            hit = self._cache_call(warnings, self.cache.get, description, self.model_name)
            if hit is not None:
                return self._gate(
                    BuildResult(
                        status="ok",
                        schema=hit.get("schema"),
                        confidence=float(hit.get("confidence", 1.0)),
                        clarifying_questions=list(hit.get("clarifyingQuestions") or []),
                        cached=True,
                        model=self.model_name,
                    )
                )

        messages = [
            Message(role="system", content=BUILDER_SYSTEM_PROMPT),
            Message(role="user", content=description),
        ]
        out = await call_for_json(
            self.model,
            messages=messages,
            schema=answer_schema(self.meta_schema),
            max_loops=MAX_BUILDER_ATTEMPTS,
            allow_need=False,
            require_strict=self.require_strict,
            name="json_schema_builder",
            extra_check=_draft_check,
        )
        result = BuildResult(
            status=out.status,
            iterations=out.iterations,
            usage=out.usage,
            downgrades=out.schema_downgrades + out.format_fallbacks,
            model=self.model_name,
            warnings=warnings,
        )
        if out.status == "refused":
            result.refusal = out.refusal
            return result
        if out.status != "ok":
            result.status = "stale"
            result.errors = [f"schema builder: {e}" for e in out.errors]
            return result
        answer = out.data
        result.schema = answer["schema"]
        result.confidence = float(answer["confidence"])
        result.clarifying_questions = [q for q in answer.get("clarifyingQuestions", []) if str(q).strip()]
        result = self._gate(result)
        if result.status == "ok" and use_cache and self.cache is not None:
            # Only accepted schemas are cached: a rephrased or repeated vague description gets a fresh try.
            self._cache_call(
                warnings,
                self.cache.put,
                description,
                self.model_name,
                {"schema": result.schema, "confidence": result.confidence, "clarifyingQuestions": result.clarifying_questions},
            )
        return result

    @staticmethod
    def _cache_call(warnings: list[str], fn: Callable[..., Any], *args: Any) -> Any:
        """A cache lookup or store; a cache that cannot be read or written is a warning, not a failure."""
        try:
            return fn(*args)
        except StoreError as exc:
            line = f"the schema cache was not used: {exc.message}"
            if line not in warnings:
                warnings.append(line)
            return None
