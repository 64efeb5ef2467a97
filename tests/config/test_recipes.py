"""Recipes: the cascade, fail-fast validation naming file and key, tool lists, bundled recipes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from vance_cli import names
from vance_cli.config import recipes as recipes_mod
from vance_cli.config.recipes import (
    DEFAULT_DATA_RELAY_TEXT,
    Recipe,
    RecipeError,
    list_recipes,
    load_recipe,
    validate_recipe_file,
)
from vance_cli.config.scopes import Scopes
from vance_cli.config.trust import trust_folder
from vance_cli.errors import ConfigError

CONVENTION_LINES = (
    "You always end your turn with exactly one call to the `respond` tool.",
    "`awaiting_user_input` to true when you expect the user to react",
    "Never put the user-facing answer in plain assistant text",
    "`respond` MUST be the LAST and ONLY tool call in its turn.",
    "On the next turn, call `respond` alone with the synthesised",
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    (root / ".vance").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root / ".vance"


def recipe_error(path: Path) -> RecipeError:
    with pytest.raises(RecipeError) as info:
        validate_recipe_file(path)
    assert isinstance(info.value, ConfigError)
    assert info.value.exit_code == 1
    return info.value


# ----------------------------------------------------------------------------- bundled


@pytest.mark.parametrize(
    ("name", "engine"), [("arthur", "arthur"), ("ford", "ford"), ("default", "ford")]
)
def test_bundled_recipes_load_with_respond_file_tools_and_the_convention(name, engine):
    recipe = load_recipe(name, Scopes.discover())
    assert recipe.name == name
    assert recipe.engine == engine
    assert recipe.origin == "bundled"
    assert recipe.description
    assert recipe.validation is True
    assert {"respond", "file_read", "file_list"} <= set(recipe.tool_names())
    prompt = " ".join(recipe.systemPrompt.split())
    for line in CONVENTION_LINES:
        assert line in prompt, line


def test_list_recipes_shows_the_bundled_ones():
    infos = {i.name: i for i in list_recipes(Scopes.discover())}
    assert {"arthur", "ford", "default"} <= set(infos)
    assert infos["arthur"].origin == "bundled"
    assert not infos["arthur"].shadowed
    assert infos["arthur"].description.startswith("Chat hub")


# ----------------------------------------------------------------------------- cascade


def test_project_shadows_user_shadows_bundled(vance_home, project):
    write(
        vance_home / "recipes" / "arthur.yaml",
        "engine: ford\ndescription: user arthur\n",
    )
    recipe = load_recipe("arthur", Scopes.discover())
    assert (recipe.origin, recipe.engine, recipe.description) == (
        "user",
        "ford",
        "user arthur",
    )

    write(
        project / "recipes" / "arthur.yaml",
        "engine: arthur\ndescription: project arthur\n",
    )
    # An untrusted project's recipes are not used (they choose the tools): the user's wins.
    assert load_recipe("arthur", Scopes.discover()).origin == "user"
    trust_folder(project.parent, vance_home)
    recipe = load_recipe("arthur", Scopes.discover())
    assert (recipe.origin, recipe.description) == ("project", "project arthur")
    assert recipe.path == project.resolve() / "recipes" / "arthur.yaml"

    rows = [
        (i.origin, i.shadowed)
        for i in list_recipes(Scopes.discover())
        if i.name == "arthur"
    ]
    assert rows == [("project", False), ("user", True), ("bundled", True)]


def test_yml_suffix_is_found_too(vance_home):
    write(vance_home / "recipes" / "mine.yml", "engine: ford\n")
    assert load_recipe("mine", Scopes.discover()).origin == "user"


def test_a_recipe_can_be_loaded_by_path(tmp_path):
    write(tmp_path / "work" / "sub" / "try.yaml", "engine: ford\n")
    recipe = load_recipe("sub/try.yaml", Scopes.discover())
    assert recipe.name == "try"
    assert recipe.path == Path.cwd() / "sub" / "try.yaml"


def test_a_missing_recipe_says_where_it_looked(vance_home):
    with pytest.raises(RecipeError) as info:
        load_recipe("nope", Scopes.discover())
    assert info.value.message == "recipe 'nope' not found"
    assert "vance recipes list" in info.value.hint
    assert str(vance_home.resolve() / "recipes") in info.value.hint


def test_listing_survives_a_broken_recipe(vance_home):
    write(vance_home / "recipes" / "broken.yaml", "engine: [unclosed\n")
    assert "broken" in {i.name for i in list_recipes(Scopes.discover())}


# ----------------------------------------------------------------------------- fail-fast errors


def test_unknown_top_level_key_names_file_and_key(tmp_path):
    path = write(tmp_path / "work" / "foo.yaml", "engine: ford\nsystem_prompt: hi\n")
    err = recipe_error(path)
    assert err.message.startswith("foo.yaml: key 'system_prompt': unknown key")
    assert "did you mean 'systemPrompt'?" in err.message
    assert "foo.yaml" in err.hint


def test_unknown_nested_key_names_the_key_path(tmp_path):
    path = write(
        tmp_path / "work" / "foo.yaml",
        "engine: ford\ntools:\n  allowd: [respond]\ndataRelayCorrection:\n  minChars: 3\n",
    )
    err = recipe_error(path)
    assert (
        "foo.yaml: key 'tools.allowd': unknown key (known: allowed, add, remove)"
        in err.message
    )
    assert "foo.yaml: key 'dataRelayCorrection.minChars': unknown key" in err.message


def test_unknown_engine_names_file_and_key(tmp_path):
    err = recipe_error(write(tmp_path / "work" / "foo.yaml", "engine: fordd\n"))
    assert err.message.startswith(
        "foo.yaml: key 'engine': unknown engine 'fordd' (known: ford, arthur, benjy)"
    )


def test_unknown_tool_names_file_key_and_index(tmp_path):
    path = write(
        tmp_path / "work" / "recipes" / "foo.yaml",
        "engine: ford\ntools:\n  add: [file_write, web_serch]\n",
    )
    err = recipe_error(path)
    assert err.message.startswith(
        "recipes/foo.yaml: key 'tools.add[1]': unknown tool 'web_serch' (known: "
    )
    assert "respond" in err.message


def test_tool_names_come_from_the_names_table_not_the_tool_modules(tmp_path, monkeypatch):
    # Recipe checks never import a tool module (once a fallback for modules not yet written):
    # a registry that cannot be built does not change what a recipe may name.
    def broken():
        raise ImportError("a tool module cannot be imported")

    monkeypatch.setattr("vance_cli.tools.base.builtin_registry", broken)
    assert recipes_mod.known_tool_names() == sorted(names.TOOLS)
    err = recipe_error(
        write(tmp_path / "work" / "foo.yaml", "engine: ford\ntools: [respond, nope]\n")
    )
    assert "key 'tools.allowed[1]': unknown tool 'nope'" in err.message


def test_unknown_model_alias_names_file_and_key(tmp_path):
    err = recipe_error(
        write(tmp_path / "work" / "foo.yaml", "engine: ford\nmodel: default:quick\n")
    )
    assert err.message.startswith(
        "foo.yaml: key 'model': unknown model alias 'default:quick'"
    )
    assert "default:fast, default:analyze, default:code" in err.message


def test_model_strings_and_builtin_aliases_are_accepted(tmp_path):
    for model in (
        "default:fast",
        "default:analyze",
        "default:code",
        "openai/gpt-4o-mini",
        "scripted:demo.yaml",
    ):
        path = write(tmp_path / "work" / "foo.yaml", f"engine: ford\nmodel: {model}\n")
        assert validate_recipe_file(path).model == model


def test_wrong_types_and_missing_engine_are_reported_with_keys(tmp_path):
    err = recipe_error(
        write(
            tmp_path / "work" / "foo.yaml",
            "maxToolIterations: many\nvalidation: maybe\n",
        )
    )
    assert "foo.yaml: key 'engine': required key is missing" in err.message
    assert "foo.yaml: key 'maxToolIterations':" in err.message
    assert "foo.yaml: key 'validation':" in err.message


def test_name_must_match_the_file_name(tmp_path):
    err = recipe_error(
        write(tmp_path / "work" / "foo.yaml", "name: bar\nengine: ford\n")
    )
    assert (
        err.message
        == "foo.yaml: key 'name': 'bar' does not match the file name 'foo.yaml'"
    )
    assert "rename" in err.hint


def test_invalid_yaml_names_the_file_and_line(tmp_path):
    err = recipe_error(
        write(tmp_path / "work" / "foo.yaml", "engine: ford\ntools: [respond\n")
    )
    assert err.message.startswith("foo.yaml: invalid YAML:")
    assert "line" in err.message


@pytest.mark.parametrize(
    ("text", "needle"), [("", "is empty"), ("- engine: ford\n", "must be a mapping")]
)
def test_empty_or_non_mapping_files_are_rejected(tmp_path, text, needle):
    err = recipe_error(write(tmp_path / "work" / "foo.yaml", text))
    assert "foo.yaml" in err.message
    assert needle in err.message


def test_a_file_outside_cwd_is_named_by_its_full_path(tmp_path, vance_home):
    path = write(vance_home / "recipes" / "foo.yaml", "engine: nope\n")
    assert recipe_error(path).message.startswith(f"{path}: key 'engine'")


# ----------------------------------------------------------------------------- fields


def test_defaults_of_a_minimal_recipe(tmp_path):
    recipe = validate_recipe_file(
        write(tmp_path / "work" / "mini.yaml", "engine: arthur\n")
    )
    assert recipe.name == "mini"
    assert recipe.model is None
    assert recipe.validation is True
    assert recipe.maxValidationCorrections == 2
    assert recipe.maxToolIterations == 12
    relay = recipe.dataRelayCorrection
    assert (relay.enabled, relay.minToolResultChars, relay.maxMessageChars) == (
        True,
        500,
        200,
    )
    assert relay.text == DEFAULT_DATA_RELAY_TEXT
    assert recipe.params == {}
    assert recipe.tool_names() == ["respond", "file_read", "file_list"]


def test_data_relay_text_formats_with_the_engine_placeholders():
    text = DEFAULT_DATA_RELAY_TEXT.format(tool_chars=1234, message_chars=12)
    assert text.startswith(
        "VALIDATION CHECK: a tool returned a large result (1234 characters)"
    )
    assert "only 12 characters" in text


def test_tool_names_apply_add_and_remove_in_order_without_duplicates():
    recipe = Recipe(
        name="r",
        engine="ford",
        tools={"add": ["file_write", "respond", "exec_run"], "remove": ["file_list"]},
    )
    assert recipe.tool_names() == ["respond", "file_read", "file_write", "exec_run"]
    recipe = Recipe(
        name="r",
        engine="ford",
        tools={"allowed": ["file_read", "respond"], "add": ["file_read"]},
    )
    assert recipe.tool_names() == ["file_read", "respond"]


def test_tools_list_shorthand_means_allowed(tmp_path):
    recipe = validate_recipe_file(
        write(tmp_path / "work" / "r.yaml", "engine: ford\ntools: [respond]\n")
    )
    assert recipe.tools.allowed == ["respond"]
    assert recipe.tool_names() == ["respond"]


def test_a_recipe_snapshot_round_trips_through_json(tmp_path):
    recipe = load_recipe("arthur", Scopes.discover())
    again = Recipe.model_validate(recipe.model_dump(mode="json"))
    assert again.model_dump() == recipe.model_dump()
    assert again.path is None  # where it came from is not part of the snapshot
    assert again.tool_names() == recipe.tool_names()
    assert "_path" not in recipe.model_dump()


BOMB = """\
engine: ford
params:
  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
"""


def test_a_yaml_alias_bomb_is_rejected(tmp_path):
    path = write(tmp_path / "bomb.yaml", BOMB)
    with pytest.raises(RecipeError, match="expands to more than 20,000 values"):
        validate_recipe_file(path)


def test_one_large_string_repeated_by_aliases_is_rejected(tmp_path):
    big = "x" * 100_000
    path = write(tmp_path / "wide.yaml", f"engine: ford\nparams:\n  a: &a {big}\n  b: [{', '.join(['*a'] * 20)}]\n")
    with pytest.raises(RecipeError, match="characters"):
        validate_recipe_file(path)


def test_an_oversized_recipe_file_is_rejected_and_listing_survives_it(tmp_path, vance_home):
    path = write(vance_home / "recipes" / "huge.yaml", "engine: ford\nsystemPrompt: |\n" + "  words\n" * 60_000)
    with pytest.raises(RecipeError, match="a recipe may be at most 262,144 bytes"):
        validate_recipe_file(path)
    assert "huge" in [i.name for i in list_recipes(Scopes.discover())]


def test_plain_aliases_still_work(tmp_path):
    path = write(tmp_path / "reuse.yaml", "engine: ford\nparams:\n  a: &p hello\n  b: *p\n")
    assert validate_recipe_file(path).params == {"a": "hello", "b": "hello"}


def test_a_recipe_without_respond_notes_the_legacy_path(tmp_path):
    with_respond = validate_recipe_file(write(tmp_path / "r1.yaml", "engine: ford\n"))
    assert with_respond.notes() == []
    without = validate_recipe_file(write(tmp_path / "r2.yaml", "engine: ford\ntools:\n  remove: [respond]\n"))
    assert len(without.notes()) == 1 and "legacy path" in without.notes()[0]
