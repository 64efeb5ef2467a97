"""Issue 14 re-review F1 (repro by the reviewer, kept). Review of fix14/5: the parse cache's entries went through store/atomic.py, which fsyncs every
entry. The old writer deliberately did not fsync (an entry lost to a power cut is parsed again);
a cold run now pays one fsync per entry (14 on `vance recipes list`)."""
import os

from vance_cli.store import parse_cache


def test_a_cache_entry_is_written_without_an_fsync(tmp_path, monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    home = tmp_path / "home"
    home.mkdir()
    value = parse_cache.cached_parse("json", '{"a": 1}', lambda t: {"a": 1}, home=home)
    assert value == {"a": 1}
    assert list((home / "cache" / "parsed").glob("*.json")), "the entry was written"
    assert calls == [], f"{len(calls)} fsync(s) for a cache entry that is cheap to rebuild"
