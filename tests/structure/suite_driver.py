"""The official JSON Schema Test Suite through the provider schemas (issue 15's bar).

Every schema of the vendored suite files (``tests/structure/jsts``; source and commit in its
SOURCE.md) goes through what a structure call does: ``check_schema`` → ``build_plan`` for one
family's capabilities → the answer's way back (``_unwrap`` + ``strip_injected_nulls``) → local
validation against the caller's schema. ``run_case`` returns the problems of one schema for one
family, by class:

- ``crash``: an exception other than the documented InvalidSchema of ``check_schema``;
- ``rules``: the provider schema breaks the family's documented rules (strict_rules.py), or is not
  a valid 2020-12 schema, or holds a ``$ref`` that does not resolve inside it;
- ``forbidden``: a valid instance a provider holding that schema cannot send: its faithful reply
  (strict's nulls for absent fields, the envelope) fails the provider schema, or needs a key the
  provider schema does not declare;
- ``mangled``: a valid instance whose faithful reply does not come back, after the way back, as a
  value the caller's schema accepts;
- ``lost``: an invalid instance that the way back turns into an accepted value;
- ``modified``: the caller's schema was changed.

A draft-7 file's schemas get ``"$schema": draft-07`` (the suite's files assume their draft).
Besides its own instances, each case is run with generated valid ones
(``instances.probes``: a key declared somewhere set to a string or an integer at each object of a
valid instance, kept where the project's validator accepts it), which reach the answers an
alternative leaves open although a sibling declares the key.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from tests.structure.instances import probes, provider_reply
from tests.structure.strict_rules import (
    anthropic_problems,
    gemini_problems,
    llama_cpp_reading,
    openai_strict_problems,
    wellformed_problems,
)
from vance_cli.llm.base import Capabilities

SUITE = Path(__file__).parent / "jsts"
DRAFT7 = "http://json-schema.org/draft-07/schema#"

# Each family's default capabilities (vance_cli.llm.capabilities) and the strict override.
FAMILIES: dict[str, Capabilities] = {
    "openai": Capabilities(family="openai", json_schema=True, strict_json_schema=True, json_object=True),
    "anthropic": Capabilities(family="anthropic", json_schema=True, strict_json_schema=False, json_object=False),
    "anthropic+strict": Capabilities(family="anthropic", json_schema=True, strict_json_schema=True, json_object=False),
    "gemini": Capabilities(family="gemini", json_schema=True, strict_json_schema=False, json_object=True),
    "gemini+strict": Capabilities(family="gemini", json_schema=True, strict_json_schema=True, json_object=True),
    "ollama": Capabilities(family="ollama", json_schema=True, strict_json_schema=False, json_object=True),
    "other+strict": Capabilities(family="other", json_schema=True, strict_json_schema=True, json_object=True),
}
CLASSES = ("crash", "rules", "forbidden", "mangled", "lost", "modified")


def suite_files() -> list[Path]:
    return sorted(SUITE.glob("draft*/*.json"))


@dataclass
class Case:
    where: str  # file and group description
    schema: Any
    tests: list[tuple[str, Any, bool]]  # (description, instance, valid)
    _probes: list[tuple[str, Any, bool]] | None = None

    def with_probes(self) -> list[tuple[str, Any, bool]]:
        """The tests and the generated valid probes (made once per case, for every family)."""
        if self._probes is None:
            self._probes = generated(self.schema, self.tests)
        return self.tests + self._probes


def cases(path: Path) -> list[Case]:
    out = []
    draft7 = path.parent.name == "draft7"
    for group in json.loads(path.read_text(encoding="utf-8")):
        schema = group["schema"]
        if draft7 and isinstance(schema, dict) and "$schema" not in schema:
            schema = {"$schema": DRAFT7, **schema}
        elif draft7 and isinstance(schema, bool):
            continue  # the boolean root is the same in every draft; the 2020-12 file has it
        tests = [(t["description"], t["data"], t["valid"]) for t in group["tests"]]
        out.append(Case(f"{path.parent.name}/{path.name}: {group['description']}", schema, tests))
    return out


# Cases the suite files do not hold, each a class a review found crashing or forbidding: a
# recursive $ref with asserting siblings (issue 15 review, finding 1; cycles stay refs).
NODE = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"type": "object", "$ref": "#/$defs/Node"}},
    },
}
EXTRA_CASES = [
    Case(
        "extra: type beside a recursive $ref (a tree)",
        {"$defs": {"Node": NODE}, "$ref": "#/$defs/Node"},
        [
            ("leaf", {"name": "a"}, True),
            ("two levels", {"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": []}]}]}, True),
            ("a child without name", {"name": "a", "children": [{"children": []}]}, False),
        ],
    ),
    Case(
        "extra: type beside an anyOf holding a recursive $ref (a list)",
        {
            "type": "object",
            "properties": {"name": {"type": "string"}, "next": {"type": "object", "anyOf": [{"$ref": "#"}, {"type": "null"}]}},
        },
        [("two", {"name": "a", "next": {"name": "b"}}, True), ("next a string", {"next": "x"}, False)],
    ),
    Case(
        "extra: minProperties beside a recursive $ref",
        {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#", "minProperties": 1}}},
        [
            ("three", {"v": 1, "next": {"v": 2, "next": {"v": 3}}}, True),
            ("empty next", {"v": 1, "next": {}}, False),
            ("deep empty next", {"next": {"next": {"v": 1, "next": {}}}}, False),
        ],
    ),
    Case(
        "extra: additionalProperties false beside a recursive $ref",
        {"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#", "additionalProperties": False}}},
        [
            ("nested", {"name": "a", "child": {"name": "b", "child": {"name": "c"}}}, True),
            ("undeclared in child", {"child": {"x": 1}}, False),
        ],
    ),
    Case(
        "extra: properties beside a recursive $ref",
        {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#", "properties": {"w": {"type": "string"}}}}},
        [("w in next", {"v": 1, "next": {"w": "x", "next": {"w": "y", "next": {"v": 2, "w": "z"}}}}, True), ("w int", {"next": {"w": 1}}, False)],
    ),
    Case(
        "extra: allOf [$ref root] beside type",
        {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"type": "object", "allOf": [{"$ref": "#"}]}}},
        [("chain", {"v": 1, "next": {"next": {"v": 2}}}, True), ("next a list", {"next": []}, False)],
    ),
]


def generated(schema: Any, tests: list[tuple[str, Any, bool]]) -> list[tuple[str, Any, bool]]:
    """Valid probes of the valid instances (instances.probes) the suite does not hold already."""
    from vance_cli.errors import InvalidSchema
    from vance_cli.schema.check import check_schema
    from vance_cli.schema.reasons import make_validator

    root = schema if isinstance(schema, dict) else {"allOf": [schema]}
    try:
        check_schema(root)
        validator = make_validator(root)
        valid = [t[1] for t in tests if t[2] and validator.is_valid(t[1])]
    except (InvalidSchema, Exception):  # noqa: BLE001 - refused or unusable: run_case reports it
        return []
    seen = [json.dumps(t[1], sort_keys=True) for t in tests]
    out: list[tuple[str, Any, bool]] = []
    for value in valid:
        for probe in probes(root, value):
            text = json.dumps(probe, sort_keys=True)
            if text not in seen and validator.is_valid(probe):
                seen.append(text)
                out.append((f"probe {text[:60]}", probe, True))
    return out


@dataclass
class Problems:
    found: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in CLASSES})
    strict_off: int = 0
    plans: int = 0
    undeclared: int = 0  # valid instances with keys no schema declares, left out of closed objects
    valid: int = 0  # valid instances tried
    inexact: int = 0  # valid instances that come back valid but not as sent (explicit nulls)
    inexact_lines: list[str] = field(default_factory=list)
    invalid: int = 0  # invalid instances tried

    def add(self, kind: str, line: str) -> None:
        self.found[kind].append(line)

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.found.items()}


def _refs_resolve(provider: Any) -> list[str]:
    """Refs of a provider schema that do not resolve inside it (JSON pointers only)."""
    from tests.structure.strict_rules import unresolved_refs

    return unresolved_refs(provider)


# Families whose provider turns the schema into a llama.cpp grammar (Ollama's `format`): the
# provider schema is checked the way llama.cpp's converter reads it (strict_rules.llama_cpp_reading:
# objects without additionalProperties closed, the siblings of $ref/anyOf/oneOf ignored, ...).
LLAMA_CPP_FAMILIES = frozenset({"ollama"})


def rule_problems(plan: Any, caps: Capabilities | None = None) -> list[str]:
    """The family's documented rules, as strict_rules.py writes them down."""
    schema = plan.schema
    problems = list(wellformed_problems(schema))
    if caps is not None and caps.family in LLAMA_CPP_FAMILIES:
        problems += llama_cpp_reading(schema)[1]
    if plan.family == "openai" and plan.strict:
        problems += openai_strict_problems(schema)
    elif plan.family == "anthropic":
        problems += anthropic_problems(schema, strict=plan.strict)
    elif plan.family == "gemini":
        problems += gemini_problems(schema)
    if plan.family != "other" or plan.strict:
        problems += [f"$ref {r} does not resolve inside the provider schema" for r in _refs_resolve(schema)]
    return problems


def undeclared_keys(schema: Any, instance: Any) -> Counter[str]:
    """The keys of ``instance`` (counted once per place they occur) that no part of the caller's
    schema applying at their place declares (``properties``, ``required`` or a matching
    ``patternProperties``).

    Over-approximated: every branch of an ``anyOf``/``oneOf``/``if``/``dependentSchemas`` counts
    as applying, and a ``$dynamicRef`` as reaching every node with its anchor. A key that no
    part applying at its place declares may be left out by an object strict mode closed."""
    import re

    from vance_cli.schema.refs import prepare_schema

    prepared = prepare_schema(schema)
    anchors: dict[str, list[Any]] = {}
    todo = [prepared.body, *prepared.defs.values()]
    while todo:
        n = todo.pop()
        if isinstance(n, dict):
            if isinstance(n.get("$dynamicAnchor"), str):
                anchors.setdefault(n["$dynamicAnchor"], []).append(n)
            todo.extend(v for k, v in n.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(n, list):
            todo.extend(n)

    def expand(nodes: list[Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        seen: set[int] = set()
        stack = list(nodes)
        while stack:
            n = stack.pop()
            if not isinstance(n, dict) or id(n) in seen:
                continue
            seen.add(id(n))
            out.append(n)
            if isinstance(n.get("$ref"), str):
                stack.append(prepared.target(n["$ref"]))
            if isinstance(n.get("$dynamicRef"), str):
                stack.extend(anchors.get(n["$dynamicRef"].rsplit("#", 1)[-1], []))
            for key in ("allOf", "anyOf", "oneOf"):
                if isinstance(n.get(key), list):
                    stack.extend(n[key])
            stack.extend(n.get(key) for key in ("if", "then", "else"))
            if isinstance(n.get("dependentSchemas"), dict):
                stack.extend(n["dependentSchemas"].values())
        return out

    names: Counter[str] = Counter()
    work: list[tuple[Any, list[Any], int]] = [(instance, [prepared.body], 0)]
    while work:
        value, nodes, depth = work.pop()
        if depth > 32:
            continue
        here = expand(nodes)
        if isinstance(value, dict):
            for key, item in value.items():
                subs: list[Any] = []
                declared = False
                for n in here:
                    props = n.get("properties") if isinstance(n.get("properties"), dict) else {}
                    patterns = n.get("patternProperties") if isinstance(n.get("patternProperties"), dict) else {}
                    matched = [sub for p, sub in patterns.items() if _search(re, p, key)]
                    required = n.get("required") if isinstance(n.get("required"), list) else []
                    declared = declared or bool(key in props or matched or key in required)
                    subs += ([props[key]] if key in props else []) + matched
                    if key not in props and not matched and isinstance(n.get("additionalProperties"), dict):
                        subs.append(n["additionalProperties"])
                if not declared:
                    names[key] += 1
                work.append((item, subs, depth + 1))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                subs = []
                for n in here:
                    prefix = n.get("prefixItems") if isinstance(n.get("prefixItems"), list) else []
                    subs += [prefix[i]] if i < len(prefix) else []
                    subs += [n[k] for k in ("items", "contains") if isinstance(n.get(k), dict)]
                work.append((item, subs, depth + 1))
    return names


def _search(re: Any, pattern: str, key: str) -> bool:
    try:
        return re.search(pattern, key) is not None
    except re.error:
        return False


def closed_line(plan: Any) -> bool:
    return any("additionalProperties set to false" in line for line in plan.downgrades)


def way_back(reply: Any, plan: Any, schema: Any, allow_need: bool) -> Any:
    from vance_cli.llm.output.json_call import _unwrap
    from vance_cli.llm.output.plan import strip_injected_nulls

    data, need = _unwrap(reply, envelope=plan.envelope, allow_need=allow_need, schema=schema)
    assert need is None
    if plan.nulls_injected:
        data = strip_injected_nulls(data, schema)
    return data


class _Unusable(Exception):
    pass


def run_case(case: Case, caps: Capabilities, problems: Problems, *, allow_need: bool = False) -> None:
    from vance_cli.errors import InvalidSchema
    from vance_cli.llm.output.plan import build_plan
    from vance_cli.schema.check import check_schema
    from vance_cli.schema.reasons import make_validator

    schema = case.schema
    if not isinstance(schema, dict):
        schema = {"allOf": [schema]}  # check_schema takes objects; a boolean root means the same
    before = copy.deepcopy(schema)
    where = case.where
    try:
        check_schema(schema)
    except InvalidSchema:
        return  # refused before any call, with the documented error (remote refs)
    except Exception as exc:  # noqa: BLE001
        problems.add("crash", f"{where}: check_schema: {type(exc).__name__}: {exc}")
        return
    try:
        caller = make_validator(schema)
        plan = build_plan(schema, caps, allow_need=allow_need, name="suite")
    except Exception as exc:  # noqa: BLE001
        problems.add("crash", f"{where}: build_plan: {type(exc).__name__}: {exc}")
        return
    problems.plans += 1
    if caps.strict_json_schema and not plan.strict:
        problems.strict_off += 1
    for line in rule_problems(plan, caps):
        problems.add("rules", f"{where}: {line}")
    llama = caps.family in LLAMA_CPP_FAMILIES
    try:
        provider = Draft202012Validator(llama_cpp_reading(plan.schema)[0] if llama else plan.schema)
    except Exception as exc:  # noqa: BLE001
        problems.add("rules", f"{where}: provider schema unusable: {exc}")
        return
    def provider_ok(value: Any) -> bool:
        try:
            return provider.is_valid(value)
        except Exception as exc:  # noqa: BLE001 - a provider schema whose refs do not resolve
            raise _Unusable(f"{type(exc).__name__}: {str(exc)[:160]}") from None

    for desc, instance, _valid in case.with_probes():
        try:
            valid = caller.is_valid(instance)  # the project's validator (it asserts formats)
        except Exception:  # noqa: BLE001
            continue
        label = f"{where} / {desc}"
        if valid:
            problems.valid += 1
        else:
            problems.invalid += 1
        try:
            if valid:
                wrapped = {"result": instance, **({"_need": None} if allow_need else {})} if plan.envelope else instance
                if provider_ok(wrapped):
                    reply, dropped = wrapped, []  # a provider sends the answer as it is where it can
                elif llama:
                    problems.add("forbidden", f"{label}: {json.dumps(wrapped)[:200]} fails the grammar llama.cpp makes of the provider schema")
                    continue
                else:
                    undeclared = undeclared_keys(schema, instance)
                    reply, dropped = provider_reply(instance, plan.schema, envelope=plan.envelope, undeclared=undeclared)
                if dropped:
                    if Counter(dropped) - undeclared or not closed_line(plan):
                        problems.add("forbidden", f"{label}: keys {dropped} not declared by the provider schema")
                        continue
                    # Keys no part of the caller's schema declares, left out by an object strict
                    # mode closed (documented, and said by the plan's downgrade line).
                    problems.undeclared += 1
                    continue
                if not provider_ok(reply):
                    problems.add("forbidden", f"{label}: {json.dumps(reply)[:200]} fails the provider schema")
                    continue
                back = way_back(reply, plan, schema, allow_need)
                if not caller.is_valid(back):
                    problems.add("mangled", f"{label}: comes back as {json.dumps(back)[:200]}")
                elif json.dumps(back, sort_keys=True) != json.dumps(instance, sort_keys=True):
                    # Valid, but not the answer sent: the documented null rule (an absent optional
                    # field whose schema allows null comes back as null); counted, listed with -v.
                    problems.inexact += 1
                    problems.inexact_lines.append(f"{label}: {json.dumps(instance)[:120]} -> {json.dumps(back)[:120]}")
            else:
                reply = {"result": instance, **({"_need": None} if allow_need else {})} if plan.envelope else instance
                back = way_back(reply, plan, schema, allow_need)
                if caller.is_valid(back):
                    problems.add("lost", f"{label}: accepted as {json.dumps(back)[:200]}")
        except _Unusable as exc:
            problems.add("rules", f"{where}: the provider schema cannot be used to validate: {exc}")
            break
        except Exception as exc:  # noqa: BLE001
            problems.add("crash", f"{label}: way back: {type(exc).__name__}: {exc}")
    if schema != before:
        problems.add("modified", f"{where}: the caller's schema was changed")


def run_all(families: dict[str, Capabilities] = FAMILIES, allow_need: bool = False) -> dict[str, Problems]:
    out = {name: Problems() for name in families}
    every = [case for path in suite_files() for case in cases(path)] + EXTRA_CASES
    for case in every:
        for name, caps in families.items():
            run_case(case, caps, out[name], allow_need=allow_need)
    return out


if __name__ == "__main__":  # python -m tests.structure.suite_driver [--need] [-v]
    import sys
    import time

    start = time.perf_counter()
    results = run_all(allow_need="--need" in sys.argv)
    took = time.perf_counter() - start
    head = f"{'family':18} {'plans':>6} {'valid':>6} {'invalid':>7} {'strict-off':>10} {'undeclared':>10} {'inexact':>7} "
    print(head + " ".join(f"{k:>9}" for k in CLASSES))
    for name, p in results.items():
        print(
            f"{name:18} {p.plans:6} {p.valid:6} {p.invalid:7} {p.strict_off:10} {p.undeclared:10} {p.inexact:7} "
            + " ".join(f"{n:9}" for n in p.counts().values())
        )
    print(f"{took:.1f} s")
    if "-v" in sys.argv:
        for name, p in results.items():
            for kind, lines in p.found.items():
                for line in lines:
                    print(f"[{name}] {kind}: {line}")
            for line in p.inexact_lines:
                print(f"[{name}] inexact: {line}")
