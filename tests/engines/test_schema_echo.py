"""A model that echoes Vance's schema-mode correction never has the echo delivered (issue 18 review).

The correction must not write a call object out (an echo of it would be recovered as a call), and
recovery of calls written as text must skip an echo of any correction, whatever it quotes.
"""
import json

from tests.engines.harness import run_engine
from vance_cli.engines.ford_schema import SCHEMA_CORRECTION
from vance_cli.engines.ford_text import recover_calls
from vance_cli.llm.capabilities import LOCAL_FAMILIES


def _ws(tmp_path):
    (tmp_path / "ws").mkdir(exist_ok=True)


def test_the_schema_correction_writes_no_call_that_could_be_recovered():
    text = SCHEMA_CORRECTION.format(names="respond, file_read, file_list")
    assert recover_calls(text, {"respond": object(), "file_read": object(), "file_list": object()}) is None


def test_an_echo_of_the_schema_correction_is_not_delivered(tmp_path):
    _ws(tmp_path)
    echo = SCHEMA_CORRECTION.format(names="respond, file_read, file_list")
    run = run_engine(tmp_path, ["Hello! I'm Arthur.", echo, echo, echo, echo], capabilities=LOCAL_FAMILIES["llama-server"])
    assert run.messages == ["Hello! I'm Arthur."]


def test_an_echo_that_quotes_a_call_is_not_recovered_as_one(tmp_path):
    """An echo of a correction that quotes a call object (as an earlier correction text did) is
    still an echo: nothing in it runs or is delivered."""
    _ws(tmp_path)
    quoted = json.dumps({"tool": "respond", "arguments": {"message": "<your reply>"}})
    echo = (
        "VALIDATION CHECK: your previous response was not one tool call. Reply with exactly one JSON "
        f"object and nothing else; to answer the user, use {quoted}."
    )
    run = run_engine(tmp_path, ["Hello! I'm Arthur.", echo, echo, echo, echo], capabilities=LOCAL_FAMILIES["llama-server"])
    assert "<your reply>" not in run.messages
    assert run.messages == ["Hello! I'm Arthur."]
