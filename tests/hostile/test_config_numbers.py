"""Issue 17 re-review, finding 8 (LOW): `nan` and `inf` in config.toml (TOML has both literals) are a
config error naming the key, not an "internal error" in `chat -p` or `doctor` (httpx: "deadline
must not be NaN"; json: "Out of range float values"). [model] timeout and temperature are not
restricted keys, so an untrusted clone's .vance/config.toml reached them too. And the case the
review found untested: a 5,000-digit integer in config.toml.
"""

from __future__ import annotations

import pytest

from tests.helpers import run_cli


@pytest.mark.parametrize("line", ["[model]\ntimeout = nan", "[model.temperature]\nchat = nan"])
@pytest.mark.parametrize("where", ["user", "untrusted-project"])
def test_a_nan_setting_is_a_config_error(fake_openai, vance_home, tmp_path, line, where):
    # the reviewer's repro (test_r6_config_nan.py)
    fake_openai.enqueue(tool_calls=[("respond", {"message": "hi", "awaiting_user_input": True})])
    env = {"VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url}
    cwd = None
    if where == "user":
        (vance_home / "config.toml").write_text(line + "\n")
    else:
        cwd = tmp_path / "clone"
        (cwd / ".vance").mkdir(parents=True)
        (cwd / ".vance" / "config.toml").write_text(line + "\n")
    for args in (("chat", "-p", "hi"), ("doctor",)):
        r = run_cli(*args, env=env, cwd=cwd)
        assert "internal error" not in r.stderr, (args, r.stderr)
        assert "expected a finite number, got nan" in r.stdout + r.stderr, (args, r.stdout, r.stderr)


@pytest.mark.parametrize("line", [
    "[model]\ntimeout = inf",
    "[model]\ntimeout = -inf",
    "[models.\"openai/m\".price]\ninput = nan",
    "[model.retries]\nbase_delay = nan",
    "[structure]\nschemaCacheTtlDays = inf",
    "[mcp.servers.x]\ncommand = \"true\"\ntimeout = nan",
])
def test_every_non_finite_number_names_its_key(vance_home, line):
    (vance_home / "config.toml").write_text(line + "\n")
    r = run_cli("chat", "-p", "hi", env={"VANCE_MODEL": "openai/m"})
    assert r.returncode == 1 and "internal error" not in r.stderr, r.stderr
    assert "config.toml: key '" in r.stderr and "expected a finite number, got " in r.stderr, r.stderr


def test_a_5000_digit_integer_in_config_is_no_internal_error(fake_openai, vance_home):
    fake_openai.enqueue(tool_calls=[("respond", {"message": "hi", "awaiting_user_input": True})])
    (vance_home / "config.toml").write_text("[model]\ntimeout = " + "9" * 5000 + "\n")
    env = {"VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url}
    for args in (("chat", "-p", "hi"), ("doctor",)):
        r = run_cli(*args, env=env)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
