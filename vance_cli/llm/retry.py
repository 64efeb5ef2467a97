"""The transport retry budget: 5xx, 429, timeouts and connection errors; never model misbehaviour.

Model misbehaviour (no tool call, bad JSON) is the engines' business and costs no sleep; this module
only retries what a second attempt can fix, with capped exponential backoff, and then fails with a
message that says how often it tried, what went wrong last, and what to check. HTTP status mapping
lives here too, so both model implementations word their errors alike.

``max_total`` bounds the whole call, attempts and waits included (``model.timeout`` bounds one
attempt): a server that accepts the connection and never answers costs at most ``max_total``
seconds, not ``attempts × timeout``. Every retry is announced (``announce``, the models pass a
writer to stderr), so a slow call is never a silent one.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from vance_cli.errors import TransportError
from vance_cli.text import shown_url
from vance_cli.names import DEFAULT_RETRIES
from vance_cli.text import shorten

T = TypeVar("T")


Announce = Callable[[str], None]


def announce_on_stderr(text: str) -> None:
    """The default retry announcer: one line on stderr (stdout is for results).

    The line quotes the server's error text: control sequences are stripped (``terminal.err``)."""
    from vance_cli.terminal import err

    err(f"vance: {text}")

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})

# How often a call waiting behind a probe looks again (see SlowDown).
PROBE_POLL = 0.02


def asks_to_slow_down(exc: TransportError) -> bool:
    """The provider said "slow down": HTTP 429, or any error that came with a Retry-After."""
    return exc.status == 429 or exc.retry_after is not None


class SlowDown:
    """One slow-down for every call of one model client (issue 20: a batch runs N calls at once).

    When a call is told to slow down (``asks_to_slow_down``), ``hold`` closes the gate for the
    wait the provider asked for (capped like any retry wait); every call of the client waits at
    ``enter`` before its next attempt, so N calls in flight pay one wait together instead of
    sending N more requests into the limit. When the wait is over one call goes first (the
    probe); the others follow once it comes back without being told to slow down again. A lone
    call is its own probe: for it nothing changes. Used on one event loop (no lock needed);
    real time (``clock``, ``asyncio.sleep``), whatever the retry loop's own test doubles.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until = 0.0
        self._probing = False  # a probe has to come back before the others go
        self._probe_out = False
        self.holds = 0  # how often the gate was closed (progress displays, tests)

    def hold(self, seconds: float) -> float:
        """Close the gate for ``seconds`` (or longer, if it is closed for longer); the time it opens."""
        self._until = max(self._until, self._clock() + max(0.0, seconds))
        self._probing = True
        self.holds += 1
        return self._until

    @property
    def waiting(self) -> float:
        """Seconds until the gate opens (0: open, or open to a probe)."""
        return max(0.0, self._until - self._clock())

    async def enter(self, waited_until: float = 0.0) -> bool:
        """Wait until this call may send; True when it goes as the probe (pass that to ``leave``).
        ``waited_until``: the call has waited out a hold up to that time itself (its own retry
        wait): it waits here only for a longer one."""
        while True:
            until = self._until
            left = until - self._clock()
            if left > 0 and until > waited_until:
                await asyncio.sleep(left)
                waited_until = until  # a hold made meanwhile moves ``_until`` on: wait again
                continue
            if not self._probing:
                return False
            if not self._probe_out:
                self._probe_out = True
                return True
            await asyncio.sleep(PROBE_POLL)

    def leave(self, probe: bool, slowed: bool) -> None:
        """An attempt that ``enter`` let through is over; ``slowed``: it was told to slow down
        (``hold`` was called for it first)."""
        if probe:
            self._probe_out = False
            if not slowed:
                self._probing = False



def retry_settings(retries: Mapping[str, Any] | None) -> dict[str, float]:
    """DEFAULT_RETRIES updated with the known keys of a [model.retries] table."""
    out = {key: float(value) for key, value in DEFAULT_RETRIES.items()}
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
    return shorten(detail or "", limit, one_line=True, mark="...")


# A 5xx that is the server's answer to a request shape it does not take, not a fault a second
# attempt can fix: llama-cpp-python's server answers response_format json_schema with HTTP 500
# "1 validation error for CreateChatCompletionRequest / response_format.type / Input should be
# 'text' or 'json_object'" (issue 18). It needs both a validation wording and a request field.
_REJECTED_WORDING = re.compile(
    r"validation error|input should be|extra inputs are not permitted|not supported|unsupported|"
    r"unknown (?:field|parameter)|invalid (?:value|type) for",
    re.IGNORECASE,
)
_REQUEST_FIELDS = re.compile(
    r"response_format|json_schema|json_object|tool_choice|\btools\b|parallel_tool_calls|"
    r"stream_options|max_completion_tokens|temperature",
    re.IGNORECASE,
)


def rejected_request_shape(status: int, detail: str | None) -> bool:
    """An HTTP 500/501 whose text says the server does not accept a field of the request (see
    above). 502, 503, 504 and 529 are gateways and overloads: transient whatever they say."""
    text = detail or ""
    return status in (500, 501) and bool(_REJECTED_WORDING.search(text)) and bool(_REQUEST_FIELDS.search(text))


def error_for_status(
    status: int,
    detail: str | None,
    *,
    model: str,
    api_base: str | None,
    retry_after: float | None = None,
) -> TransportError:
    """The TransportError for an HTTP error status (retryable for 408/409/429/5xx)."""
    where = shown_url(api_base) or "the provider"
    text = f"{model} at {where}: HTTP {status}"
    if detail:
        text += f": {_short(detail)}"
    retryable = status in RETRYABLE_STATUSES or status >= 500
    if rejected_request_shape(status, detail):
        # Not transient: the same request gets the same answer (callers step the format down).
        return TransportError(
            text, status=status, retryable=False, retry_after=retry_after,
            hint=(
                "the server does not accept this request shape (it answered with a server error, "
                'not a 400); say what the model takes in config.toml under [models."<model>".capabilities], '
                'e.g. json_schema = false or family = "llama-cpp-python"'
            ),
        )
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


def no_answer_hint(api_base: str | None) -> str:
    """The fix for a server that took the request and never answered (not the fix for a refused connection)."""
    where = f"the server at {shown_url(api_base)}" if api_base else "the server"
    return (
        f"{where} accepted the request but did not answer: check that it is healthy and not stuck or "
        "overloaded (a local model may still be loading); if it is only slow, raise model.timeout (one "
        "attempt) and model.retries.max_total (the whole call) in config.toml"
    )


def timeout_error(
    model: str, api_base: str | None, timeout: float | None, detail: str = "", *, connecting: bool = False
) -> TransportError:
    """A timeout: no connection within ``timeout`` (``connecting``), or a connection and no answer."""
    where = shown_url(api_base) or "the provider"
    if connecting:
        text = f"{model} at {where}: could not connect" + (f" within {timeout:g}s" if timeout else "")
        hint = "is the server running and reachable? check VANCE_API_BASE / model.api_base, and the network"
    else:
        text = f"{model} at {where}: no answer" + (f" within {timeout:g}s" if timeout else "") + " (timed out)"
        hint = no_answer_hint(api_base)
    if detail:
        text += f" ({_short(detail, 200)})"
    return TransportError(text, status=None, retryable=True, hint=hint)


def connection_error(model: str, api_base: str | None, detail: str) -> TransportError:
    where = shown_url(api_base) or "the provider"
    return TransportError(
        f"{model} at {where}: cannot connect: {_short(detail, 200)}",
        status=None,
        retryable=True,
        hint="is the server running and reachable? check VANCE_API_BASE / model.api_base",
    )


async def with_transport_retries(
    fn: Callable[[], Awaitable[T]],
    *,
    attempts: int = int(DEFAULT_RETRIES["attempts"]),
    base_delay: float = DEFAULT_RETRIES["base_delay"],
    max_delay: float = DEFAULT_RETRIES["max_delay"],
    max_total: float = DEFAULT_RETRIES["max_total"],
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    describe: str = "",
    announce: Announce | None = None,
    cut_attempts: bool | Callable[[], bool] = True,
    gate: SlowDown | None = None,
) -> T:
    """Await ``fn()``; retry it on TransportError(retryable=True) only, within ``max_total`` seconds.

    The n-th wait is ``min(max_delay, base_delay * 2**(n-1))``, raised to the server's Retry-After when
    it asks for longer (still capped at ``max_delay``). No jitter, so tests can assert the waits.
    ``max_total`` (> 0) bounds the whole call: an attempt still running when it is spent is cut off
    (a timeout), and no wait starts that would end past it. ``max_total <= 0`` means no bound.
    Each retry is announced with ``announce(text)`` before its wait. ``cut_attempts`` may be a
    callable (a stream, which may rightly run long): an attempt still running when the budget is
    spent is cut only while it says True (the stream has not begun), else it runs to its end; a
    server that takes a request and never starts answering still costs at most ``max_total``.
    ``cut_attempts=False`` never cuts a running attempt.
    ``gate`` (the model client's SlowDown) is passed before every attempt; a rate limit closes it
    for every call of the client. Time spent waiting there counts against ``max_total``.
    """
    attempts = max(1, int(attempts))
    bounded = max_total > 0
    started = clock()
    waited = 0.0
    made = 0
    last: TransportError | None = None
    budget_spent = False

    def spent() -> float:
        # Waits count even when ``sleep`` is a test double that does not let the clock move.
        return max(clock() - started, waited)

    held_until = 0.0  # the gate's opening time this call set itself (and then waited out)
    for attempt in range(1, attempts + 1):
        probe = False
        if gate is not None:
            probe = await gate.enter(held_until)
            if bounded and spent() >= max_total:
                gate.leave(probe, False)
                budget_spent = True
                if last is None:
                    last = TransportError(
                        f"{describe + ': ' if describe else ''}rate limited: no attempt could start within the "
                        f"{max_total:g}s budget of the whole call",
                        status=429,
                        retryable=True,
                        hint="the provider is rate limiting; send fewer calls at once (--jobs), or raise model.retries.max_total",
                    )
                break
        made = attempt
        slowed = False
        try:
            if not bounded or cut_attempts is False:
                return await fn()
            remaining = max(max_total - spent(), 0.001)
            try:
                if cut_attempts is True:
                    # asyncio.timeout, not wait_for: no extra task per attempt (a batch makes thousands)
                    async with asyncio.timeout(remaining):
                        return await fn()
                return await _cut_while(fn(), remaining, cut_attempts)
            except TimeoutError:
                budget_spent = True
                last = TransportError(
                    f"{describe + ': ' if describe else ''}no answer within the {max_total:g}s budget of the whole call",
                    status=None,
                    retryable=True,
                    hint=no_answer_hint(None),
                )
                break
        except TransportError as exc:
            if not exc.retryable:
                raise
            last = exc
            if gate is not None and asks_to_slow_down(exc):
                slowed = True
                held_until = gate.hold(min(max_delay, max(exc.retry_after or 0.0, base_delay * (2 ** (attempt - 1)))))
        finally:
            if gate is not None:
                gate.leave(probe, slowed)
        if attempt == attempts:
            break
        delay = min(max_delay, base_delay * (2 ** (attempt - 1)))
        if last.retry_after is not None:
            delay = min(max_delay, max(delay, last.retry_after))
        if bounded and spent() + delay >= max_total:
            budget_spent = True
            break
        if announce is not None:
            what = f"{describe}: " if describe else ""
            announce(f"{what}{_without_prefix(last.message, describe)}; retrying in {delay:g}s (attempt {attempt + 1} of {attempts})")
        await sleep(delay)
        waited += delay
    assert last is not None
    reason = _without_prefix(last.message, describe)
    what = f"{describe}: " if describe else ""
    plural = "attempt" if made == 1 else "attempts"
    hint = last.hint or "check the server, or raise model.retries.attempts / max_total in config.toml"
    if budget_spent and made < attempts:
        hint += f" (stopped early: model.retries.max_total = {max_total:g}s bounds the whole call, attempts and waits)"
    took = f"{spent():.3g}s" if bounded else f"{waited:g}s waiting"
    raise TransportError(
        f"{what}gave up after {made} {plural} ({took}); last error: {reason}",
        status=last.status,
        retryable=True,
        hint=hint,
        retry_after=last.retry_after,
    ) from last


async def _cut_while(work: Awaitable[T], seconds: float, may_cut: Callable[[], bool]) -> T:
    """``work``, cut off (TimeoutError) after ``seconds`` if ``may_cut()`` still says so then."""
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
        if not done and may_cut():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            raise TimeoutError
        return await task
    finally:
        if not task.done():
            task.cancel()


def _without_prefix(message: str, describe: str) -> str:
    """A message without its leading "model at base: " (so the endpoint is named once)."""
    return message[len(describe) + 2 :] if describe and message.startswith(describe + ": ") else message


async def retry_per_settings(
    attempt: Callable[[], Awaitable[T]],
    retries: Mapping[str, float],
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    describe: str = "",
    announce: Announce | None = None,
    cut_attempts: bool | Callable[[], bool] = True,
    gate: SlowDown | None = None,
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
        announce=announce,
        cut_attempts=cut_attempts,
        gate=gate,
    )
