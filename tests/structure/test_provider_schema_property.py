"""Property test: the provider-side schema builder never crashes and always yields a valid schema.

Over generated Draft 2020-12 schemas (nested objects, arrays, combinators, refs, odd keys and
every constraint keyword), for every capability family and response mode: no exception, the
provider schema passes Draft202012Validator.check_schema, and a plan that claims strict OpenAI
output really follows OpenAI's strict rules.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tests.structure.conftest import ANTHROPIC, GEMINI, OPENAI, OTHER
from tests.structure.instances import candidates, probes, provider_reply
from tests.structure.strict_rules import openai_strict_problems, wellformed_problems
from vance_cli.llm.base import Capabilities
from vance_cli.llm.output.plan import build_plan, strip_injected_nulls

KEYS = st.text(alphabet="ab_/~-", min_size=1, max_size=4)
TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(alphabet="xyz", max_size=3))

leaf = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(st.sampled_from(TYPES), st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)),
        "minLength": st.integers(0, 5),
        "maxLength": st.integers(0, 9),
        "pattern": st.sampled_from(["^a+$", "^(?=a)a$", "(x)\\1", "[0-9]{2}"]),
        "format": st.sampled_from(["date-time", "date", "uri", "email", "uuid", "regex", "made-up"]),
        "minimum": st.integers(-3, 3),
        "maximum": st.integers(4, 9),
        "exclusiveMinimum": st.integers(-3, 3),
        "multipleOf": st.integers(1, 3),
        "enum": st.lists(SCALARS, min_size=1, max_size=4),
        "const": SCALARS,
        "default": SCALARS,
        "description": st.text(max_size=8),
        "title": st.text(max_size=5),
        "minItems": st.integers(0, 3),
        "maxItems": st.integers(3, 6),
        "uniqueItems": st.booleans(),
        "x-note": st.text(max_size=3),
    },
)


def _extend(children):
    props = st.dictionaries(KEYS, children, max_size=4)
    return st.one_of(
        st.builds(
            lambda p, req, extra, typed: {
                **({"type": "object"} if typed else {}),
                "properties": p,
                "required": sorted({k for k in p if k in req} | ({"zz"} if not p and req else set())),
                **({"additionalProperties": extra} if extra is not None else {}),
            },
            props,
            st.sets(KEYS, max_size=3),
            st.one_of(st.none(), st.booleans(), children),
            st.booleans(),
        ),
        st.builds(lambda i, extra: {"type": "array", "items": i, **extra}, children, leaf),
        st.builds(lambda xs: {"prefixItems": xs, "type": "array"}, st.lists(children, min_size=1, max_size=2)),
        st.builds(lambda xs, kw: {kw: xs}, st.lists(children, min_size=1, max_size=3), st.sampled_from(["anyOf", "oneOf", "allOf"])),
        st.builds(lambda c: {"not": c}, children),
        st.builds(lambda a, b, c: {"if": a, "then": b, "else": c}, children, children, children),
        st.builds(lambda p, d: {"type": "object", "patternProperties": {"^a": p}, "dependentRequired": d}, children, st.just({"a": ["b"]})),
        st.builds(lambda d: {"$defs": {"d": d}, "$ref": "#/$defs/d"}, children),
        st.just({"$ref": "#"}),
        st.just({"$ref": "#/properties/zz"}),
        st.just({"$ref": "https://example.com/x.json"}),
    )


schemas = st.recursive(st.one_of(leaf, st.booleans()), _extend, max_leaves=12)
CAPS = [
    OPENAI,
    ANTHROPIC,
    ANTHROPIC.model_copy(update={"strict_json_schema": True}),
    GEMINI,
    OTHER,
    Capabilities(family="other", strict_json_schema=True),
]


def _is_valid_schema(schema) -> bool:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema=schemas, caps=st.sampled_from(CAPS), allow_need=st.booleans(), mode=st.sampled_from(["json_schema", "json_object", "prompt"]))
def test_provider_schema_builder_never_crashes_and_yields_a_valid_schema(schema, caps, allow_need, mode):
    assume(_is_valid_schema(schema))
    plan = build_plan(schema, caps, allow_need=allow_need, mode=mode, name="prop")
    if plan.mode != "json_schema":
        assert plan.schema is None
        return
    Draft202012Validator.check_schema(plan.schema)
    assert wellformed_problems(plan.schema) == []  # the corpus test's fast check agrees with the meta-schema
    assert plan.schema.get("type") == "object" or not plan.envelope
    if plan.strict and plan.family == "openai":
        assert openai_strict_problems(plan.schema) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema=schemas, data=st.recursive(SCALARS, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(KEYS, c, max_size=3)), max_leaves=8))
def test_null_stripping_never_crashes(schema, data):
    assume(_is_valid_schema(schema))
    strip_injected_nulls(data, schema)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema=schemas, caps=st.sampled_from(CAPS), allow_need=st.booleans())
def test_no_provider_schema_excludes_a_valid_answer(schema, caps, allow_need):
    """Every value the caller's schema accepts passes the provider schema, in a provider's shape
    (generated values and probes of them: instances.probes)."""
    from vance_cli.schema.check import check_schema
    from vance_cli.schema.reasons import make_validator
    from vance_cli.structure.errors import InvalidSchema

    assume(isinstance(schema, dict))
    try:
        check_schema(schema)  # what every schema meets before a model call
    except InvalidSchema:
        assume(False)
    try:
        caller = make_validator(schema)
        made = candidates(schema)
        # and probes: a key some branch declares, with a value another branch leaves it free to take
        made += [p for v in made[:4] for p in probes(schema, v, limit=8)]
        values = [v for v in made if caller.is_valid(v)]
    except Exception:  # noqa: BLE001 - a generated schema the validator cannot use (e.g. a remote ref)
        return
    plan = build_plan(schema, caps, allow_need=allow_need, name="prop")
    provider = Draft202012Validator(plan.schema)
    for value in values:
        reply, dropped = provider_reply(value, plan.schema, envelope=plan.envelope)
        if not dropped:
            assert provider.is_valid(reply), (value, reply)
