"""The parse cache: the same text gives the same value without the parser; nothing stale, nothing lost."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys

import pytest

from tests.cli.helpers import REPO
from vance_cli.store import parse_cache
from vance_cli.store.parse_cache import cached_parse


class Counting:
    def __init__(self, value_of):
        self.calls = 0
        self.value_of = value_of

    def __call__(self, text):
        self.calls += 1
        return self.value_of(text)


def folder(home):
    return home / "cache" / "parsed"


def test_the_same_text_is_parsed_once_and_an_edit_is_parsed_again(vance_home):
    parse = Counting(lambda text: {"text": text, "n": [1, 2.5, None, True]})
    first = cached_parse("yaml", "a: 1", parse, home=vance_home)
    again = cached_parse("yaml", "a: 1", parse, home=vance_home)
    assert first == again == {"text": "a: 1", "n": [1, 2.5, None, True]} and parse.calls == 1
    assert cached_parse("yaml", "a: 2", parse, home=vance_home) == {"text": "a: 2", "n": [1, 2.5, None, True]}
    assert parse.calls == 2  # an edited text is a new key: never the old value
    assert cached_parse("toml", "a: 1", parse, home=vance_home) and parse.calls == 3  # another parser, another key
    assert len(list(folder(vance_home).glob("*.json"))) == 3


@pytest.mark.parametrize("value", [
    {"when": datetime.date(2026, 1, 2)},  # YAML dates are not JSON
    {1: "integer key"},  # JSON would make it "1"
    {"x": float("nan")},
    ("a", "tuple"),
], ids=["date", "int-key", "nan", "tuple"])
def test_a_value_json_cannot_carry_unchanged_is_parsed_every_time(vance_home, value):
    parse = Counting(lambda text: value)
    assert cached_parse("yaml", "x", parse, home=vance_home) is value
    assert cached_parse("yaml", "x", parse, home=vance_home) is value
    assert parse.calls == 2 and not list(folder(vance_home).glob("*.json"))


def test_a_parse_error_is_raised_and_not_kept(vance_home):

    def bad(text):
        raise ValueError("broken")

    for _ in range(2):
        with pytest.raises(ValueError, match="broken"):
            cached_parse("yaml", "x", bad, home=vance_home)
    assert not folder(vance_home).exists() or not list(folder(vance_home).glob("*.json"))


def test_a_check_that_fails_keeps_nothing(vance_home):

    def check(value):
        raise RuntimeError("too big")

    with pytest.raises(RuntimeError):
        cached_parse("yaml", "x", lambda t: {"big": t}, check=check, home=vance_home)
    assert not folder(vance_home).exists() or not list(folder(vance_home).glob("*.json"))


def test_a_torn_or_foreign_entry_is_parsed_again_and_replaced(vance_home):
    parse = Counting(lambda text: {"v": text})
    cached_parse("yaml", "x", parse, home=vance_home)
    (entry,) = folder(vance_home).glob("*.json")
    for damaged in ('{"key": "', '{"key": "someone else", "value": 1}', ""):
        entry.write_text(damaged)
        assert cached_parse("yaml", "x", parse, home=vance_home) == {"v": "x"}
    assert parse.calls == 4
    assert cached_parse("yaml", "x", parse, home=vance_home) == {"v": "x"} and parse.calls == 4  # whole again


def test_no_state_folder_no_cache(vance_home):
    vance_home.rmdir()  # a fresh machine: no state folder yet
    parse = Counting(lambda text: {"v": 1})
    cached_parse("yaml", "x", parse, home=vance_home)
    cached_parse("yaml", "x", parse, home=vance_home)
    assert parse.calls == 2 and not vance_home.exists()  # a read-only command leaves nothing behind


def test_an_unwritable_cache_folder_costs_only_time(vance_home):
    folder(vance_home).parent.mkdir(parents=True)
    folder(vance_home).write_text("a file where the folder should be")
    parse = Counting(lambda text: {"v": 1})
    assert cached_parse("yaml", "x", parse, home=vance_home) == cached_parse("yaml", "x", parse, home=vance_home) == {"v": 1}
    assert parse.calls == 2


def test_the_folder_is_emptied_past_its_bound(vance_home, monkeypatch):
    monkeypatch.setattr(parse_cache, "MAX_ENTRIES", 5)
    for i in range(12):
        cached_parse("yaml", str(i), lambda t: {"v": t}, home=vance_home)
    assert 1 <= len(list(folder(vance_home).glob("*.json"))) <= 5


def test_an_edited_recipe_is_read_anew(vance_home, tmp_path):
    from vance_cli.config.recipes import validate_recipe_file

    path = tmp_path / "mine.yaml"
    path.write_text("engine: ford\ndescription: first\n")
    assert validate_recipe_file(path).description == "first"
    assert validate_recipe_file(path).description == "first"
    path.write_text("engine: ford\ndescription: second\n")
    assert validate_recipe_file(path).description == "second"


def test_a_cached_recipe_still_fails_validation_the_same_way(vance_home, tmp_path):
    from vance_cli.config.recipes import RecipeError, validate_recipe_file

    path = tmp_path / "mine.yaml"
    path.write_text("engine: nope\n")
    messages = []
    for _ in range(2):
        with pytest.raises(RecipeError) as err:
            validate_recipe_file(path)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "unknown engine 'nope'" in messages[0]
    path.write_text("engine: [unclosed\n")
    with pytest.raises(RecipeError, match="invalid YAML"):
        validate_recipe_file(path)


def test_a_warm_one_shot_turn_imports_neither_parser(fake_openai, vance_home):
    probe = ("import atexit, sys, runpy; sys.argv = ['vance', 'chat', '-p', 'hi', '-q']\n"  # atexit: the script ends with os._exit after it
             "atexit.register(lambda: print(sorted(m for m in ('yaml', 'tomllib') if m in sys.modules), file=sys.stderr))\n"
             "runpy.run_module('vance_cli', run_name='__main__')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "VANCE_MODEL": "openai/m", "VANCE_API_BASE": fake_openai.url}
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env) for _ in range(2)]
    assert all(r.returncode == 0 and r.stdout == "echo: hi\n" for r in runs), runs[-1].stderr
    assert runs[0].stderr.strip().endswith("['tomllib', 'yaml']")  # the first run parses
    assert runs[1].stderr.strip().endswith("[]")  # the second reads what it kept


def test_entries_are_private_to_their_owner_a_config_may_hold_a_key(vance_home):
    # Found by review: a config.toml chmod 600 with an API key was copied into a 0644 entry.
    # Since then a config.toml is not kept at all; the entries that are stay private.
    import stat

    from tests.cli.helpers import vance

    config = vance_home / "config.toml"
    config.write_text('[model]\ndefault = "openai/gpt-4o"\napi_key = "sk-TOPSECRET"\n')
    config.chmod(0o600)
    assert vance("doctor", "--offline").returncode in (0, 1)
    entries = list(folder(vance_home).glob("*.json"))
    assert entries  # the bundled files were cached, and no copy of the key is
    assert not [e for e in entries if "sk-TOPSECRET" in e.read_text()]
    for entry in entries:
        assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder(vance_home).stat().st_mode) & 0o077 == 0


def test_the_check_runs_on_a_value_read_back_too(vance_home):
    # A bound tightened after a value was kept applies to it.
    cached_parse("yaml", "x", lambda t: {"v": t}, home=vance_home)
    seen = []
    assert cached_parse("yaml", "x", lambda t: 1 / 0, home=vance_home, check=seen.append) == {"v": "x"}
    assert seen == [{"v": "x"}]


def test_deep_nesting_is_parsed_every_time_not_an_error(vance_home):
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    parse = Counting(lambda text: deep)
    assert cached_parse("yaml", "deep", parse, home=vance_home) is deep
    assert cached_parse("yaml", "deep", parse, home=vance_home) is deep and parse.calls == 2


def test_the_cache_is_the_invocations_state_folder_not_the_environments(vance_home, tmp_path):
    # Found by review: `vance demo --home X` wrote into the person's own $VANCE_HOME.
    from tests.cli.helpers import vance

    r = vance("demo", "--json", "--home", str(tmp_path / "d"))
    assert r.returncode == 0, r.stderr
    assert list(vance_home.iterdir()) == []
    assert list((tmp_path / "d" / "cache" / "parsed").glob("*.json"))


def test_a_huge_integer_in_a_config_or_recipe_is_a_clear_error(vance_home, tmp_path):
    # Found by review: Python refuses int() of 4,300+ digits; that was an "internal error".
    from tests.cli.helpers import vance

    (vance_home / "config.toml").write_text(f"[model]\ntimeout = {'9' * 5000}\n")
    r = vance("ps")
    assert r.returncode == 1 and "is not valid TOML" in r.stderr and "internal error" not in r.stderr
    (vance_home / "config.toml").unlink()
    recipe = tmp_path / "big.yaml"
    recipe.write_text(f"engine: ford\nmaxToolIterations: {'9' * 5000}\n")
    r = vance("recipes", "validate", str(recipe))
    assert r.returncode == 1 and "invalid YAML" in r.stderr and "internal error" not in r.stderr


def test_entries_are_written_by_the_one_atomic_writer_private(vance_home, monkeypatch):
    # Found by review of issue 14: the cache had a third atomic writer of its own.
    import stat

    from vance_cli.store import atomic

    writes = []
    real = atomic.atomic_write_bytes

    def recording(path, data, **kw):
        writes.append((path, kw))
        real(path, data, **kw)

    monkeypatch.setattr(atomic, "atomic_write_bytes", recording)
    cached_parse("yaml", "x", lambda t: {"v": t}, home=vance_home)
    ((path, kw),) = writes
    assert path.parent == folder(vance_home) and kw == {"mode": 0o600, "fsync": False}  # rebuildable: no fsync (issue 14 re-review F1)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)  # a replaced entry becomes private again
    path.write_text("torn")
    cached_parse("yaml", "x", lambda t: {"v": t}, home=vance_home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(writes) == 2


def test_the_purge_takes_leftover_temp_files_and_survives_what_it_cannot_remove(vance_home, monkeypatch):
    # Found by review of issue 14: the purge counted and removed only entries, so temp files of
    # killed writers piled up for ever; and one name it could not remove ended the purge and the
    # write with it, so the cache stayed full and kept nothing new.
    monkeypatch.setattr(parse_cache, "MAX_ENTRIES", 4)
    for i in range(3):
        cached_parse("yaml", str(i), lambda t: {"v": t}, home=vance_home)
    leftovers = [folder(vance_home) / ".abc.json.1a2b3c4d.tmp", folder(vance_home) / ".def.4242.tmp"]
    for leftover in leftovers:
        leftover.write_text("half")
    (folder(vance_home) / "stuck.json").mkdir()  # counts as an entry, cannot be unlinked
    parse = Counting(lambda t: {"v": t})
    cached_parse("yaml", "new", parse, home=vance_home)  # 4 entries: the purge runs
    left = sorted(p.name for p in folder(vance_home).iterdir())
    assert not any(leftover.exists() for leftover in leftovers)
    assert len(left) == 2 and "stuck.json" in left  # the stuck name and the new entry, nothing else
    assert cached_parse("yaml", "new", parse, home=vance_home) == {"v": "new"} and parse.calls == 1
