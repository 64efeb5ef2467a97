"""The model-request switch: with VANCE_ALLOW_MODEL_REQUESTS=0 only loopback endpoints are reachable."""

from __future__ import annotations

import pytest

from vance_cli.errors import ModelRequestsForbidden
from vance_cli.llm.guard import (
    check_request_allowed,
    is_loopback,
    model_requests_allowed,
)


@pytest.mark.parametrize("base", [
    "http://127.0.0.1:8000/v1", "http://127.9.9.9/v1", "http://localhost:11434", "http://[::1]:80/v1",
    "https://LOCALHOST/v1", "localhost:1234",
])
def test_loopback_endpoints_are_allowed_while_forbidden(base):
    assert not model_requests_allowed()
    assert is_loopback(base)
    check_request_allowed("openai/x", base)  # no exception


@pytest.mark.parametrize("base", [None, "", "https://api.openai.com/v1", "http://10.0.0.5:8000/v1",
                                  "http://0.0.0.0:8000", "http://localhost.evil.com/v1"])
def test_non_loopback_endpoints_are_refused_while_forbidden(base):
    with pytest.raises(ModelRequestsForbidden) as info:
        check_request_allowed("openai/gpt-4o", base)
    assert "VANCE_ALLOW_MODEL_REQUESTS=0" in info.value.message
    assert "scripted" in info.value.hint


def test_anything_is_allowed_when_switch_is_not_zero(monkeypatch):
    monkeypatch.setenv("VANCE_ALLOW_MODEL_REQUESTS", "1")
    assert model_requests_allowed()
    check_request_allowed("openai/gpt-4o", "https://api.openai.com/v1")
    monkeypatch.delenv("VANCE_ALLOW_MODEL_REQUESTS")
    assert model_requests_allowed()
