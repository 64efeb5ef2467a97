"""Issue 18 review HIGH-6 (repro by the reviewer, kept): the context check keeps the full max_tokens free for the reply and refuses the call.

On the eval's own server (llama-server, 8,192 tokens of context, max_tokens 4,096: the model map
does not know the model) every request estimated above 4,096 prompt tokens is refused before it
is sent (llm/context.py reply_room/fit, engines/ford.py _compacted_request). In
/var/tmp/evals/after1-0.5b/results.json 6 of 8 `coding` runs and 2 of 8 Benjy runs ended FAILED,
exit 1, "does not fit its context window: about 4,1xx prompt tokens (estimate), 4,096 allowed".
A 4,200-token prompt and a reply of a few hundred tokens fit an 8,192 window easily.
"""
import asyncio

from tests.engines.harness import call, recipe, respond
from vance_cli.engines import engine_class
from vance_cli.engines.base import EngineDeps
from vance_cli.events import EventBus
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import InboxItem, Process, Status
from vance_cli.tools.base import ToolContext
from vance_cli.tools.registry import builtin_registry


def test_a_prompt_over_half_the_window_is_still_sent_with_the_room_that_is_left(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("word " * 2700)  # 13,500 chars: about 4,500 estimated tokens
    snap = recipe()
    store = ProcessStore(tmp_path / "processes")
    process = Process(engine="ford", recipe=snap, recipe_name="t", workspace=str(ws))
    process.inbox.append(InboxItem(content="what is in notes.md?"))
    store.create(process)
    model = ScriptedModel([{"tool_calls": [call("file_read", {"path": "notes.md"})]}, respond("It repeats 'word'."), respond("It repeats the word 'word' 2,700 times.")],
                          context_window=8192)
    model.max_tokens = 4096  # what OpenAICompatModel has for a model the map does not know
    deps = EngineDeps(model=model, tools=builtin_registry(), bus=EventBus(), persist=store.save,
                      tool_context=ToolContext(workspace=ws, process_id=process.id))
    asyncio.run(engine_class("ford")(deps).run(process))
    assert len(model.requests) >= 2, "the second call was refused before it was sent"
    assert process.status == Status.BLOCKED and process.status_reason == "awaiting user input"
    sent = model.requests[1].max_tokens
    assert sent is not None and sent <= 8192 - 4500, sent  # the room that is left, not a refusal


def test_a_prompt_that_leaves_less_than_the_floor_is_still_refused_before_the_call(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("word " * 4700)  # about 7,800 estimated tokens of an 8,192 window
    store = ProcessStore(tmp_path / "processes")
    process = Process(engine="ford", recipe=recipe(), recipe_name="t", workspace=str(ws))
    process.inbox.append(InboxItem(content="what is in notes.md?"))
    store.create(process)
    model = ScriptedModel([{"tool_calls": [call("file_read", {"path": "notes.md"})]}, respond("x")], context_window=8192)
    model.max_tokens = 4096
    deps = EngineDeps(model=model, tools=builtin_registry(), bus=EventBus(), persist=store.save,
                      tool_context=ToolContext(workspace=ws, process_id=process.id))
    import pytest

    from vance_cli.llm.context import ContextOverflow

    with pytest.raises(ContextOverflow) as info:
        asyncio.run(engine_class("ford")(deps).run(process))
    assert len(model.requests) == 1 and "nothing was sent" in info.value.message
