"""Benjy's recipe params: fail-fast validation, `vance recipes validate`, bundled recipe consistency."""

from __future__ import annotations

import textwrap

import pytest

from vance_cli.config.recipes import Recipe, RecipeError, list_recipes, load_recipe
from vance_cli.config.scopes import Scopes
from vance_cli.engines.benjy.config import CONTROLLER_STAGES, build_run_config, resolve
from vance_cli.engines.benjy.engine import doer_snapshot, stage_schema

GOOD = {
    "doRecipe": "benjy-do-coding",
    "features": {"interpret": {"recipe": "benjy-interpret"}, "route": {"recipe": "benjy-route"}},
}


def _recipe(**params) -> Recipe:
    return Recipe.model_validate({"name": "b", "engine": "benjy", "params": {**GOOD, **params}})


def _error(**params) -> str:
    with pytest.raises(RecipeError) as exc:
        resolve(_recipe(**params), Scopes.discover())
    return exc.value.message


def test_a_good_recipe_resolves_every_reference():
    params, refs = resolve(_recipe(), Scopes.discover())
    assert set(refs) == {"benjy-do-coding", "benjy-interpret", "benjy-route"}
    assert params.maxStagnation == 15 and params.maxInitialItems == 5


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"features": {"interpret": {"recipe": "benjy-interpret"}, "rout": {"recipe": "x"}}}, "params.features': unknown feature 'rout' (known: interpret, route"),
        ({"taskTypes": ["coding", "codng"]}, "unknown task type 'codng'"),
        ({"features": {"route": {"recipe": "benjy-route"}}}, "params.features.interpret': the interpret feature is required"),
        ({"features": {"interpret": {}}}, "the interpret feature is required and needs a recipe"),
        ({"doRecipe": "no-such-doer"}, "params.doRecipe': recipe 'no-such-doer' not found"),
        ({"doRecipe": "benjy-interpret"}, "cannot be a doer"),
        ({"features": {"interpret": {"recipe": "benjy-interpret"}, "route": {"recipe": "nope"}}}, "params.features.route.recipe': recipe 'nope' not found"),
        ({"features": {"interpret": {"recipe": "benjy-interpret"}, "evaluate": {"recipe": "benjy-evaluate", "command": "x"}}}, "only the check feature takes a command"),
        ({"features": {"interpret": {"recipe": "benjy-interpret"}, "check": {"recipe": "benjy-route"}}}, "runs a command, not a recipe"),
        ({"maxStagnation": 0}, "params.maxStagnation'"),
        ({"maxTokns": 5}, "params.maxTokns': unknown key (known: doRecipe"),
    ],
)
def test_fail_fast_names_the_key(params, expected):
    assert expected in _error(**params)


def test_missing_do_recipe_is_an_error():
    recipe = Recipe.model_validate({"name": "b", "engine": "benjy", "params": {"features": GOOD["features"]}})
    with pytest.raises(RecipeError, match="params.doRecipe': required key is missing"):
        resolve(recipe, Scopes.discover())


def test_off_values_disable_a_feature():
    recipe = _recipe(features={"interpret": {"recipe": "benjy-interpret"}, "route": "off", "reflect": False, "evaluate": None, "check": True})
    cfg, _ = build_run_config(recipe, Scopes.discover())
    assert cfg.stages == {"interpret": "benjy-interpret", "route": None, "evaluate": None, "reflect": None, "escalation": None}
    assert cfg.checkCommand is None  # check on, but no command: the stage falls out of the chain
    cfg2, _ = build_run_config(recipe, Scopes.discover(), check="pytest -q")
    assert cfg2.checkCommand == "pytest -q" and cfg2.chain("coding") == ("DO", "CHECK", "CLOSE")


def test_recipes_validate_reports_a_broken_benjy_recipe(tmp_path):
    from tests.cli.helpers import vance

    path = tmp_path / "work" / "broken.yaml"
    path.write_text(textwrap.dedent("""\
        engine: benjy
        params:
          doRecipe: benjy-do-coding
          features:
            interpret: { recipe: benjy-interpret }
            evaluate: { recipe: benjy-evalute }
        """))
    r = vance("recipes", "validate", str(path), cwd=tmp_path / "work")
    assert r.returncode == 1
    assert "key 'params.features.evaluate.recipe': recipe 'benjy-evalute' not found" in r.stderr
    ok = vance("recipes", "validate", "benjy-coding", cwd=tmp_path / "work")
    assert ok.returncode == 0 and "ok  benjy-coding" in ok.stdout


# --- the bundled recipes agree with each other -------------------------------------------------------


BENJY_RECIPES = ("benjy-coding", "benjy-research", "benjy-batch")


@pytest.mark.parametrize("name", BENJY_RECIPES)
def test_bundled_benjy_recipes_resolve_and_their_stages_fit(name):
    scopes = Scopes.discover()
    recipe = load_recipe(name, scopes)
    assert recipe.engine == "benjy" and recipe.origin == "bundled"
    params, refs = resolve(recipe, scopes)
    for stage in CONTROLLER_STAGES:
        spec = params.features.get(stage)
        if spec is None:
            continue
        ref = refs[spec.recipe]
        assert ref.params.get("benjyStage") == stage, f"{spec.recipe} is not a {stage} recipe"
        assert f"You are the {stage.upper()} stage of Benjy" in ref.systemPrompt
        assert ref.tool_names() == []  # controller calls are single-shot, no tools
        assert stage_schema(stage)["title"] == f"benjy-{stage}"
    doer = refs[params.doRecipe]
    assert "respond" in doer.tool_names() and "exec_run" not in doer.tool_names()


def test_bundled_cheap_mode_and_escalation():
    scopes = Scopes.discover()
    batch = resolve(load_recipe("benjy-batch", scopes), scopes)[0]
    assert not batch.enabled("route") and batch.maxInitialItems == 10
    coding = load_recipe("coding", scopes)
    assert coding.engine == "ford" and coding.model == "default:strong" and "file_write" in coding.tool_names()


def test_every_controller_schema_is_a_valid_bundled_schema_with_a_manual():
    from vance_cli.structure.registry import SchemaRegistry

    reg = SchemaRegistry(Scopes.discover())
    for stage in CONTROLLER_STAGES:
        found = reg.get(f"benjy-{stage}")
        assert found.scope == "bundled" and found.manual


def test_the_worker_recipe_gets_the_budget_and_exec_only_when_allowed():
    scopes = Scopes.discover()
    recipe = load_recipe("benjy-coding", scopes)
    cfg, snaps = build_run_config(recipe, scopes, check="true")
    doer = Recipe.model_validate(doer_snapshot(snaps["benjy-do-coding"], cfg))
    assert doer.maxToolIterations == 15 and "exec_run" not in doer.tool_names()
    cfg_exec, _ = build_run_config(recipe, scopes, check="true", allow_exec=True)
    assert "exec_run" in Recipe.model_validate(doer_snapshot(snaps["benjy-do-coding"], cfg_exec)).tool_names()


def test_every_bundled_recipe_validates_with_its_engine_checks():
    from vance_cli.engines import validate_recipe

    scopes = Scopes.discover()
    for info in list_recipes(scopes):
        validate_recipe(load_recipe(info.name, scopes), scopes)
