"""The provider-schema converter against schemas nobody on this project wrote.

Corpus (tests/structure/corpus, sources in SOURCES.md): SchemaStore schemas (directly and as
vendored by check-jsonschema) with their positive test documents, the JSON Schemas of some
openai SDK types, and pydantic models in the shapes people write (pydantic_models.py).

For every schema and every capability family:

- the schema passes its own draft's meta-schema check, or fails with a clear InvalidSchema
  (remote refs, a regex Python cannot compile) — never a crash;
- the provider schema is a valid 2020-12 schema (strict_rules.wellformed_problems; the full
  meta-schema too where that is cheap, the property test does the rest); a strict OpenAI plan passes every OpenAI
  strict rule (tests/structure/strict_rules.py); a plan that wanted strict and is not says why;
- every valid instance (the corpus documents, the pydantic samples, and values generated from
  each schema that the caller-side validator accepts) is accepted by the provider schema, in
  the shape a provider would send it (absent optional fields as null, inside the envelope);
  keys left out are only ones the caller's schema never declares;
- what comes back (envelope unwrapped, injected nulls stripped) validates against the caller's
  schema again.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.structure.conftest import ANTHROPIC, GEMINI, OPENAI, OTHER
from tests.structure.corpus import pydantic_models
from tests.structure.instances import candidates, declared_names, provider_reply
from tests.structure.strict_rules import (
    anthropic_problems,
    gemini_problems,
    llama_cpp_reading,
    openai_strict_problems,
    wellformed_problems,
)
from tests.structure.suite_driver import FAMILIES as FAMILY_CAPS
from vance_cli.llm.output.plan import build_plan, strip_injected_nulls
from vance_cli.schema.check import check_schema
from vance_cli.schema.dialects import validator_class
from vance_cli.schema.reasons import make_validator
from vance_cli.structure.errors import InvalidSchema

CORPUS = Path(__file__).resolve().parent / "corpus"
FAMILIES = {
    "openai": OPENAI,
    "anthropic": ANTHROPIC,
    "anthropic-strict": ANTHROPIC.model_copy(update={"strict_json_schema": True}),
    "gemini": GEMINI,
    "other": OTHER,
    "ollama": FAMILY_CAPS["ollama"],  # checked the way llama.cpp reads its schema
}
# Schemas the meta-schema or ref check rejects, and why (each message must say so).
EXPECTED_INVALID = {
    "appsettings": "is not a 'regex'",  # an ECMA-262 named group (?<name>...) Python's re rejects
    "drone-ci": "does not resolve",  # points into kubernetes-definitions.json (remote)
    "foundryvtt-system-manifest": "does not resolve",  # a sibling file of SchemaStore
    "grunt-clean-task": "does not resolve",  # likewise
}


@lru_cache(maxsize=1)
def corpus() -> dict[str, dict[str, Any]]:
    found = {p.stem: json.loads(p.read_text()) for p in sorted((CORPUS / "schemas").glob("*.json"))}
    found.update(pydantic_models.schemas())
    return found


NAMES = sorted(corpus())
VALID = [n for n in NAMES if n not in EXPECTED_INVALID]


def examples(name: str) -> list[Any]:
    folder = CORPUS / "examples" / name
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


@cache
def instances(name: str) -> tuple[Any, ...]:
    """Valid instances: corpus documents and samples (all must be valid) plus generated ones."""
    schema = corpus()[name]
    validator = make_validator(schema)
    given = examples(name) + pydantic_models.SAMPLES.get(name.removeprefix("pydantic-"), [])
    made = [c for c in candidates(schema) if validator.is_valid(c)]
    out: list[Any] = []
    for value in given + made:
        if not any(value == seen for seen in out):
            out.append(value)
    return tuple(out)


@cache
def plan(name: str, family: str, allow_need: bool = True):
    return build_plan(corpus()[name], FAMILIES[family], allow_need=allow_need, name=name)


def test_the_corpus_is_large_and_varied():
    drafts = {validator_class(corpus()[n]).__name__ for n in NAMES}
    assert len(NAMES) >= 100
    assert {"Draft4Validator", "Draft7Validator", "Draft201909Validator", "Draft202012Validator"} <= drafts
    assert sum(len(instances(n)) for n in VALID) >= 300


@pytest.mark.parametrize("name", sorted(EXPECTED_INVALID))
def test_unusable_schemas_fail_with_a_clear_message(name):
    with pytest.raises(InvalidSchema) as exc:
        check_schema(corpus()[name], where=f"schema {name}")
    assert EXPECTED_INVALID[name] in exc.value.message and exc.value.hint


def test_every_other_schema_passes_its_drafts_check_and_every_document_is_valid():
    invalid_docs = []
    for name in VALID:
        schema = corpus()[name]
        assert check_schema(schema, where=name) is schema
        validator = make_validator(schema)
        for i, doc in enumerate(examples(name) + pydantic_models.SAMPLES.get(name.removeprefix("pydantic-"), [])):
            if not validator.is_valid(doc):
                invalid_docs.append(f"{name}#{i}")
    assert invalid_docs == []


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_conversion_is_accepted_or_turns_strict_off_with_a_reason(family):
    wanted = FAMILIES[family].strict_json_schema
    strict = 0
    for name in VALID:
        p = plan(name, family)
        assert wellformed_problems(p.schema) == [], name
        if len(json.dumps(p.schema)) <= 2000:
            Draft202012Validator.check_schema(p.schema)  # the full meta-schema, where it is cheap
        if family == "openai" and p.strict:
            assert openai_strict_problems(p.schema) == [], name
        if family.startswith("anthropic"):
            # strict or not: litellm sends a closed schema as output_format (review 15b)
            assert anthropic_problems(p.schema, strict=p.strict) == [], (name, anthropic_problems(p.schema, strict=p.strict))
        if family == "gemini":
            assert gemini_problems(p.schema) == [], name
        if family == "ollama":
            assert llama_cpp_reading(p.schema)[1] == [], name
        if wanted and not p.strict:
            assert p.downgrades[0].startswith("strict output off: "), name
            assert len(p.downgrades[0]) > len("strict output off: ") + 20, name
        strict += p.strict
    if wanted:
        # Regression guard: pydantic models and the simpler SchemaStore schemas stay strict. 33 until
        # an open alternative stopped borrowing its siblings' keys (it forbade valid answers): a
        # union of open models (pydantic-Pet, openai-ChatCompletionMessage, codex-hooks) turns
        # strict off, saying why ({"kind": "cat", "good_boy": "x"} is valid there, and no closed
        # object accepts every value of "good_boy"). github-issue-forms is strict again: its
        # if/then parts cover every value of the required `type` enum (merge._cover_by_cases).
        # Anthropic strict: 7 more go off past Anthropic's documented limit of 24 optional
        # parameters (aiproj, changie, citation-file-format, csscomb, embrace-config, jovo,
        # prettierrc), which would be a 400 (tests/structure/test_provider_schema_anthropic_rules.py).
        # 22 is exact since review 15b: language-configuration (23 before) carries 31 optional
        # parameters once its definitions are inlined, as litellm sends it.
        assert strict >= (22 if family == "anthropic-strict" else 30)
    else:
        assert strict == 0


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_provider_schema_excludes_a_valid_answer_and_answers_read_back(family):
    checked = 0
    for name in VALID:
        schema = corpus()[name]
        p = plan(name, family)
        provider = Draft202012Validator(llama_cpp_reading(p.schema)[0] if family == "ollama" else p.schema)
        declared = declared_names(schema)
        caller = make_validator(schema)
        for value in instances(name):
            reply, dropped = provider_reply(value, p.schema, envelope=p.envelope)
            assert provider.is_valid(reply), (name, value, [e.message for e in provider.iter_errors(reply)][:3])
            assert not set(dropped) & declared, (name, dropped)
            data = reply["result"] if p.envelope else reply
            if p.nulls_injected:
                data = strip_injected_nulls(data, schema)
            if not dropped:
                assert caller.is_valid(data), (name, value, data)
            checked += 1
    assert checked >= 300
