"""The documentation the tests hold to its word: README.md (the quick start) and docs/*.md (the
reference it links). Tests that check what the docs say read it here, so a section that moves
from one file to another is still checked."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"


def doc_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def readme_text() -> str:
    return _read(README)


def doc_text() -> str:
    """README.md and every docs/*.md, one after the other."""
    return "\n".join(_read(p) for p in doc_files())


def _without_code(text: str) -> str:
    # a `# comment` inside a fenced block is not a heading: blank the fences out, keeping lines
    return re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)


def section(title: str) -> str:
    """The text under the heading `# title` or `## title` in README.md or a docs/*.md file, up to
    the next heading of the same or a higher level. Fails when no file or two files have it."""
    found = []
    for path in doc_files():
        text = _read(path)
        bare = _without_code(text)
        for match in re.finditer(rf"^(#{{1,2}}) {re.escape(title)}\n", bare, re.M):
            level = len(match.group(1))
            end = re.compile(rf"^#{{1,{level}}} ", re.M).search(bare, match.end())
            found.append((path, text[match.end() : end.start() if end else len(text)]))
    assert found, f"no README.md or docs/*.md has a '## {title}' section"
    assert len(found) == 1, f"'{title}' is a heading in {[str(p.relative_to(REPO)) for p, _ in found]}"
    return found[0][1]
