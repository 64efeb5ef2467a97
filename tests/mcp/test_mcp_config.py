"""[mcp.servers.NAME] in config.toml: read per scope, checked, and a project's servers start only
in a trusted folder (shown, never started, in an untrusted one)."""

from __future__ import annotations

import pytest

from vance_cli.config.mcp_servers import configured_servers, startable
from vance_cli.config.recipes import Recipe
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.config.trust import trust_folder
from vance_cli.errors import ConfigError

USER = '[mcp.servers.toy]\ncommand = "python"\nargs = ["toy.py"]\ntimeout = 5\n'
PROJECT = '[mcp.servers.repo]\ncommand = "sh"\nargs = ["-c", "evil"]\n'


def _scopes(tmp_path, user_text=USER, project_text=PROJECT):
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    (proj / ".vance").mkdir(parents=True)
    (home / "config.toml").write_text(user_text)
    (proj / ".vance" / "config.toml").write_text(project_text)
    return Scopes.discover(cwd=proj, env={"VANCE_HOME": str(home)}), home, proj


def test_user_servers_start_and_an_untrusted_projects_are_shown_not_started(tmp_path):
    scopes, _, proj = _scopes(tmp_path)
    servers = {s.name: s for s in configured_servers(scopes)}
    assert servers["toy"].blocked is None and servers["toy"].args == ("toy.py",) and servers["toy"].timeout == 5
    assert servers["toy"].trust_read_only is False  # a server's read-only claims are not trusted by default
    assert servers["repo"].blocked is not None and "not trusted" in servers["repo"].blocked
    assert "vance trust" in servers["repo"].blocked
    assert set(startable(scopes)) == {"toy"}


def test_a_trusted_projects_servers_start(tmp_path):
    scopes, home, proj = _scopes(tmp_path)
    trust_folder(proj, home)
    scopes = Scopes.discover(cwd=proj, env={"VANCE_HOME": str(home)})
    assert set(startable(scopes)) == {"toy", "repo"}


def test_untrusted_project_mcp_settings_are_named_as_ignored(tmp_path):
    scopes, _, _ = _scopes(tmp_path)
    settings = Settings.load(scopes, env={})
    assert "mcp.servers" in settings.ignored


@pytest.mark.parametrize(
    "text, words",
    [
        ('[mcp.servers.a]\nargs = ["x"]\n', "exactly one of command"),
        ('[mcp.servers.a]\ncommand = "x"\nurl = "http://h"\n', "exactly one of command"),
        ('[mcp.servers.a]\ncommand = "x"\nargs = "x"\n', "list of strings"),
        ('[mcp.servers.a]\ncommand = "x"\ntimeout = 0\n', "above 0"),
        ('[mcp.servers.a]\ncommand = "x"\nstart_timeout = nan\n', "above 0"),
        ('[mcp.servers.a]\ncommand = "x"\ncmd = "y"\n', "unknown key"),
        ('[mcp.servers.a]\ncommand = "x"\ntrust_read_only = "yes"\n', "true or false"),
    ],
)
def test_a_malformed_server_is_a_config_error_naming_the_key(tmp_path, text, words):
    scopes, _, _ = _scopes(tmp_path, user_text=text, project_text="")
    with pytest.raises(ConfigError) as info:
        Settings.load(scopes, env={})
    assert words in info.value.message and "mcp.servers.a" in info.value.message


def test_recipes_name_mcp_tools_and_a_malformed_name_is_refused():
    r = Recipe.model_validate({"name": "x", "engine": "ford", "tools": {"add": ["mcp:toy/lookup", "mcp:toy/*"]}})
    assert "mcp:toy/*" in r.tool_names()
    with pytest.raises(Exception) as info:
        Recipe.model_validate({"name": "x", "engine": "ford", "tools": {"add": ["mcp:toy"]}})
    assert "mcp:SERVER/TOOL" in str(info.value)
