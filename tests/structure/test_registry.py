"""The schema registry: project → user ("tenant") → bundled, override tables, origins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vance_cli.config.scopes import Scopes
from vance_cli.errors import UsageError
from vance_cli.structure.errors import InvalidSchema, SchemaNotFound
from vance_cli.structure.registry import SchemaRegistry

SIMPLE = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def write_schema(folder: Path, name: str, schema: dict, manual: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(schema))
    if manual is not None:
        (folder / f"{name}.manual.md").write_text(manual)


@pytest.fixture
def project(tmp_path):
    # conftest puts cwd at tmp/work; the project scope is tmp/work/.vance, its id "work"
    folder = Path.cwd() / ".vance"
    folder.mkdir()
    return folder


def registry() -> SchemaRegistry:
    return SchemaRegistry(Scopes.discover())


def test_bundled_schemas_are_found_with_their_manual():
    found = registry().get("user-action-record")
    assert found.schema_origin == "registry:bundled"
    assert found.schema["required"] == ["userId", "action", "timestamp", "status"]
    assert found.manual.startswith("# user-action-record")
    assert "`timestamp` is the time the action happened" in found.manual
    assert found.version == "1.0"


def test_bundled_set_has_the_spec_schemas_and_extras():
    names = registry().names()
    assert {"user-action-record", "insight-record", "contact", "meeting-note", "bug-report"} <= set(names)
    assert not any(n.startswith("_") for n in names)  # _meta-schema is internal
    for name in names:
        assert registry().get(name).manual, f"{name} has no manual"


def test_underscore_names_are_never_looked_up():
    assert registry().find("_meta-schema") is None


def test_user_file_shadows_bundled_and_project_shadows_user(vance_home, project):
    write_schema(vance_home / "schemas", "user-action-record", SIMPLE, "user manual")
    found = registry().get("user-action-record")
    assert found.schema_origin == "registry:tenant:local" and found.manual == "user manual"
    write_schema(project / "schemas", "user-action-record", {**SIMPLE, "title": "p"})
    found = registry().get("user-action-record")
    assert found.schema_origin == "registry:project:work"
    assert found.manual is None  # manuals do not leak across scopes
    listing = [e for e in registry().list_available() if e.schema.name == "user-action-record"]
    assert [(e.schema.schema_origin, e.shadowed_by) for e in listing] == [
        ("registry:project:work", None),
        ("registry:tenant:local", "registry:project:work"),
        ("registry:bundled", "registry:project:work"),
    ]


def test_override_table_beats_the_file_of_the_same_scope(vance_home):
    write_schema(vance_home / "schemas", "thing", SIMPLE)
    reg = registry()
    added = reg.add("thing", {**SIMPLE, "title": "override"}, manual="m", scope="user")
    assert added.kind == "override" and added.version == "1.0"
    found = reg.get("thing")
    assert found.kind == "override" and found.schema["title"] == "override" and found.manual == "m"
    assert (vance_home / "data" / "structure.json").is_file()


def test_add_again_bumps_the_minor_version_and_rm_restores_the_cascade(vance_home):
    reg = registry()
    assert reg.add("contact", SIMPLE, scope="user").version == "1.0"
    assert reg.add("contact", SIMPLE, scope="user").version == "1.1"
    assert reg.get("contact").schema_origin == "registry:tenant:local"
    removed = reg.remove("contact")
    assert removed.version == "1.1"
    assert reg.get("contact").schema_origin == "registry:bundled"


def test_add_defaults_to_the_project_scope_when_there_is_one(project):
    added = registry().add("note", SIMPLE)
    assert added.schema_origin == "registry:project:work"
    assert (project / "data" / "structure.json").is_file()


def test_add_to_project_without_a_project_is_a_usage_error():
    with pytest.raises(UsageError, match="no project scope"):
        registry().add("x", SIMPLE, scope="project")


def test_add_rejects_invalid_schemas_and_names():
    with pytest.raises(InvalidSchema):
        registry().add("x", {"type": "strin"}, scope="user")
    with pytest.raises(UsageError):
        registry().add("_hidden", SIMPLE, scope="user")
    with pytest.raises(UsageError):
        registry().add("../escape", SIMPLE, scope="user")


def test_rm_of_a_bundled_or_file_schema_says_what_to_do(vance_home):
    with pytest.raises(SchemaNotFound) as exc:
        registry().remove("user-action-record")
    assert "bundled schemas cannot be removed" in exc.value.hint
    write_schema(vance_home / "schemas", "mine", SIMPLE)
    with pytest.raises(SchemaNotFound) as exc:
        registry().remove("mine")
    assert "mine.json" in exc.value.hint


def test_unknown_name_lists_the_available_names():
    with pytest.raises(SchemaNotFound) as exc:
        registry().get("nope")
    assert "unknown schema 'nope'" in exc.value.message
    assert "user-action-record" in exc.value.message and "insight-record" in exc.value.message


def test_broken_schema_file_is_a_clear_error(vance_home):
    (vance_home / "schemas").mkdir()
    (vance_home / "schemas" / "bad.json").write_text("{not json")
    with pytest.raises(InvalidSchema, match="bad.json is not valid JSON"):
        registry().get("bad")
    (vance_home / "schemas" / "bad.json").write_text('{"type": 5}')
    with pytest.raises(InvalidSchema, match="not a valid JSON Schema"):
        registry().get("bad")


def test_tenant_id_is_configurable(vance_home):
    write_schema(vance_home / "schemas", "t", SIMPLE)
    reg = SchemaRegistry(Scopes.discover(), tenant_id="acme")
    assert reg.get("t").schema_origin == "registry:tenant:acme"


def test_lookup_never_creates_files(vance_home, project):
    registry().find("user-action-record")
    registry().list_available()
    assert not (vance_home / "data").exists() and not (project / "data").exists()


def test_a_broken_file_is_skipped_by_listing_and_inference_but_raises_when_named(vance_home):
    folder = vance_home / "schemas"
    write_schema(folder, "good", SIMPLE)
    (folder / "broken.json").write_text("{oops")
    reg = registry()
    entries, broken = reg.scan()
    assert "good" in {e.schema.name for e in entries} and "broken" not in {e.schema.name for e in entries}
    assert [(b.name, b.scope, b.source) for b in broken] == [("broken", "user", str(folder / "broken.json"))]
    assert "is not valid JSON" in broken[0].problem
    assert "good" in reg.names() and "broken" not in reg.names()
    assert "broken" in reg.known_names()  # inference still routes the name to its clear error
    assert reg.get("good").schema == SIMPLE and reg.get("user-action-record").scope == "bundled"
    with pytest.raises(InvalidSchema, match="broken.json is not valid JSON"):
        reg.get("broken")
    with pytest.raises(SchemaNotFound) as exc:
        reg.get("nope")
    assert "good" in exc.value.message and "broken" not in exc.value.message


def test_a_broken_file_shadowing_a_bundled_name_still_shadows_it(vance_home):
    folder = vance_home / "schemas"
    folder.mkdir()
    (folder / "contact.json").write_text('{"type": 5}')
    reg = registry()
    contact = [e for e in reg.list_available() if e.schema.name == "contact"]
    assert [(e.schema.scope, e.shadowed_by) for e in contact] == [("bundled", "registry:tenant:local (broken)")]
    with pytest.raises(InvalidSchema, match="contact.json is not a valid JSON Schema"):
        reg.get("contact")  # never silently the bundled one


def test_broken_override_rows_and_unreadable_manuals_are_skipped_too(vance_home):
    from tinydb import TinyDB

    from vance_cli.structure.db import AtomicJSONStorage

    (vance_home / "data").mkdir()
    with TinyDB(vance_home / "data" / "structure.json", storage=AtomicJSONStorage) as db:
        db.table("structure_schemas").insert({"name": "rotten", "scope": "user", "schema": {"type": 5}, "version": "1.0"})
    folder = vance_home / "schemas"
    write_schema(folder, "latin", SIMPLE)
    (folder / "latin.manual.md").write_bytes(b"\xff\xfe caf\xe9")
    entries, broken = registry().scan()
    assert {b.name for b in broken} == {"rotten", "latin"}
    assert not {"rotten", "latin"} & {e.schema.name for e in entries}
    with pytest.raises(InvalidSchema, match="cannot read manual file"):
        registry().get("latin")


def test_a_non_utf8_schema_file_is_a_clear_error(vance_home):
    (vance_home / "schemas").mkdir()
    (vance_home / "schemas" / "bin.json").write_bytes(b'{"title": "\xff"}')
    with pytest.raises(InvalidSchema, match="bin.json is not UTF-8 text"):
        registry().get("bin")


def _big_schema(properties: int = 6000) -> dict:
    """A valid schema over LIST_CHECK_BYTES (~300 KB)."""
    return {"type": "object", "description": "big", "properties": {f"field_{i:05d}": {"type": "string", "description": "x" * 30} for i in range(properties)}}


def test_names_come_from_file_names_without_opening_a_schema(vance_home, monkeypatch):
    folder = vance_home / "schemas"
    write_schema(folder, "huge", _big_schema())
    (folder / "broken.json").write_text("{oops")
    import vance_cli.structure.registry as reg_mod

    def no_reading(*a, **kw):
        raise AssertionError("a schema file was read to list names")

    monkeypatch.setattr(reg_mod, "read_schema_file", no_reading)
    names = registry().known_names()
    assert {"huge", "broken", "contact", "user-action-record"} <= set(names)


def test_listing_checks_small_schemas_and_leaves_big_ones_to_their_use(vance_home, monkeypatch):
    from vance_cli.schema import check as errors

    folder = vance_home / "schemas"
    big_invalid = _big_schema()
    big_invalid["properties"]["field_00000"] = {"type": 5}  # passes parsing, fails the meta-schema
    write_schema(folder, "huge", big_invalid)
    write_schema(folder, "small", {"type": 5})
    checked: list[str] = []
    real = errors.check_schema

    def spy(schema, where="the schema"):
        checked.append(where)
        return real(schema, where)

    monkeypatch.setattr("vance_cli.structure.registry.check_schema", spy)
    entries, broken = registry().scan()
    assert "huge" in {e.schema.name for e in entries}  # listed: too big to check while listing
    assert [b.name for b in broken] == ["small"] and "not a valid JSON Schema" in broken[0].problem
    assert not any("huge" in w for w in checked)
    with pytest.raises(InvalidSchema, match=r"huge.json is not a valid JSON Schema"):
        registry().get("huge")  # checked in full when used


def test_an_unknown_name_suggests_the_closest_ones():
    with pytest.raises(SchemaNotFound, match=r"unknown schema 'contcat'; did you mean 'contact'\?"):
        registry().get("contcat")
