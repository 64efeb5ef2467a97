"""default:strong, the escalation alias (issue 18): its own model, else default:analyze, else model.default."""

from __future__ import annotations

import pytest

from vance_cli.config.recipes import load_recipe
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.errors import ConfigError


def _load(home, text: str, **env):
    (home / "config.toml").write_text(text)
    scopes = Scopes.discover()
    return Settings.load(scopes, env=env)


def test_strong_has_its_own_model_and_falls_back_to_analyze_then_the_default(vance_home):
    s = _load(vance_home, '[aliases]\n"default:code" = "openai/small"\n"default:strong" = "openai/big"\n', VANCE_MODEL="openai/base")
    assert s.resolve_model("default:strong") == "openai/big" and s.resolve_model("default:code") == "openai/small"
    s = _load(vance_home, '[aliases]\n"default:code" = "openai/small"\n"default:analyze" = "openai/judge"\n', VANCE_MODEL="openai/base")
    assert s.resolve_model("default:strong") == "openai/judge"
    s = _load(vance_home, '[aliases]\n"default:code" = "openai/small"\n', VANCE_MODEL="openai/base")
    assert s.resolve_model("default:strong") == "openai/base"


def test_strong_as_the_default_model_with_nothing_set_says_no_model(vance_home):
    s = _load(vance_home, '[model]\ndefault = "default:strong"\n')
    with pytest.raises(ConfigError, match="no model configured"):
        s.resolve_model(None)


def test_the_escalation_recipe_is_not_the_workers_alias():
    scopes = Scopes.discover()
    assert load_recipe("coding", scopes).model == "default:strong"
    assert load_recipe("benjy-do-coding", scopes).model == "default:code"
