"""Issue 17 third review (17d, finding 1): the OpenAI SDK reads OPENAI_ORG_ID / OPENAI_PROJECT_ID
itself; with a foreign api_base neither may reach it (llm/endpoints.CREDENTIAL_NAME). The scope's
limits (os.environb, a child process) are documented in litellm_model._CallScopedEnviron."""
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



@pytest.mark.parametrize("env", [
    {"OPENAI_ORG_ID": "org-" + SECRET},          # the OpenAI SDK's own name (litellm's is OPENAI_ORGANIZATION)
    {"OPENAI_PROJECT_ID": "proj_" + SECRET},     # sent as OpenAI-Project
])
def test_d10_openai_sdk_env_names_reach_a_foreign_base(logging_server, monkeypatch, env):
    url, seen = logging_server
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    run_cli("chat", "-p", "hello", env={"VANCE_MODEL": "openai/m", "VANCE_API_BASE": url + "/v1", "VANCE_TRANSPORT": "litellm"})
    assert seen, "no request reached the server"
    assert SECRET not in json.dumps(seen), [h for h in seen if SECRET in json.dumps(h)]
