"""The README's first steps work for a new user: clone before install, shipped example files."""

from __future__ import annotations

import re

from tests.cli.helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.S | re.M)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def test_install_clones_before_it_installs():
    install = _section("Install")
    assert "git clone" in install and "pip install ." in install
    assert install.index("git clone") < install.index("pip install .")


def test_every_schema_file_the_readme_uses_is_shipped():
    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", README, re.S))
    files = re.findall(r"--schema\s+(\S+\.json)\b", blocks)
    assert files, "the README shows no structure example with a schema file"
    for name in files:
        assert (REPO / name).is_file(), f"the README uses {name}, which is not in the repository"
