"""The one copy of each text helper: shorten, json_pointer, pointer_token, did_you_mean.

The sanitising half of vance_cli/text.py is tested where it matters (tests/cli/test_cli_bad_bytes.py,
tests/tui/test_sanitize.py); these pin the forms its callers relied on when each kept its own copy.
"""

from __future__ import annotations

from vance_cli.text import did_you_mean, json_pointer, pointer_token, shorten


def test_shorten_keeps_short_text_and_marks_a_cut():
    assert shorten("abcdef", 6) == "abcdef"
    assert shorten("abcdefg", 6) == "abcde…"
    assert len(shorten("x" * 500, 300)) == 300


def test_shorten_one_line_folds_whitespace_first():
    assert shorten("a\n  b\tc", 80, one_line=True) == "a b c"
    assert shorten("one  two three", 8, one_line=True) == "one two…"


def test_shorten_keeps_the_end_and_takes_another_mark():
    assert shorten("first line\nlast line", 10, keep_end=True) == "…last line"
    assert shorten("x" * 100, 80, mark="...") == "x" * 77 + "..."


def test_shorten_tidy_drops_the_space_beside_the_mark():
    assert shorten("word and more", 6) == "word …"
    assert shorten("word and more", 6, tidy=True) == "word…"


def test_json_pointer_escapes_tilde_before_slash():
    assert json_pointer(["a/b", "~1", 0]) == "/a~1b/~01/0"
    assert json_pointer([]) == ""
    assert json_pointer((), "(root)") == "(root)"


def test_pointer_token_reads_back_what_json_pointer_wrote():
    for key in ("a/b", "~1", "~0/~", "plain"):
        assert pointer_token(json_pointer([key])[1:]) == key


def test_did_you_mean_names_the_closest_choices():
    assert did_you_mean("api_bsae", ["api_base", "model"]) == "; did you mean 'api_base'?"
    assert did_you_mean("zzz", ["api_base", "model"]) == ""
    assert did_you_mean("ordr", ["order", "orders", "border"], n=2) == "; did you mean 'order' or 'orders'?"
