"""Issue 17 re-review, finding 10 (LOW): litellm reads more than the API key from the environment.

For a base the person configured that is not the provider's own host, `watsonx/` sent WATSONX_TOKEN
as `Authorization: Bearer` and `openai/` sent OPENAI_ORGANIZATION as a header. The API key already
had its placeholder; now the whole call runs with the credential variables of the environment
hidden from litellm (llm/litellm_model.py: a context variable scopes it to that call and the threads
litellm starts for it; the rest of Vance sees the environment unchanged).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers import run_cli

SECRET = "SECRET-0123456789abcdef"
REPLY = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
         "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                      "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "respond",
                                      "arguments": json.dumps({"message": "hi", "awaiting_user_input": True})}}]}}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@pytest.fixture
def logging_server():
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(dict(self.headers.items()))
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(dict(self.headers.items()))
            data = json.dumps(REPLY).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()


@pytest.mark.parametrize("model,env", [
    ("watsonx/m", {"WATSONX_TOKEN": SECRET, "WATSONX_PROJECT_ID": "p"}),
    ("openai/m", {"OPENAI_API_KEY": "sk-x", "OPENAI_ORGANIZATION": "org-" + SECRET}),
    # the third review (17d): names the OpenAI SDK reads itself (litellm passes organization=None)
    ("openai/m", {"OPENAI_ORG_ID": "org-" + SECRET}),  # sent as OpenAI-Organization
    ("openai/m", {"OPENAI_PROJECT_ID": "proj_" + SECRET}),  # sent as OpenAI-Project
])
def test_no_environment_credential_reaches_a_foreign_base(logging_server, monkeypatch, model, env):
    # the reviewer's repro (test_r3_other_env_credentials.py)
    url, seen = logging_server
    for k, v in env.items():
        monkeypatch.setenv(k, v)  # the person's environment (litellm reads os.environ)
    run_cli("chat", "-p", "hello", env={"VANCE_MODEL": model, "VANCE_API_BASE": url + "/v1", "VANCE_TRANSPORT": "litellm"})
    assert seen, "no request reached the server"
    assert SECRET not in json.dumps(seen), [h for h in seen if SECRET in json.dumps(h)]


def test_the_call_scope_hides_credentials_from_that_call_only(monkeypatch):
    from vance_cli.llm.litellm_model import credential_scope

    monkeypatch.setenv("WATSONX_TOKEN", SECRET)
    monkeypatch.setenv("WATSONX_PROJECT_ID", "p")  # an identifier the call may need: not hidden

    async def main():
        seen = {}
        outside = asyncio.Event()

        async def call():
            with credential_scope("watsonx/m", "http://127.0.0.1:9/v1"):
                seen["get"] = os.environ.get("WATSONX_TOKEN")
                seen["in"] = "WATSONX_TOKEN" in os.environ
                seen["copy"] = "WATSONX_TOKEN" in os.environ.copy()
                seen["project"] = os.getenv("WATSONX_PROJECT_ID")
                # litellm runs the request's set-up in a thread with the copied context
                ctx = contextvars.copy_context()
                seen["thread"] = await asyncio.get_running_loop().run_in_executor(None, ctx.run, os.getenv, "WATSONX_TOKEN")
                await outside.wait()  # another task runs while this call is in flight

        async def other():
            seen["other"] = os.environ.get("WATSONX_TOKEN")
            outside.set()

        await asyncio.gather(call(), other())
        return seen

    seen = asyncio.run(main())
    assert seen == {"get": None, "in": False, "copy": False, "project": "p", "thread": None, "other": SECRET}
    assert os.environ["WATSONX_TOKEN"] == SECRET  # after the call
    with credential_scope("openai/m", "https://api.openai.com/v1"):  # the provider's own host
        assert os.environ.get("WATSONX_TOKEN") == SECRET
