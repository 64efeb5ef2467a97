"""The official JSON Schema Test Suite as the bar for the provider schemas (issue 15).

Every schema of the vendored files (tests/structure/jsts, draft2020-12 and draft7), for each
family's default capabilities and the strict override, with and without the ``_need`` escape:
check_schema → build_plan → the answer's way back → local validation (suite_driver.py says what
each class means). Parametrized over files, not cases: the whole run takes seconds.
"""

from __future__ import annotations

import pytest

from tests.structure.suite_driver import FAMILIES, Problems, cases, run_case, suite_files

FILES = suite_files()


def test_the_vendored_suite_is_there():
    names = {f"{p.parent.name}/{p.name}" for p in FILES}
    assert len(FILES) >= 80
    assert {"draft2020-12/ref.json", "draft7/ref.json", "draft2020-12/unevaluatedProperties.json"} <= names


@pytest.mark.parametrize("allow_need", [False, True], ids=["plain", "need"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_provider_schema_forbids_a_valid_answer_breaks_a_rule_or_crashes(path, allow_need):
    results = {name: Problems() for name in FAMILIES}
    for case in cases(path):
        for name, caps in FAMILIES.items():
            run_case(case, caps, results[name], allow_need=allow_need)
    found = [f"[{name}] {kind}: {line}" for name, p in results.items() for kind, lines in p.found.items() for line in lines]
    assert found == []
