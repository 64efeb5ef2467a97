"""The real-model evaluation's own cases can pass and can fail (offline, no model).

A check that no solution passes, or an expected value the schema rejects, would make a case
fail for every model and the figures meaningless; a check that an empty workspace passes would
count every run as solved.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "realmodel"))
import cases  # noqa: E402
import eval as harness  # noqa: E402


def test_the_suite_has_the_size_the_issue_asks_for():
    assert len(cases.CHAT) >= 10
    assert len(cases.STRUCTURE) >= 12
    assert len(cases.CODING) >= 8
    ids = [c["id"] for c in cases.CHAT + cases.STRUCTURE + cases.CODING]
    assert len(ids) == len(set(ids))


def _check(tmp_path: Path, case: dict, solved: bool) -> subprocess.CompletedProcess:
    for rel, text in case.get("files", {}).items():
        (tmp_path / rel).write_text(text)
    if solved:
        for rel, text in case["reference"].items():
            (tmp_path / rel).write_text(text)
    (tmp_path / "check.py").write_text(case["check"])
    return subprocess.run([sys.executable, "check.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("case", cases.CODING, ids=lambda c: c["id"])
def test_each_coding_check_passes_the_reference_and_fails_the_start(case, tmp_path):
    (tmp_path / "start").mkdir()
    (tmp_path / "solved").mkdir()
    start = _check(tmp_path / "start", case, solved=False)
    assert start.returncode != 0, start.stdout
    solved = _check(tmp_path / "solved", case, solved=True)
    assert solved.returncode == 0, solved.stdout + solved.stderr


def _schema_of(case: dict) -> dict:
    if "schema" in case:
        return case["schema"]
    name = case["named"]
    for folder in (ROOT / "schemas", ROOT / "examples" / "schemas"):
        if (folder / f"{name}.json").is_file():
            import json

            return json.loads((folder / f"{name}.json").read_text())
    raise AssertionError(f"no schema file for {name}")


@pytest.mark.parametrize("case", [c for c in cases.STRUCTURE if "expect" in c], ids=lambda c: c["id"])
def test_each_expected_extraction_is_valid_against_its_schema(case):
    schema = _schema_of(case)
    checker = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    assert list(checker.iter_errors(case["expect"])) == []
    assert harness.differences(case["expect"], case["expect"]) == []


def test_need_more_input_cases_name_a_status_and_no_value():
    need = [c for c in cases.STRUCTURE if c.get("status") == "need-more-input"]
    assert len(need) >= 2 and not any("expect" in c for c in need)


def test_chat_facts_are_regular_expressions_that_a_right_answer_matches():
    answers = {
        "file-question": "The meeting with Dana is on Thursday at 15:00 in room B12.",
        "two-tool-compare": "a.txt holds the larger number, 417.",
        "file-question-es": "La reunión es el lunes a las 10:30.",
        "csv-lookup": "A lamp costs 24.50.",
    }
    for case in cases.CHAT:
        for fact in case.get("facts", []):
            re.compile(fact)
        if case["id"] in answers:
            assert all(re.search(f, answers[case["id"]], re.IGNORECASE) for f in case["facts"]), case["id"]


def test_extracted_values_compare_as_the_cases_say():
    assert harness.differences({"name": "ann  LEE", "age": 34.0}, {"name": "Ann Lee", "age": 34}) == []
    assert harness.differences({"age": 33}, {"age": 34}) == ["/age 33 != 34"]
    assert harness.differences({"a": 1, "b": 2}, {"a": 1}) == ["/b not expected (2)"]
    assert harness.differences({}, {"a": 1}) == ["/a missing"]
    assert harness.differences([1, 2], [2, 1]) != []  # order of an array matters
    assert harness.norm(1) == 1.0
    assert harness.differences({"x": True}, {"x": 1}) != []  # a boolean is no number
    assert harness.differences({"x": False}, {"x": False}) == []
