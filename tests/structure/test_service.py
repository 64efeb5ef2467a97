"""StructureService: every status path, each schema mode, origins, manuals, settings, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.structure.conftest import OPENAI, OTHER
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.errors import ConfigError, UsageError
from vance_cli.structure.errors import InvalidSchema, SchemaNotFound
from vance_cli.structure.service import StructureRequest, StructureService, infer_mode

UAR_OK = {
    "userId": "mike",
    "action": "broke_build",
    "timestamp": "2026-05-06T14:30:00Z",
    "status": "failure",
    "tags": None,
}
INLINE = {
    "type": "object",
    "title": "task",
    "properties": {"name": {"type": "string"}, "priority": {"type": "integer", "maximum": 5}},
    "required": ["name", "priority"],
    "additionalProperties": False,
}
BUILT = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


class Models:
    """A model factory handing out scripted models per resolved model name, recording the names."""

    def __init__(self, scripted, **replies) -> None:
        self.scripted = scripted
        self.replies = replies
        self.made: dict[str, object] = {}
        self.names: list[str] = []

    def __call__(self, name: str):
        self.names.append(name)
        if name not in self.made:
            self.made[name] = self.scripted(*self.replies.get(name.replace("/", "_").replace(":", "_"), []), caps=OPENAI, name=name)
        return self.made[name]


def settings(**overrides) -> Settings:
    base = {"model.default": "openai/content"}
    base.update(overrides)
    return Settings.load(Scopes.discover(), env={}, overrides=base)


def envelope(data=None, need=None):
    return {"result": data, "_need": need}


async def run(service: StructureService, **kw):
    return await service.run_structured(StructureRequest(**kw))


# -- json mode -----------------------------------------------------------------------------------


async def test_inline_schema_ok(scripted):
    models = Models(scripted, openai_content=[envelope({"name": "fix", "priority": 2})])
    result = await run(StructureService(settings(), model_factory=models), prompt="fix it, prio 2", schema=INLINE)
    assert result.status == "ok" and result.data == {"name": "fix", "priority": 2}
    assert result.schemaOrigin == "inline" and result.schemaMode == "json" and result.iterations == 1
    assert result.usage.calls == 1 and result.usage.totalTokens == 15 and result.usage.cost == pytest.approx(0.001)
    assert result.outputMode == "json_schema:strict" and result.model == "openai/content"
    d = result.to_dict()
    assert "need" not in d and "errors" not in d and d["data"] == {"name": "fix", "priority": 2}
    assert models.names == ["openai/content"]


async def test_inline_schema_as_json_text_is_parsed(scripted):
    models = Models(scripted, openai_content=[envelope({"name": "a", "priority": 1})])
    result = await run(StructureService(settings(), model_factory=models), prompt="a", schema=json.dumps(INLINE), schemaMode="json")
    assert result.status == "ok" and result.schemaOrigin == "inline"


async def test_invalid_inline_schema_is_an_error_before_any_model_call(scripted):
    models = Models(scripted)
    service = StructureService(settings(), model_factory=models)
    with pytest.raises(InvalidSchema, match="not a valid JSON Schema"):
        await run(service, prompt="x", schema={"type": "object", "properties": {"a": {"type": "strin"}}})
    with pytest.raises(InvalidSchema, match="not valid JSON"):
        await run(service, prompt="x", schema="{broken", schemaMode="json")
    assert models.names == []


async def test_stale_after_max_loops(scripted):
    bad = envelope({"name": "a", "priority": 9})
    models = Models(scripted, openai_content=[bad, bad])
    result = await run(StructureService(settings(), model_factory=models), prompt="a", schema=INLINE, maxLoops=2)
    assert result.status == "stale" and result.iterations == 2
    assert result.errors == ["/priority: value must be ≤ 5 (was 9)"]
    d = result.to_dict()
    assert "data" not in d and d["errors"] == result.errors


async def test_need_more_input(scripted):
    models = Models(scripted, openai_content=[envelope(None, "the priority is not in the input")])
    result = await run(StructureService(settings(), model_factory=models), prompt="fix it", schema=INLINE)
    assert result.status == "need-more-input" and result.need == "the priority is not in the input"
    assert result.to_dict()["need"] == result.need and "data" not in result.to_dict()


async def test_bad_request_values(scripted):
    service = StructureService(settings(), model_factory=Models(scripted))
    with pytest.raises(UsageError, match="prompt is empty"):
        await run(service, prompt="   ", schema=INLINE)
    for loops in (0, 11):
        with pytest.raises(UsageError, match="maxLoops"):
            await run(service, prompt="x", schema=INLINE, maxLoops=loops)


# -- named mode ----------------------------------------------------------------------------------


async def test_named_schema_uses_the_manual_as_a_system_block(scripted):
    models = Models(scripted, openai_content=[envelope(UAR_OK)])
    result = await run(StructureService(settings(), model_factory=models), prompt="Mike broke the build today at 14:30 UTC", schema="user-action-record", schemaMode="named")
    assert result.status == "ok"
    assert result.data == {k: v for k, v in UAR_OK.items() if v is not None}
    assert result.schemaOrigin == "registry:bundled"
    system = models.made["openai/content"].requests[0].messages[0]
    assert system.role == "system"
    assert "## Manual for the schema 'user-action-record'" in system.content
    assert "`userId` is the login name (not the Mongo ID)." in system.content
    assert result.schemaDowngrades == ["/properties/tags: uniqueItems removed (not enforced by openai; checked locally)"]


async def test_named_origin_follows_the_cascade(scripted, vance_home):
    folder = vance_home / "schemas"
    folder.mkdir()
    (folder / "user-action-record.json").write_text(json.dumps(INLINE))
    models = Models(scripted, openai_content=[envelope({"name": "a", "priority": 1})])
    result = await run(StructureService(settings(), model_factory=models), prompt="a", schema="user-action-record", schemaMode="named")
    assert result.schemaOrigin == "registry:tenant:local" and result.status == "ok"
    project = Path.cwd() / ".vance" / "schemas"
    project.mkdir(parents=True)
    (project / "user-action-record.json").write_text(json.dumps(INLINE))
    models = Models(scripted, openai_content=[envelope({"name": "a", "priority": 1})])
    result = await run(StructureService(settings(), model_factory=models), prompt="a", schema="user-action-record", schemaMode="named")
    assert result.schemaOrigin == "registry:project:work"


async def test_unknown_name_is_an_error_listing_names(scripted):
    with pytest.raises(SchemaNotFound, match="available: .*user-action-record"):
        await run(StructureService(settings(), model_factory=Models(scripted)), prompt="a", schema="nope", schemaMode="named")


# -- text mode -----------------------------------------------------------------------------------


def builder_answer(schema=BUILT, confidence=0.9, questions=()):
    return {"schema": schema, "confidence": confidence, "clarifyingQuestions": list(questions)}


async def test_text_mode_builds_then_extracts_and_sums_usage(scripted):
    s = settings(**{"structure.schemaBuilderModel": "openai/builder"})
    models = Models(scripted, openai_builder=[builder_answer()], openai_content=[envelope({"name": "Ann", "age": 31})])
    result = await run(StructureService(s, model_factory=models), prompt="Ann is 31", schema="name (string), age (integer)", schemaMode="text")
    assert result.status == "ok" and result.data == {"name": "Ann", "age": 31}
    assert result.schemaOrigin == "inferred" and result.schemaCached is False
    assert result.usage.calls == 2 and result.usage.totalTokens == 30
    assert models.names == ["openai/builder", "openai/content"]


async def test_text_mode_cache_hit_skips_the_builder(scripted):
    s = settings(**{"structure.schemaBuilderModel": "openai/builder"})
    models = Models(scripted, openai_builder=[builder_answer()], openai_content=[envelope({"name": "A", "age": 1}), envelope({"name": "B", "age": 2})])
    service = StructureService(s, model_factory=models)
    await run(service, prompt="A is 1", schema="name (string), age (integer)", schemaMode="text")
    second = await run(service, prompt="B is 2", schema="name (string),   age (integer)", schemaMode="text")
    assert second.status == "ok" and second.schemaCached is True and second.usage.calls == 1
    assert models.names.count("openai/builder") == 1  # made once, for the first call only


async def test_text_mode_cache_expires(scripted):
    now = [0.0]
    s = settings(**{"structure.schemaBuilderModel": "openai/builder", "structure.schemaCacheTtlDays": 1})
    models = Models(scripted, openai_builder=[builder_answer(), builder_answer()], openai_content=[envelope({"name": "A", "age": 1})] * 2)
    service = StructureService(s, model_factory=models, clock=lambda: now[0])
    await run(service, prompt="A is 1", schema="name (string), age (integer)", schemaMode="text")
    now[0] += 86400 + 1
    again = await run(service, prompt="A is 1", schema="name (string), age (integer)", schemaMode="text")
    assert again.schemaCached is False and len(models.made["openai/builder"].requests) == 2


async def test_text_mode_confidence_gate_stops_before_the_content_stage(scripted):
    s = settings(**{"structure.confidenceThreshold": 0.95})
    models = Models(scripted, openai_content=[builder_answer(confidence=0.9)])
    result = await run(StructureService(s, model_factory=models), prompt="x", schema="some stuff", schemaMode="text")
    assert result.status == "need-more-input" and "0.90 < 0.95" in result.need
    assert result.iterations == 0 and len(models.made["openai/content"].requests) == 1  # builder only


async def test_text_mode_builder_failure_is_stale(scripted):
    bad = builder_answer(schema={"type": "list"})
    models = Models(scripted, openai_content=[bad, bad])
    result = await run(StructureService(settings(), model_factory=models), prompt="x", schema="a list", schemaMode="text")
    assert result.status == "stale" and result.errors[0].startswith("schema builder: ")


async def test_text_mode_builder_failure_reports_the_builder_stage_and_its_attempts(scripted):
    bad = builder_answer(schema={"type": "list"})
    models = Models(scripted, openai_content=[bad, bad])
    result = await run(StructureService(settings(), model_factory=models), prompt="x", schema="a list", schemaMode="text")
    assert result.stage == "builder" and result.builderIterations == 2 and result.iterations == 0
    assert result.usage.calls == 2
    d = result.to_dict()
    assert d["stage"] == "builder" and d["builderIterations"] == 2


async def test_content_stage_results_say_so_and_carry_no_builder_fields_outside_text_mode(scripted):
    models = Models(scripted, openai_content=[envelope({"name": "a", "priority": 1})])
    result = await run(StructureService(settings(), model_factory=models), prompt="a", schema=INLINE)
    d = result.to_dict()
    assert d["stage"] == "content"
    assert not {"schemaCached", "builderIterations", "builderNotes"} & d.keys()


async def test_text_mode_downgrades_are_the_target_schemas_alike_on_cache_hit_and_miss(scripted):
    target = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
        "required": ["tags"],
        "additionalProperties": False,
    }
    s = settings(**{"structure.schemaBuilderModel": "openai/builder"})
    models = Models(scripted, openai_builder=[builder_answer(schema=target)], openai_content=[envelope({"tags": ["a"]})] * 2)
    service = StructureService(s, model_factory=models)
    miss = await run(service, prompt="a", schema="tags (unique strings)", schemaMode="text")
    hit = await run(service, prompt="a", schema="tags (unique strings)", schemaMode="text")
    assert (miss.schemaCached, hit.schemaCached) == (False, True)
    expected = ["/properties/tags: uniqueItems removed (not enforced by openai; checked locally)"]
    assert miss.schemaDowngrades == expected and hit.schemaDowngrades == expected
    # The builder's own meta-schema notes are kept apart, and only a real builder call has them.
    assert miss.builderNotes and not any("tags" in n for n in miss.builderNotes)
    assert hit.builderNotes == [] and (miss.builderIterations, hit.builderIterations) == (1, 0)


async def test_dangling_ref_is_rejected_before_any_model_call(scripted):
    models = Models(scripted)
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}
    with pytest.raises(InvalidSchema, match=r"\$ref '#/\$defs/nope' \(at /properties/a/\$ref\) does not resolve") as exc:
        await run(StructureService(settings(), model_factory=models), prompt="x", schema=schema)
    assert exc.value.hint and "$defs" in exc.value.hint
    assert models.names == []


async def test_json_that_is_no_object_is_json_mode_and_rejected(scripted):
    models = Models(scripted)
    service = StructureService(settings(), model_factory=models)
    for text in ("[1, 2]", "42", "true"):
        with pytest.raises(InvalidSchema, match="must be a JSON object"):
            await run(service, prompt="x", schema=text)
    assert models.names == []


# -- mode inference, settings --------------------------------------------------------------------


async def test_mode_is_inferred_when_not_given(scripted):
    models = Models(scripted, openai_content=[envelope(UAR_OK)])
    result = await run(StructureService(settings(), model_factory=models), prompt="Mike broke the build at 2026-05-06T14:30Z", schema="user-action-record")
    assert result.schemaMode == "named" and result.modeInferred is True
    assert infer_mode("{}") == "json" and infer_mode({"type": "object"}) == "json"
    assert infer_mode("name and age", lambda: ["contact"]) == "text"
    assert infer_mode("contact", lambda: ["contact"]) == "named"
    assert infer_mode("[1, 2]") == "json" and infer_mode("3") == "json" and infer_mode("null") == "json"
    assert infer_mode('"a quoted description"') == "text"
    assert infer_mode("contcat") == "text"  # no registry to ask: taken as a description
    with pytest.raises(SchemaNotFound, match=r"did you mean 'contact'\?"):
        infer_mode("contcat", lambda: ["contact"])  # a lone word naming nothing: a typo, not a description


async def test_require_strict_setting_turns_strict_off(scripted):
    models = Models(scripted, openai_content=[envelope({"name": "a", "priority": 1})])
    s = settings(**{"structure.requireProviderStrictOutput": False})
    result = await run(StructureService(s, model_factory=models), prompt="a", schema=INLINE)
    assert result.status == "ok" and result.outputMode == "json_schema"
    assert models.made["openai/content"].requests[0].response_format["json_schema"]["strict"] is False


async def test_structure_model_setting_and_request_override(scripted):
    s = settings(**{"structure.model": "openai/special"})
    models = Models(scripted, openai_special=[envelope({"name": "a", "priority": 1})], openai_other=[envelope({"name": "b", "priority": 1})])
    service = StructureService(s, model_factory=models)
    await run(service, prompt="a", schema=INLINE)
    await run(service, prompt="b", schema=INLINE, model="openai/other")
    assert models.names == ["openai/special", "openai/other"]


async def test_aliases_resolve_through_settings(scripted):
    s = settings(aliases={"default:fast": "openai/fast"})
    models = Models(scripted, openai_fast=[envelope({"name": "a", "priority": 1})])
    result = await run(StructureService(s, model_factory=models), prompt="a", schema=INLINE)
    assert result.model == "openai/fast"


async def test_no_model_configured_is_a_config_error(scripted):
    s = Settings.load(Scopes.discover(), env={})
    with pytest.raises(ConfigError, match="no model configured"):
        await run(StructureService(s, model_factory=Models(scripted)), prompt="a", schema=INLINE)


async def test_other_family_uses_non_strict_json_schema(scripted):
    model = scripted(envelope({"name": "a", "priority": 1}), caps=OTHER)
    result = await run(StructureService(settings(), model_factory=lambda name: model), prompt="a", schema=INLINE)
    assert result.status == "ok" and result.outputMode == "json_schema"
    assert model.requests[0].response_format["json_schema"]["strict"] is False


async def test_a_ref_loop_schema_is_rejected_before_any_model_call(scripted):
    models = Models(scripted)
    with pytest.raises(InvalidSchema, match=r"\$ref loop"):
        await run(StructureService(settings(), model_factory=models), prompt="x", schema={"anyOf": [{"$ref": "#"}]})
    assert models.names == []
