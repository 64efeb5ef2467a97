"""The README's first steps work for a new user: clone before install, shipped example files."""

from __future__ import annotations

import re

from tests.cli.helpers import REPO
from tests.docs import doc_text, readme_text, section


def test_install_clones_before_it_installs():
    assert "\n## Install\n" in readme_text()  # the quick start's first step, in the README itself
    install = section("Install")
    assert "git clone" in install and "pip install ." in install
    assert install.index("git clone") < install.index("pip install .")


def test_every_schema_file_the_docs_use_is_shipped():
    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", doc_text(), re.S))
    files = re.findall(r"--schema\s+(\S+\.json)\b", blocks)
    assert files, "the docs show no structure example with a schema file"
    assert re.search(r"--schema\s+\S+\.json\b", "\n".join(re.findall(r"```bash\n(.*?)```", readme_text(), re.S))), \
        "the README's first steps show no structure example with a schema file"
    for name in files:
        assert (REPO / name).is_file(), f"the docs use {name}, which is not in the repository"
