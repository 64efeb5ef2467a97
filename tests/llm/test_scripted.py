"""Scripted and function models: queued replies, recorded requests, script files."""

from __future__ import annotations

import json

import pytest

from vance_cli.errors import ConfigError, ModelError
from vance_cli.llm.base import Capabilities, ChatRequest, Completion
from vance_cli.llm.scripted import FunctionModel, ScriptedModel, load_script
from vance_cli.messages import Message, ToolCall, Usage


def req(text="hi"):
    return ChatRequest(messages=[Message(role="user", content=text)])


async def test_replies_are_answered_in_order_in_every_form():
    model = ScriptedModel([
        "plain text",
        {"tool_calls": [{"name": "respond", "arguments": {"message": "m"}}]},
        Completion(text="done", usage=Usage(prompt_tokens=2)),
        lambda request: f"saw {request.messages[-1].content}",
    ])
    first = await model.complete(req())
    assert (first.text, first.tool_calls, first.finish_reason) == ("plain text", [], "stop")
    second = await model.complete(req())
    assert second.tool_calls == [ToolCall(id="call_1", name="respond", arguments='{"message": "m"}')]
    assert second.finish_reason == "tool_calls" and second.text is None
    third = await model.complete(req())
    assert third.text == "done" and third.usage.prompt_tokens == 2
    assert (await model.complete(req("last"))).text == "saw last"
    assert model.remaining == 0


async def test_every_reply_counts_as_one_call_and_names_the_model():
    model = ScriptedModel(["a", {"text": "b", "usage": {"prompt_tokens": 5, "completion_tokens": 7}}], name="scripted:x")
    a, b = await model.complete(req()), await model.complete(req())
    assert a.usage.calls == 1 and a.model == "scripted:x"
    assert (b.usage.calls, b.usage.prompt_tokens, b.usage.completion_tokens) == (1, 5, 7)


async def test_generated_tool_call_ids_are_deterministic_and_unique_across_calls():
    model = ScriptedModel([
        {"tool_calls": [{"name": "a"}, {"name": "b", "id": "mine"}, {"name": "c"}]},
        {"tool_calls": [{"name": "d"}]},
    ])
    first, second = await model.complete(req()), await model.complete(req())
    assert [c.id for c in first.tool_calls] == ["call_1", "mine", "call_2"]
    assert [c.id for c in second.tool_calls] == ["call_3"]


async def test_raw_string_arguments_are_kept_verbatim_for_malformed_call_tests():
    model = ScriptedModel([{"tool_calls": [{"name": "respond", "arguments": '{"message": '}]}])
    call = (await model.complete(req())).tool_calls[0]
    assert call.arguments == '{"message": '
    with pytest.raises(ValueError):
        call.parsed_arguments()


async def test_requests_are_recorded_as_deep_copies():
    model = ScriptedModel(["a", "b"])
    request = req("first")
    await model.complete(request)
    request.messages.append(Message(role="assistant", content="mutated later"))
    await model.complete(request)
    assert [len(r.messages) for r in model.requests] == [1, 2]
    assert model.requests[0].messages[0].content == "first"
    assert model.calls == 2


async def test_running_out_of_replies_is_a_clear_model_error():
    model = ScriptedModel(["only one"])
    await model.complete(req())
    with pytest.raises(ModelError, match="ran out of replies after 1 calls"):
        await model.complete(req())
    assert len(model.requests) == 2


async def test_reused_completion_objects_are_not_shared_between_calls():
    shared = Completion(text="x")
    model = ScriptedModel([shared, shared])
    first = await model.complete(req())
    first.text = "changed"
    assert (await model.complete(req())).text == "x"


async def test_enqueue_adds_replies():
    model = ScriptedModel()
    model.enqueue("a", "b")
    assert [(await model.complete(req())).text for _ in range(2)] == ["a", "b"]


async def test_bad_reply_dict_is_a_model_error_naming_the_key():
    model = ScriptedModel([{"txt": "typo"}])
    with pytest.raises(ModelError, match="txt"):
        await model.complete(req())


async def test_function_model_accepts_sync_and_async_functions():
    async def async_fn(request):
        return {"tool_calls": [{"name": "respond", "arguments": {"message": request.messages[0].content}}]}

    sync_model = FunctionModel(lambda request: "sync " + request.messages[0].content)
    async_model = FunctionModel(async_fn, capabilities=Capabilities(strict_json_schema=True))
    assert (await sync_model.complete(req("a"))).text == "sync a"
    completion = await async_model.complete(req("b"))
    assert completion.tool_calls[0].parsed_arguments() == {"message": "b"}
    assert completion.tool_calls[0].id == "call_1"
    assert async_model.capabilities.strict_json_schema
    assert len(sync_model.requests) == 1 and async_model.calls == 1


def test_scripted_model_defaults_to_full_capabilities():
    caps = ScriptedModel([]).capabilities
    assert caps.tools and caps.json_schema and caps.parallel_tool_calls


async def test_yaml_script_with_capabilities_loads(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "capabilities:\n  strict_json_schema: true\n  parallel_tool_calls: false\n"
        "replies:\n  - hello\n  - tool_calls:\n      - name: respond\n        arguments: {message: bye}\n"
    )
    script = load_script(path)
    model = ScriptedModel(script)
    assert model.capabilities.strict_json_schema and not model.capabilities.parallel_tool_calls
    assert model.source == str(path)
    assert (await model.complete(req())).text == "hello"
    assert (await model.complete(req())).tool_calls[0].parsed_arguments() == {"message": "bye"}


async def test_json_script_as_plain_list_loads(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(["one", {"text": "two", "finish_reason": "length"}]))
    model = ScriptedModel(load_script(path))
    assert (await model.complete(req())).text == "one"
    assert (await model.complete(req())).finish_reason == "length"
    with pytest.raises(ModelError, match=r"s\.json\) ran out of replies after 2 calls"):
        await model.complete(req())


@pytest.mark.parametrize("name,content,problem", [
    ("missing.yaml", None, "not found"),
    ("bad.yaml", "replies: [unclosed\n", "invalid YAML"),
    ("bad.json", "[1,", "invalid JSON"),
    ("scalar.yaml", "42\n", "expected a list of replies"),
    ("empty.yaml", "replies: []\n", "no replies"),
    ("typo.yaml", "- txt: hi\n", "txt"),
    ("caps.yaml", "replies: [a]\ncapabilities: {tols: true}\n", "unknown capability tols"),
    ("toplevel.yaml", "replies: [a]\nextra: 1\n", "extra"),
])
def test_bad_script_files_raise_config_error_naming_file_and_problem(tmp_path, name, content, problem):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_script(path)
    assert name in info.value.message
    assert problem in info.value.message
    assert info.value.hint
