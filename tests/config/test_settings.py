"""The settings cascade, model aliases, the missing-model error and per-model options."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.config.settings_keys import split_key
from vance_cli.config.trust import trust_folder
from vance_cli.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project scope around the test's working folder."""
    root = tmp_path / "proj"
    (root / ".vance").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root / ".vance"


def load(env=None, overrides=None) -> Settings:
    return Settings.load(
        Scopes.discover(), env={} if env is None else env, overrides=overrides
    )


# ----------------------------------------------------------------------------- cascade


def test_bundled_defaults_are_the_lowest_layer():
    s = load()
    assert s.get("model.default") is None
    assert s.get("model.transport") == "auto"
    assert s.get("model.timeout") == 120
    assert s.get("model.retries") == {
        "attempts": 4,
        "base_delay": 0.5,
        "max_delay": 4.0,
        "max_total": 180.0,
    }
    assert s.get("structure.confidenceThreshold") == 0.8
    assert s.get("structure.model") == "default:fast"
    assert s.get("structure.schemaBuilderModel") == "default:fast"
    assert s.get("structure.requireProviderStrictOutput") is True
    assert s.get("structure.schemaCacheTtlDays") == 7
    assert s.get("no.such.key", "fallback") == "fallback"


def test_cascade_order_is_bundled_user_project_env_overrides(vance_home, project):
    write(
        vance_home / "config.toml",
        '[model]\ndefault = "user/m"\ntimeout = 10\n[structure]\nconfidenceThreshold = 0.5\n',
    )
    assert load().resolve_model(None) == "user/m"

    write(project / "config.toml", '[model]\ndefault = "project/m"\n')
    assert load().resolve_model(None) == "user/m"  # model.default of an untrusted folder: ignored
    trust_folder(project.parent, vance_home)
    s = load()
    assert s.resolve_model(None) == "project/m"
    # Tables merge key by key: the user's timeout survives the project's [model] table.
    assert s.get("model.timeout") == 10
    assert s.get("structure.confidenceThreshold") == 0.5
    assert s.files == [
        vance_home.resolve() / "config.toml",
        project.resolve() / "config.toml",
    ]

    assert load(env={"VANCE_MODEL": "env/m"}).resolve_model(None) == "env/m"
    s = load(
        env={"VANCE_MODEL": "env/m"},
        overrides={"model.default": "cli/m", "structure.confidenceThreshold": 0.9},
    )
    assert s.resolve_model(None) == "cli/m"
    assert s.get("structure.confidenceThreshold") == 0.9


def test_nested_tables_merge_deeply_across_files(vance_home, project):
    write(vance_home / "config.toml", "[model.retries]\nmax_delay = 1.0\n")
    write(project / "config.toml", "[model.retries]\nattempts = 2\n")
    assert load().get("model.retries") == {
        "attempts": 2,
        "base_delay": 0.5,
        "max_delay": 1.0,
        "max_total": 180.0,
    }


def test_environment_maps_vance_variables_to_model_keys():
    s = load(
        env={
            "VANCE_MODEL": "openai/x",
            "VANCE_API_BASE": "http://127.0.0.1:9/v1",
            "VANCE_API_KEY": "k",
            "VANCE_TRANSPORT": "direct",
        }
    )
    assert (
        s.get("model.default"),
        s.get("model.api_base"),
        s.get("model.api_key"),
        s.get("model.transport"),
    ) == (
        "openai/x",
        "http://127.0.0.1:9/v1",
        "k",
        "direct",
    )


def test_load_reads_os_environ_when_no_env_is_given(monkeypatch):
    monkeypatch.setenv("VANCE_MODEL", "openai/from-env")
    assert Settings.load(Scopes.discover()).resolve_model(None) == "openai/from-env"


def test_empty_environment_variables_count_as_unset(vance_home):
    write(vance_home / "config.toml", '[model]\ndefault = "user/m"\n')
    assert load(env={"VANCE_MODEL": "  "}).resolve_model(None) == "user/m"


def test_overrides_with_none_values_are_ignored(vance_home):
    write(vance_home / "config.toml", '[model]\ndefault = "user/m"\n')
    assert load(overrides={"model.default": None}).resolve_model(None) == "user/m"


def test_get_returns_copies_so_callers_cannot_change_settings():
    s = load()
    s.get("model.retries")["attempts"] = 99
    assert s.get("model.retries.attempts") == 4


def test_split_key_keeps_dots_inside_quotes():
    assert split_key('models."openai/gpt-4.1".api_base') == [
        "models",
        "openai/gpt-4.1",
        "api_base",
    ]
    with pytest.raises(ConfigError, match="malformed settings key"):
        split_key("model..default")


# ----------------------------------------------------------------------------- errors


def test_broken_toml_names_the_file_and_the_line(vance_home):
    path = write(
        vance_home / "config.toml", '[model]\ndefault = "openai/x"\ntimeout = = 3\n'
    )
    with pytest.raises(ConfigError) as info:
        load()
    assert str(path) in info.value.message
    assert "line 3" in info.value.message
    assert "timeout = = 3" in info.value.message
    assert info.value.hint


def test_wrong_value_type_names_file_and_key(project):
    path = write(project / "config.toml", '[model]\ntimeout = "soon"\n')
    with pytest.raises(ConfigError) as info:
        load()
    assert info.value.message.startswith(
        f"{path}: key 'model.timeout': expected a number"
    )


def test_unknown_transport_is_rejected_naming_the_variable():
    with pytest.raises(ConfigError) as info:
        load(env={"VANCE_TRANSPORT": "carrier-pigeon"})
    assert "VANCE_TRANSPORT" in info.value.message
    assert "auto, litellm, direct" in info.value.message


def test_bad_override_value_names_the_command_line():
    with pytest.raises(ConfigError, match="command line: key 'model.retries.attempts'"):
        load(overrides={"model.retries.attempts": 0})


# ----------------------------------------------------------------------------- models and aliases


def test_no_model_configured_names_every_fix(vance_home):
    with pytest.raises(ConfigError) as info:
        load().resolve_model(None)
    err = info.value
    assert err.message == "no model configured"
    assert err.exit_code == 1
    for needle in (
        "export VANCE_MODEL=openai/gpt-5.4-mini",
        "OPENAI_API_KEY",
        "anthropic/claude-haiku-4-5",
        "gemini/gemini-2.5-flash",
        "ollama_chat/llama3.1",
        "openai/llama3.1 VANCE_API_BASE=http://localhost:11434/v1",
        "[model]",
        'default = "openai/gpt-5.4-mini"',
        str(vance_home.resolve() / "config.toml"),
    ):
        assert needle in err.hint, needle


def test_an_unconfigured_builtin_alias_falls_back_to_the_default_model():
    s = load(env={"VANCE_MODEL": "openai/base"})
    assert [
        s.resolve_model(a) for a in ("default:fast", "default:analyze", "default:code")
    ] == ["openai/base"] * 3


def test_an_unconfigured_builtin_alias_without_default_is_no_model_configured():
    with pytest.raises(ConfigError, match="^no model configured"):
        load().resolve_model("default:fast")


def test_configured_aliases_resolve_through_the_cascade(vance_home, project):
    write(
        vance_home / "config.toml",
        '[aliases]\n"default:fast" = "openai/mini"\n"default:code" = "openai/coder"\n',
    )
    write(
        project / "config.toml",
        '[aliases]\n"default:code" = "anthropic/claude"\n"default:review" = "default:code"\n',
    )
    # The aliases of an untrusted folder choose the model: ignored until it is trusted.
    assert load(env={"VANCE_MODEL": "openai/base"}).resolve_model("default:code") == "openai/coder"
    trust_folder(project.parent, vance_home)
    s = load(env={"VANCE_MODEL": "openai/base"})
    assert s.resolve_model("default:fast") == "openai/mini"
    assert s.resolve_model("default:code") == "anthropic/claude"
    # A user alias pointing at an alias.
    assert s.resolve_model("default:review") == "anthropic/claude"
    assert s.resolve_model("default:analyze") == "openai/base"
    # Model strings pass through.
    assert s.resolve_model("ollama/llama3.1") == "ollama/llama3.1"


def test_model_default_may_itself_be_an_alias(vance_home):
    write(
        vance_home / "config.toml",
        '[model]\ndefault = "default:fast"\n[aliases]\n"default:fast" = "openai/mini"\n',
    )
    assert load().resolve_model(None) == "openai/mini"


def test_an_unknown_alias_is_a_config_error():
    with pytest.raises(ConfigError) as info:
        load(env={"VANCE_MODEL": "openai/base"}).resolve_model("default:fastest")
    assert "unknown model alias 'default:fastest'" in info.value.message
    assert "default:fast" in info.value.message
    assert "[aliases]" in info.value.hint


def test_an_alias_loop_is_reported(vance_home):
    write(
        vance_home / "config.toml",
        '[aliases]\n"default:fast" = "default:code"\n"default:code" = "default:fast"\n',
    )
    with pytest.raises(ConfigError, match="alias loop"):
        load().resolve_model("default:fast")


def test_model_options_defaults():
    assert load().model_options("openai/x") == {
        "api_base": None,
        "api_key": None,
        "transport": "auto",
        "timeout": 120.0,
        "retries": {
            "attempts": 4,
            "base_delay": 0.5,
            "max_delay": 4.0,
            "max_total": 180.0,
        },
        "temperature": {"chat": 0.2, "worker": 0.2, "controller": 0.0, "structure": 0.0, "summary": 0.2},
    }


def test_model_options_overlay_the_per_model_table(vance_home):
    write(
        vance_home / "config.toml",
        """
        [model]
        api_key = "global-key"
        timeout = 30
        [model.retries]
        attempts = 2
        [models."openai/llama3.1"]
        api_base = "http://localhost:11434/v1"
        transport = "direct"
        [models."openai/llama3.1".retries]
        max_total = 5.0
        [models."openai/llama3.1".capabilities]
        parallel_tool_calls = false
        """,
    )
    s = load()
    opts = s.model_options("openai/llama3.1")
    assert opts["api_base"] == "http://localhost:11434/v1"
    assert opts["api_key"] == "global-key"
    assert opts["transport"] == "direct"
    assert opts["timeout"] == 30.0
    assert opts["retries"] == {
        "attempts": 2,
        "base_delay": 0.5,
        "max_delay": 4.0,
        "max_total": 5.0,
    }
    assert "capabilities" not in opts
    assert s.model_options("openai/other")["api_base"] is None


def test_environment_api_base_beats_a_per_model_table(vance_home):
    write(
        vance_home / "config.toml",
        '[models."openai/m"]\napi_base = "http://config:1/v1"\n',
    )
    s = load(
        env={"VANCE_API_BASE": "http://127.0.0.1:8/v1", "VANCE_API_KEY": "env-key"}
    )
    assert s.model_options("openai/m")["api_base"] == "http://127.0.0.1:8/v1"
    assert s.model_options("openai/m")["api_key"] == "env-key"


def test_model_options_resolve_an_alias_first(vance_home):
    write(
        vance_home / "config.toml",
        '[aliases]\n"default:fast" = "openai/m"\n[models."openai/m"]\ntimeout = 7\n',
    )
    assert load().model_options("default:fast")["timeout"] == 7.0


# ----------------------------------------------------------------------------- capabilities


def test_the_bundled_defaults_say_what_the_names_table_says():
    # defaults.toml documents the defaults for the person; names.py is where the code reads them
    from vance_cli.names import DEFAULT_MODEL_TIMEOUT, DEFAULT_RETRIES, SANDBOX_MODES, TRANSPORTS

    s = load()
    assert s.get("model.timeout") == DEFAULT_MODEL_TIMEOUT
    assert s.get("model.retries") == dict(DEFAULT_RETRIES)
    assert s.get("model.transport") in TRANSPORTS and s.get("exec.sandbox") in SANDBOX_MODES


def test_capability_overrides_need_no_model_layer(monkeypatch, vance_home):
    # config/ is below llm/: a capabilities table is read and checked without importing it (what
    # a model can do by default is llm/profile.py's business; tests/llm/test_profile.py).
    # None in sys.modules makes the import fail.
    monkeypatch.setitem(sys.modules, "vance_cli.llm.capabilities", None)
    monkeypatch.setitem(sys.modules, "vance_cli.llm.base", None)
    write(
        vance_home / "config.toml",
        '[aliases]\n"default:fast" = "openai/x"\n[models."openai/x".capabilities]\ntools = false\n',
    )
    s = load()
    assert s.capability_overrides("openai/x") == {"tools": False}
    assert s.capability_overrides("default:fast") == {"tools": False}
    assert s.capability_overrides("openai/other") == {}


def test_unknown_capability_key_names_file_and_key(vance_home):
    path = write(
        vance_home / "config.toml", '[models."openai/x".capabilities]\nvision = true\n'
    )
    with pytest.raises(ConfigError) as info:
        load()
    assert info.value.message.startswith(
        f"{path}: key 'models.\"openai/x\".capabilities.vision': unknown capability"
    )
    assert "strict_json_schema" in info.value.message


def test_capability_value_must_be_a_boolean(vance_home):
    write(
        vance_home / "config.toml", '[models."openai/x".capabilities]\ntools = "yes"\n'
    )
    with pytest.raises(ConfigError, match="expected true or false"):
        load()


def test_loading_settings_stays_cheap():
    code = (
        "import sys\n"
        "from vance_cli.config.scopes import Scopes\n"
        "from vance_cli.config.settings import Settings\n"
        "s = Settings.load(Scopes.discover(), env={'VANCE_MODEL': 'openai/x'})\n"
        "s.resolve_model('default:fast'); s.model_options('openai/x')\n"
        "heavy = [m for m in ('litellm', 'jsonschema', 'pydantic', 'textual', 'httpx', 'yaml') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert out.stdout.strip() == ""


# ----------------------------------------------------------------------------- unknown keys


def test_unknown_keys_warn_with_did_you_mean(vance_home):
    path = write(
        vance_home / "config.toml",
        """\
        [modle]
        default = "x"

        [model]
        api_bse = "http://localhost/v1"

        [structure]
        confidenceTreshold = 0.5

        [models."openai/x"]
        timout = 3

        [exec]
        sandbx = "off"
        """,
    )
    s = load()
    assert s.warnings == [
        f"{path.resolve()}: unknown key 'modle' is ignored; did you mean 'model'? "
        "(known here: model, aliases, models, structure, exec, permissions, mcp)",
        f"{path.resolve()}: unknown key 'structure.confidenceTreshold' is ignored; did you mean "
        "'confidenceThreshold'? (known here: model, schemaBuilderModel, confidenceThreshold, "
        "requireProviderStrictOutput, schemaCacheTtlDays, tenantId)",
        f"{path.resolve()}: unknown key 'exec.sandbx' is ignored; did you mean 'sandbox'? "
        "(known here: sandbox, network, env)",
        f"{path.resolve()}: unknown key 'model.api_bse' is ignored; did you mean 'api_base'? "
        "(known here: default, api_base, api_key, transport, timeout, retries, temperature)",
        f"{path.resolve()}: unknown key 'models.\"openai/x\".timout' is ignored; did you mean "
        "'timeout'? (known here: api_base, api_key, transport, timeout, retries, temperature, capabilities)",
    ]


def test_known_keys_give_no_warnings(vance_home, project):
    write(vance_home / "config.toml", (REPO / "vance_cli/config/defaults.toml").read_text())
    write(
        project / "config.toml",
        '[model]\ndefault = "m"\n[aliases]\n"default:fast" = "m"\n[structure]\ntenantId = "t"\n'
        '[exec]\nsandbox = "auto"\nnetwork = false\nenv = ["GOPATH"]\n',
    )
    assert load().warnings == []


def test_exec_settings_are_type_checked(vance_home):
    write(vance_home / "config.toml", '[exec]\nsandbox = "sometimes"\n')
    with pytest.raises(ConfigError, match="must be one of auto, required, off"):
        load()
    write(vance_home / "config.toml", '[exec]\nenv = ["OK", "NOT OK"]\n')
    with pytest.raises(ConfigError, match="list of environment variable names"):
        load()
    (vance_home / "config.toml").unlink()
    assert load(env={"VANCE_SANDBOX": "required"}).get("exec.sandbox") == "required"
    with pytest.raises(ConfigError, match="VANCE_SANDBOX"):
        load(env={"VANCE_SANDBOX": "maybe"})


def test_the_cli_prints_config_warnings_once(vance_home):
    from tests.cli.helpers import vance

    write(vance_home / "config.toml", "[model]\ntimeuot = 3\n")
    r = vance("recipes", "list")
    assert r.returncode == 0
    assert r.stderr.count("unknown key 'model.timeuot' is ignored; did you mean 'timeout'?") == 1


def test_the_readme_settings_example_has_only_known_keys(vance_home):
    from tests.docs import section as doc_section

    section = doc_section("Settings")  # docs/settings.md, linked from the README
    block = section[section.index("```toml\n") + len("```toml\n") : section.index("```\n", section.index("```toml"))]
    write(vance_home / "config.toml", block)
    s = load()
    assert s.warnings == []
    assert s.get("exec.sandbox") == "auto" and s.get("exec.env") == []
