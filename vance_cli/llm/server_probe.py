"""Which local server answers at an api_base: llama.cpp's llama-server, llama-cpp-python's, or neither.

One GET of ``{api_base}/models`` (both servers serve it), and ``/props`` only when llama-server's
reply does not carry its context size: llama-server lists its models ``owned_by: "llamacpp"`` with
``meta.n_ctx`` (the context the server runs with); llama-cpp-python lists them ``owned_by: "me"``
with ``permissions`` (its own tests fix that shape). Replies recorded from a real server are in
tests/llm/data/.

Cheap on purpose: only for an api_base on this machine or the local network (``worth_probing``),
with a short timeout, once per process per api_base (``probe_server`` caches), and only when a
model is about to be called (the transports ask on their first use, llm/wire.py), never by a
command that calls no model. Anything unexpected (refused, slow, not JSON) reads as "not
recognised": the provider table's answer stands.
"""

from __future__ import annotations

import ipaddress
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from vance_cli.llm.guard import is_loopback

PROBE_TIMEOUT = 2.0  # seconds per GET; a local server answers these in milliseconds


@dataclass(frozen=True)
class ServerInfo:
    family: str | None  # "llama-server" | "llama-cpp-python" | None (not recognised)
    context_window: int | None = None  # tokens of context the server runs with, when it says
    source: str = ""  # where that came from, for `vance doctor` and the journal


NOT_RECOGNISED = ServerInfo(None)
_cache: dict[str, ServerInfo] = {}
_lock = threading.Lock()


def worth_probing(api_base: str | None) -> bool:
    """An api_base on this machine or the local network (a hosted API is never probed)."""
    if not api_base or is_loopback(api_base):
        return bool(api_base)
    try:
        host = urlsplit(api_base).hostname or ""
    except ValueError:
        return False
    try:
        return ipaddress.ip_address(host).is_private
    except ValueError:
        return bool(host) and "." not in host  # a single-label name: a box on the local network


def _get(client: Any, url: str) -> Any:
    try:
        response = client.get(url)
        return response.json() if response.status_code == 200 else None
    except Exception:  # noqa: BLE001 - refused, timed out, not JSON: not recognised
        return None


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def read_server(models: Any, props: Any = None) -> ServerInfo:
    """The server a ``/v1/models`` reply (and a ``/props`` reply, if any) comes from."""
    data = models.get("data") if isinstance(models, dict) else None
    entries = [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []
    if any(m.get("owned_by") == "llamacpp" for m in entries) or (isinstance(props, dict) and "build_info" in props):
        for m in entries:
            n_ctx = _positive_int((m.get("meta") or {}).get("n_ctx")) if isinstance(m.get("meta"), dict) else None
            if n_ctx:
                return ServerInfo("llama-server", n_ctx, "/v1/models meta.n_ctx")
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        n_ctx = _positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
        return ServerInfo("llama-server", n_ctx, "/props n_ctx" if n_ctx else "/v1/models")
    if entries and all(m.get("owned_by") == "me" and "permissions" in m for m in entries):
        return ServerInfo("llama-cpp-python", None, "/v1/models")
    return NOT_RECOGNISED


def probe_server(api_base: str, *, timeout: float = PROBE_TIMEOUT) -> ServerInfo:
    """What answers at ``api_base`` (see the module docstring); cached for the process."""
    with _lock:
        if api_base in _cache:
            return _cache[api_base]
    info = NOT_RECOGNISED
    if worth_probing(api_base):
        from vance_cli.llm.lean_imports import import_httpx

        httpx = import_httpx()
        base = api_base.rstrip("/")
        parts = urlsplit(base)
        root = urlunsplit(parts._replace(path=parts.path.removesuffix("/v1")))
        try:
            with httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 1.0)), verify=False) as client:
                models = _get(client, base + "/models")
                info = read_server(models)
                if info.family == "llama-server" and info.context_window is None:
                    info = read_server(models, _get(client, root + "/props"))
        except Exception:  # noqa: BLE001 - never let a probe fail a call
            info = NOT_RECOGNISED
    with _lock:
        _cache[api_base] = info
    return info


def forget() -> None:
    """Drop the cache (tests)."""
    with _lock:
        _cache.clear()
