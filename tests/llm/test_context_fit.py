"""A request is counted against the model's context window before it is sent (llm/context.py)."""

from __future__ import annotations

import json
import time

from tests.helpers import json_lines, run_cli
from vance_cli.llm.base import ChatRequest, ToolSpec
from vance_cli.messages import Message
from vance_cli.llm.context import CHARS_PER_TOKEN, estimate_tokens, fit
from vance_cli.llm.profile import build_profile


def respond(message):
    return {"tool_calls": [{"name": "respond", "arguments": {"message": message, "awaiting_user_input": True}}]}


def test_the_estimate_counts_messages_and_tool_schemas():
    small = ChatRequest(messages=[Message(role="user", content="hi")])
    big = ChatRequest(messages=[Message(role="user", content="x" * 3000)])
    tools = ChatRequest(
        messages=[Message(role="user", content="hi")],
        tools=[ToolSpec(name="t", description="d" * 300, parameters={"type": "object"})],
    )
    assert estimate_tokens(big) - estimate_tokens(small) >= (3000 - 2) // CHARS_PER_TOKEN
    assert estimate_tokens(tools) >= estimate_tokens(small) + 100


def test_fit_keeps_room_for_the_reply_and_an_unknown_window_is_not_checked():
    request = ChatRequest(messages=[Message(role="user", content="x" * 3000)])  # ~1,000 tokens
    assert fit(request, 4000, 1000).fits
    assert not fit(request, 1500, 1000).fits  # 750 for the prompt: the reply takes at most half
    assert fit(request, None, 1000).fits


def test_the_profile_takes_the_window_from_config_else_the_model_map():
    assert build_profile("openai/local-x", api_base="http://127.0.0.1:1/v1", context_window=8192).context_window == 8192
    assert build_profile("openai/local-x", api_base="http://127.0.0.1:1/v1").context_window is None
    assert (build_profile("gpt-4o-mini").context_window or 0) > 100_000  # litellm's max_input_tokens


def _script(tmp_path, replies, window):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"replies": replies, "context_window": window}))
    return f"scripted:{path}"


def _first_turn(tmp_path, vance_home, then):
    """One turn that fits; then the script (read afresh by each command) holds the replies ``then``."""
    model = _script(tmp_path, [respond("first")], 4000)
    r = run_cli("chat", "-p", "one", "--json", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    pid = json_lines(r.stdout)[0]["process_id"]
    [path] = list(vance_home.rglob(f"{pid}.json"))
    _script(tmp_path, then, 4000)
    return model, pid, path


def test_a_resumed_10000_message_chat_is_compacted_answers_and_shows_the_summary(tmp_path, vance_home):
    model, pid, path = _first_turn(
        tmp_path, vance_home, ["SUMMARY: the person asked 5000 questions about notes.md", respond("answer within")]
    )
    data = json.loads(path.read_text())
    for i in range(5000):
        data["history"].append({"role": "user", "content": f"question {i}: what is in notes.md?"})
        data["history"].append({"role": "assistant", "content": f"answer {i}", "meta": {"delivered": True}})
    data["updated"] = time.time()
    path.write_text(json.dumps(data))
    r = run_cli("chat", "-p", "two", "--resume", pid, env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "answer within\n"
    r = run_cli("show", pid)
    assert "[summary of the earlier conversation, sent instead of it] SUMMARY: the person asked 5000" in r.stdout
    assert "you: question 0: what is in notes.md?" in r.stdout  # the file keeps the whole history


def test_a_request_that_still_cannot_fit_is_an_error_before_any_call(tmp_path, vance_home):
    # The script has an answer ready: had the request been sent, the turn would have printed it.
    model, pid, _ = _first_turn(tmp_path, vance_home, [respond("never sent")])
    r = run_cli("chat", "-p", "x" * 30_000, "--resume", pid, env={"VANCE_MODEL": model})
    assert r.returncode == 1
    assert "does not fit its context window" in r.stderr and "nothing was sent" in r.stderr
    assert "/compact" in r.stderr
    assert "never sent" not in r.stdout and "Traceback" not in r.stderr
