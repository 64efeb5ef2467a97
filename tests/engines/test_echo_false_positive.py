"""Issue 18 review (repros by the reviewer, kept): a reply that only mentions a validation check is an answer, not an echo.

`echoes()` calls any reply containing the words "validation check" an echo of a correction, and
_call_model then does not read it as a schema call. On a local llama.cpp server (tool_mode auto =
schema) a person who asks about a validation check can never get an answer: every valid respond
call that mentions the phrase is thrown away, corrected, and the turn ends "the model did not
follow the tool protocol".
"""
import json

from tests.engines.harness import run_engine
from vance_cli.llm.capabilities import LOCAL_FAMILIES


def test_a_schema_reply_that_mentions_a_validation_check_is_delivered(tmp_path):
    (tmp_path / "ws").mkdir(exist_ok=True)
    answer = "The validation check in app.py rejects empty names."
    reply = json.dumps({"tool": "respond", "arguments": {"message": answer}})
    run = run_engine(tmp_path, [reply] * 4, user="Why does my form fail the validation check?",
                     capabilities=LOCAL_FAMILIES["llama-server"])
    assert run.messages == [answer], run.messages


def test_a_native_reply_that_writes_a_call_mentioning_validation_check_is_recovered(tmp_path):
    (tmp_path / "ws").mkdir(exist_ok=True)
    answer = "Your validation check is in forms.py."
    text = "<tool_call>" + json.dumps({"name": "respond", "arguments": {"message": answer}}) + "</tool_call>"
    run = run_engine(tmp_path, [text] * 4, user="Where is the validation check?")
    assert run.messages == [answer], run.messages
