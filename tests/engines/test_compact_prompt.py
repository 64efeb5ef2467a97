"""A compact prompt and tool set for small models (issue 18): a recipe's `compact:` section is what
a model with ``capabilities.compact_prompt`` is offered; the recipe's grant never grows."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.engines.harness import call, recipe, respond, run_engine
from vance_cli.config.recipes import Recipe
from vance_cli.llm.base import Capabilities
from vance_cli.llm.capabilities import default_capabilities

COMPACT = {"systemPrompt": "SMALL", "tools": ["respond", "file_read"]}


def _offered(request) -> list[str]:
    return [t.name for t in (request.tools or [])]


def test_a_small_model_gets_the_compact_prompt_and_tools(tmp_path):
    snap = recipe(compact=COMPACT)
    run = run_engine(tmp_path, [respond("hello")], recipe_snapshot=snap, capabilities=Capabilities(compact_prompt=True))
    (req,) = run.model.requests
    assert req.messages[0].role == "system" and req.messages[0].content == "SMALL"
    assert _offered(req) == ["respond", "file_read"]
    assert run.messages == ["hello"]


def test_other_models_get_the_whole_recipe(tmp_path):
    snap = recipe(compact=COMPACT)
    run = run_engine(tmp_path, [respond("hello")], recipe_snapshot=snap)
    (req,) = run.model.requests
    assert req.messages[0].content == "SYSTEM"
    assert _offered(req) == ["respond", "file_read", "file_list"]


def test_a_tool_left_out_of_the_compact_set_is_not_run(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("x")
    snap = recipe(compact=COMPACT)
    run = run_engine(
        tmp_path,
        [{"tool_calls": [call("file_list", {"path": "."})]}, respond("done")],
        recipe_snapshot=snap,
        capabilities=Capabilities(compact_prompt=True),
    )
    results = [m for m in run.process.history if m.role == "tool"]
    assert results and results[0].meta.get("ok") is False
    assert "a.txt" not in (results[0].content or "")


def test_compact_tools_may_only_narrow_the_recipe():
    with pytest.raises(ValueError, match="compact.tools may only narrow"):
        recipe(compact={"systemPrompt": "S", "tools": ["respond", "exec_run"]})


def test_the_compact_prompt_is_off_by_default_everywhere():
    # measured worse on a 0.5B model (bench/README.md): a person turns it on per model
    assert not default_capabilities("openai/qwen", "http://127.0.0.1:8090/v1", server="llama-server").compact_prompt
    assert not default_capabilities("openai/qwen", "http://127.0.0.1:8090/v1", server="llama-cpp-python").compact_prompt
    assert not default_capabilities("openai/gpt-4o").compact_prompt
    assert not default_capabilities("anthropic/claude-sonnet-4-5").compact_prompt


def test_arthur_compact_prompt_is_a_fraction_of_the_full_one():
    data = yaml.safe_load((Path(__file__).parents[2] / "recipes" / "arthur.yaml").read_text())
    full = Recipe.model_validate(data)
    small = full.compacted()
    assert set(small.tool_names()) < set(full.tool_names())
    assert "respond" in small.tool_names()
    assert len(small.systemPrompt) * 3 < len(full.systemPrompt)
