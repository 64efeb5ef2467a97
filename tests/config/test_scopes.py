"""Scopes: where the user scope, the project scope and the bundled folders are."""

from __future__ import annotations

from pathlib import Path

import pytest

from vance_cli.config import recipes
from vance_cli.config.scopes import Scopes, bundled_dir
from vance_cli.config.trust import project_trusted, trust_folder

REPO = Path(__file__).resolve().parents[2]


def test_user_scope_is_vance_home(vance_home):
    scopes = Scopes.discover()
    assert scopes.user == vance_home.resolve()
    assert scopes.project is None
    assert scopes.state_dir == scopes.user
    assert scopes.processes_dir() == scopes.user / "processes"
    assert scopes.data_dir() == scopes.user / "data"


def test_user_scope_defaults_to_dot_vance_in_home(tmp_path, monkeypatch):
    monkeypatch.delenv("VANCE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "someone"))
    assert Scopes.discover().user == (tmp_path / "someone" / ".vance").resolve()


def test_discover_reads_the_env_mapping_it_is_given(tmp_path):
    scopes = Scopes.discover(
        cwd=tmp_path, env={"VANCE_HOME": str(tmp_path / "elsewhere")}
    )
    assert scopes.user == (tmp_path / "elsewhere").resolve()


def test_project_scope_is_the_nearest_dot_vance_upward(tmp_path):
    outer = tmp_path / "outer"
    inner = outer / "repo"
    deep = inner / "src" / "pkg"
    deep.mkdir(parents=True)
    (outer / ".vance").mkdir()
    (inner / ".vance").mkdir()
    scopes = Scopes.discover(cwd=deep)
    assert scopes.project == (inner / ".vance").resolve()
    assert scopes.cwd == deep.resolve()
    assert scopes.state_dir == scopes.project
    assert scopes.processes_dir() == inner / ".vance" / "processes"


def test_a_file_named_dot_vance_is_not_a_project(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / ".vance").write_text("not a folder")
    assert Scopes.discover(cwd=tmp_path / "proj").project is None


def test_the_user_scope_is_never_taken_for_a_project(tmp_path, monkeypatch):
    home = tmp_path / "home"
    work = home / "code" / "thing"
    work.mkdir(parents=True)
    (home / ".vance").mkdir()
    monkeypatch.delenv("VANCE_HOME")
    monkeypatch.setenv("HOME", str(home))
    scopes = Scopes.discover(cwd=work)
    assert scopes.user == (home / ".vance").resolve()
    assert scopes.project is None


def test_search_path_lists_project_then_user_then_bundled(tmp_path, vance_home):
    (tmp_path / "p" / ".vance").mkdir(parents=True)
    scopes = Scopes.discover(cwd=tmp_path / "p")
    # Untrusted: the project's schemas count, its recipes do not (they choose the tools).
    assert not project_trusted(scopes)
    assert [o for o, _ in recipes.search_path(scopes)] == ["user", "bundled"]
    assert [o for o, _ in scopes.search_path("schemas")] == ["project", "user", "bundled"]
    trust_folder(tmp_path / "p", vance_home)
    scopes = Scopes.discover(cwd=tmp_path / "p")
    assert project_trusted(scopes)
    assert [origin for origin, _ in recipes.search_path(scopes)] == [
        "project",
        "user",
        "bundled",
    ]
    assert (
        recipes.search_path(scopes)[0][1]
        == (tmp_path / "p" / ".vance" / "recipes").resolve()
    )
    assert recipes.search_path(scopes)[1][1] == vance_home.resolve() / "recipes"


def test_search_path_without_project_has_no_project_entry():
    assert [origin for origin, _ in Scopes.discover().search_path("schemas")] == [
        "user",
        "bundled",
    ]


def test_bundled_dir_in_a_source_checkout_is_the_top_level_folder():
    assert bundled_dir("recipes") == REPO / "recipes"
    assert (bundled_dir("recipes") / "arthur.yaml").is_file()
    assert bundled_dir("schemas") == REPO / "schemas"


def test_bundled_dir_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown bundled kind"):
        bundled_dir("recipe")
