"""The transport retry budget: 5xx, 429, timeouts and connection errors; never model misbehaviour.

Model misbehaviour (no tool call, bad JSON) is the engines' business and costs no sleep; this module
only retries what a second attempt can fix, with capped exponential backoff, and then fails with a
message that says how often it tried, what went wrong last, and what to check. HTTP status mapping
lives here too, so both model implementations word their errors alike.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from vance_cli.errors import TransportError

T = TypeVar("T")

DEFAULT_RETRIES: dict[str, float] = {"attempts": 4, "base_delay": 0.5, "max_delay": 4.0, "max_total": 20.0}

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


def retry_settings(retries: Mapping[str, Any] | None) -> dict[str, float]:
    """DEFAULT_RETRIES updated with the known keys of a [model.retries] table."""
    out = dict(DEFAULT_RETRIES)
    for key, value in (retries or {}).items():
        if key in out and value is not None:
            out[key] = float(value)
    out["attempts"] = max(1, int(out["attempts"]))
    return out


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date); None if absent/garbled."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    if "retry-after-ms" in lower:
        try:
            return max(0.0, float(lower["retry-after-ms"]) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _short(detail: str | None, limit: int = 300) -> str:
    detail = " ".join((detail or "").split())
    return detail if len(detail) <= limit else detail[: limit - 3] + "..."


def error_for_status(
    status: int,
    detail: str | None,
    *,
    model: str,
    api_base: str | None,
    retry_after: float | None = None,
) -> TransportError:
    """The TransportError for an HTTP error status (retryable for 408/409/429/5xx)."""
    where = api_base or "the provider"
    text = f"{model} at {where}: HTTP {status}"
    if detail:
        text += f": {_short(detail)}"
    retryable = status in RETRYABLE_STATUSES or status >= 500
    if status in (401, 403):
        hint = (
            "check the API key: set VANCE_API_KEY (or model.api_key in config.toml, or the provider's "
            "own variable such as OPENAI_API_KEY / ANTHROPIC_API_KEY / GEMINI_API_KEY)"
        )
    elif status == 404:
        hint = (
            "check the model name (VANCE_MODEL / --model) and api_base (VANCE_API_BASE); "
            "OpenAI-compatible servers usually serve under .../v1"
        )
    elif status == 429:
        hint = "the provider is rate limiting; wait a little, or raise model.retries.max_total"
    elif status >= 500:
        hint = f"the server at {where} is failing; check it is healthy, or try again later"
    elif status in (400, 422):
        hint = (
            "the provider rejected the request; if the model does not support tools or json_schema, "
            'say so in config.toml under [models."<model>".capabilities]'
        )
    else:
        hint = None
    return TransportError(text, status=status, retryable=retryable, hint=hint, retry_after=retry_after)


def timeout_error(model: str, api_base: str | None, timeout: float | None, detail: str = "") -> TransportError:
    where = api_base or "the provider"
    text = f"{model} at {where}: timed out" + (f" after {timeout:g}s" if timeout else "")
    if detail:
        text += f" ({_short(detail, 200)})"
    return TransportError(text, status=None, retryable=True, hint="raise model.timeout in config.toml, or check the server")


def connection_error(model: str, api_base: str | None, detail: str) -> TransportError:
    where = api_base or "the provider"
    return TransportError(
        f"{model} at {where}: cannot connect: {_short(detail, 200)}",
        status=None,
        retryable=True,
        hint="is the server running and reachable? check VANCE_API_BASE / model.api_base",
    )


async def with_transport_retries(
    fn: Callable[[], Awaitable[T]],
    *,
    attempts: int = 4,
    base_delay: float = 0.5,
    max_delay: float = 4.0,
    max_total: float = 20.0,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    describe: str = "",
) -> T:
    """Await ``fn()``; retry it on TransportError(retryable=True) only.

    The n-th wait is ``min(max_delay, base_delay * 2**(n-1))``, raised to the server's Retry-After when
    it asks for longer (still capped at ``max_delay``). No jitter, so tests can assert the waits. The
    loop stops early when the next wait would take the total past ``max_total``.
    """
    attempts = max(1, int(attempts))
    waited = 0.0
    made = 0
    last: TransportError | None = None
    for attempt in range(1, attempts + 1):
        made = attempt
        try:
            return await fn()
        except TransportError as exc:
            if not exc.retryable:
                raise
            last = exc
        if attempt == attempts:
            break
        delay = min(max_delay, base_delay * (2 ** (attempt - 1)))
        if last.retry_after is not None:
            delay = min(max_delay, max(delay, last.retry_after))
        if waited + delay > max_total:
            break
        await sleep(delay)
        waited += delay
    assert last is not None
    reason = last.message
    if describe and reason.startswith(describe + ": "):
        reason = reason[len(describe) + 2 :]  # say "model at base" once
    what = f"{describe}: " if describe else ""
    plural = "attempt" if made == 1 else "attempts"
    hint = last.hint or "check the server, or raise model.retries.attempts / max_total in config.toml"
    if made < attempts:
        hint += f" (stopped early: the next wait would pass the {max_total:g}s total retry budget)"
    raise TransportError(
        f"{what}gave up after {made} {plural} ({waited:g}s waiting); last error: {reason}",
        status=last.status,
        retryable=True,
        hint=hint,
        retry_after=last.retry_after,
    ) from last


async def retry_per_settings(
    attempt: Callable[[], Awaitable[T]],
    retries: Mapping[str, float],
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    describe: str = "",
) -> T:
    """``with_transport_retries`` with the budget of a ``retry_settings`` table."""
    return await with_transport_retries(
        attempt,
        attempts=int(retries["attempts"]),
        base_delay=retries["base_delay"],
        max_delay=retries["max_delay"],
        max_total=retries["max_total"],
        sleep=sleep,
        describe=describe,
    )
