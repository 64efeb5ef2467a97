"""The switch that forbids real provider calls (tests set VANCE_ALLOW_MODEL_REQUESTS=0).

Every implementation that does HTTP calls ``check_request_allowed`` before its first byte goes out.
With the switch off only loopback endpoints (the tests' fake server, a local Ollama) stay reachable,
so no test can reach a real provider, and nothing is billed by accident.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from vance_cli.errors import ModelRequestsForbidden

ENV_SWITCH = "VANCE_ALLOW_MODEL_REQUESTS"


def model_requests_allowed() -> bool:
    """False when VANCE_ALLOW_MODEL_REQUESTS is "0" (read on every call, so tests can flip it)."""
    return os.environ.get(ENV_SWITCH, "1").strip() != "0"


def is_loopback(api_base: str | None) -> bool:
    """True for http(s) URLs whose host is localhost, 127.0.0.0/8 or ::1."""
    if not api_base:
        return False
    try:
        host = urlsplit(api_base if "//" in api_base else "//" + api_base).hostname
    except ValueError:
        return False
    if not host:
        return False
    host = host.rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_request_allowed(model: str, api_base: str | None) -> None:
    """Raise ModelRequestsForbidden when the switch is off and the endpoint is not loopback."""
    if model_requests_allowed() or is_loopback(api_base):
        return
    from vance_cli.text import shown_url

    where = shown_url(api_base) or "the provider's default endpoint"
    raise ModelRequestsForbidden(
        f"model requests are switched off ({ENV_SWITCH}=0): refusing to call {model} at {where}",
        hint=(
            f"use a scripted model (scripted:PATH) or a loopback api_base, or unset {ENV_SWITCH} "
            "to allow real provider calls"
        ),
    )
