"""The quick check never says valid where jsonschema says invalid, and says valid for plain tool calls."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from vance_cli.schema.quick import plainly_valid

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False),
                    st.text(max_size=4))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)), max_leaves=6)
type_names = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null"])


def leaf_schemas():
    return st.fixed_dictionaries({}, optional={
        "type": st.one_of(type_names, st.lists(type_names, min_size=1, max_size=3)),
        "enum": st.lists(scalars, min_size=1, max_size=3),
        "const": scalars,
        "minimum": st.integers(-3, 3), "maximum": st.floats(-3, 3), "exclusiveMinimum": st.integers(-3, 3),
        "minLength": st.integers(0, 3), "maxLength": st.integers(0, 3),
        "minItems": st.integers(0, 2), "maxItems": st.integers(0, 2),
        "description": st.text(max_size=3),
        "pattern": st.just("^a"),  # not handled: must fall back
    })


schemas = st.recursive(leaf_schemas(), lambda inner: st.one_of(
    st.fixed_dictionaries({"type": st.just("object")}, optional={
        "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
        "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
        "additionalProperties": st.booleans(),
    }),
    st.fixed_dictionaries({"type": st.just("array")}, optional={"items": inner}),
), max_leaves=5)


@settings(max_examples=400, deadline=None)
@given(schemas, values)
def test_never_valid_where_jsonschema_says_invalid(schema, value):
    if plainly_valid(schema, value):
        assert Draft202012Validator(schema).is_valid(value), (schema, value)


def test_plain_tool_calls_are_recognised_as_valid():
    from vance_cli.tools.base import builtin_registry

    reg = builtin_registry()
    assert plainly_valid(reg.get("respond").parameters, {"message": "hi", "awaiting_user_input": True})
    assert plainly_valid(reg.get("file_read").parameters, {"path": "a.txt"})
    assert not plainly_valid(reg.get("file_read").parameters, {})
    assert not plainly_valid(reg.get("file_read").parameters, {"path": "a", "encoding": "latin-1"})


def test_a_turn_with_valid_arguments_does_not_import_jsonschema(tmp_path):
    import os
    import subprocess
    import sys

    from tests.cli.helpers import REPO, write_script

    model = write_script(tmp_path / "s.json", [{"tool_calls": [{"name": "respond", "arguments": {"message": "x"}}]}])
    probe = ("import sys\nfrom vance_cli.cli.main import run\ntry:\n    run(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
             "sys.stderr.write('JSONSCHEMA=%s\\n' % ('jsonschema' in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", probe, "chat", "-p", "hi"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO), "VANCE_MODEL": model})
    assert "JSONSCHEMA=False" in r.stderr, r.stderr
