"""The wheel ships every package, the bundled recipes/schemas and the defaults file.

Building a wheel takes seconds, so these tests check the packaging configuration against the
source tree instead; a real non-editable install is exercised by .ci/run.
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"
]


def _source_packages() -> set[str]:
    found = set()
    for py in (REPO / "vance_cli").rglob("*.py"):
        if "__pycache__" in py.parts:
            continue
        found.add(".".join(py.parent.relative_to(REPO).parts))
    return found


def _patterns(package: str) -> list[str]:
    data = CONFIG.get("package-data", {})
    return [*data.get("*", []), *data.get(package, [])]


def test_every_source_package_is_listed_in_pyproject():
    missing = _source_packages() - set(CONFIG["packages"])
    assert not missing, (
        f"add these to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    )


def test_bundled_folders_are_mapped_into_the_package():
    assert CONFIG["package-dir"] == {
        "vance_cli._bundled.recipes": "recipes",
        "vance_cli._bundled.schemas": "schemas",
    }
    for package, folder in CONFIG["package-dir"].items():
        assert package in CONFIG["packages"]
        assert (REPO / folder).is_dir()


def test_every_bundled_file_matches_a_package_data_pattern():
    for package, folder in CONFIG["package-dir"].items():
        for path in (REPO / folder).iterdir():
            if path.is_file():
                assert any(fnmatch.fnmatch(path.name, p) for p in _patterns(package)), (
                    f"{path} would not ship"
                )


def test_schemas_folder_is_never_empty_so_the_package_exists():
    assert any((REPO / "schemas").iterdir())


def test_defaults_toml_ships_as_package_data():
    assert (REPO / "vance_cli" / "config" / "defaults.toml").is_file()
    assert any(
        fnmatch.fnmatch("defaults.toml", p) for p in _patterns("vance_cli.config")
    )


def test_every_install_hint_names_the_package_as_published():
    """The distribution is vance-cli: a hint saying `pip install 'vance[mcp]'` (doctor's, the MCP
    survey's) would install another project's package, or nothing."""
    import re

    name = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    assert name == "vance-cli"
    wrong = []
    for path in [*(REPO / "vance_cli").rglob("*.py"), *(REPO / "vance_cli").rglob("*.toml"),
                 REPO / "README.md", *(REPO / "docs").rglob("*.md")]:
        if "__pycache__" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"(?<![-\w])vance\[", line):
                wrong.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not wrong, "\n".join(wrong)
