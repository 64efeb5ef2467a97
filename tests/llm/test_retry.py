"""The transport retry budget: what is retried, how long it waits, and how it gives up."""

from __future__ import annotations

import pytest

from vance_cli.errors import TransportError
from vance_cli.llm.retry import (
    error_for_status,
    parse_retry_after,
    retry_settings,
    with_transport_retries,
)


class Flaky:
    """Fails with the given errors, then returns "ok"."""

    def __init__(self, *errors):
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def recorder():
    delays: list[float] = []

    async def sleep(seconds):
        delays.append(seconds)

    return delays, sleep


def err(status=500, retryable=True, retry_after=None):
    return TransportError(f"HTTP {status}", status=status, retryable=retryable, retry_after=retry_after)


async def test_retryable_errors_are_retried_with_capped_exponential_backoff():
    delays, sleep = recorder()
    fn = Flaky(err(), err(), err(), err())
    result = await with_transport_retries(fn, attempts=5, base_delay=0.5, max_delay=1.5, max_total=100, sleep=sleep)
    assert result == "ok"
    assert fn.calls == 5
    assert delays == [0.5, 1.0, 1.5, 1.5]


async def test_non_retryable_error_fails_at_once_without_sleeping():
    delays, sleep = recorder()
    fn = Flaky(err(400, retryable=False))
    with pytest.raises(TransportError) as info:
        await with_transport_retries(fn, attempts=4, base_delay=1, max_delay=1, max_total=10, sleep=sleep)
    assert info.value.status == 400
    assert fn.calls == 1 and delays == []


async def test_other_exceptions_are_not_retried():
    fn = Flaky(ValueError("bug"))
    with pytest.raises(ValueError):
        await with_transport_retries(fn, attempts=4, base_delay=0, max_delay=0, max_total=0)
    assert fn.calls == 1


async def test_retry_after_raises_the_wait_up_to_the_cap():
    delays, sleep = recorder()
    fn = Flaky(err(429, retry_after=2.0), err(429, retry_after=30.0), err(429, retry_after=0.0))
    await with_transport_retries(fn, attempts=4, base_delay=0.1, max_delay=3.0, max_total=100, sleep=sleep)
    assert delays == [2.0, 3.0, 0.4]


async def test_gives_up_after_all_attempts_with_count_last_status_and_hint():
    delays, sleep = recorder()
    fn = Flaky(err(502), err(503), err(503))
    with pytest.raises(TransportError) as info:
        await with_transport_retries(fn, attempts=3, base_delay=0, max_delay=0, max_total=1, sleep=sleep, describe="m at X")
    assert fn.calls == 3 and len(delays) == 2
    assert info.value.message.startswith("m at X: gave up after 3 attempts")
    assert "HTTP 503" in info.value.message
    assert info.value.status == 503
    assert info.value.hint


async def test_stops_early_when_the_next_wait_would_pass_the_total_budget():
    delays, sleep = recorder()
    fn = Flaky(err(), err(), err(), err())
    with pytest.raises(TransportError) as info:
        await with_transport_retries(fn, attempts=10, base_delay=1, max_delay=8, max_total=3.5, sleep=sleep)
    assert delays == [1, 2]  # the third wait (4 s) would make 7 s > 3.5 s
    assert fn.calls == 3
    assert "gave up after 3 attempts" in info.value.message
    assert "max_total = 3.5s bounds the whole call" in info.value.hint


async def test_single_attempt_means_no_retry():
    fn = Flaky(err())
    with pytest.raises(TransportError, match="after 1 attempt"):
        await with_transport_retries(fn, attempts=1, base_delay=0, max_delay=0, max_total=0)
    assert fn.calls == 1


@pytest.mark.parametrize("status,retryable", [(500, True), (503, True), (429, True), (408, True),
                                              (400, False), (401, False), (404, False), (422, False)])
def test_status_mapping_retryability(status, retryable):
    assert error_for_status(status, "x", model="m", api_base="http://h").retryable is retryable


def test_401_hint_names_vance_api_key():
    error = error_for_status(401, "bad key", model="openai/x", api_base="http://h/v1")
    assert "VANCE_API_KEY" in error.hint
    assert "HTTP 401" in error.message and "bad key" in error.message and "http://h/v1" in error.message


def test_404_hint_names_model_and_api_base():
    assert "VANCE_API_BASE" in error_for_status(404, None, model="m", api_base=None).hint


@pytest.mark.parametrize("headers,expected", [
    ({"Retry-After": "2"}, 2.0), ({"retry-after": "0.5"}, 0.5), ({"retry-after-ms": "250"}, 0.25),
    ({"Retry-After": "soon"}, None), ({}, None), (None, None),
])
def test_parse_retry_after(headers, expected):
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_accepts_http_dates():
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past


def test_retry_settings_fill_defaults_and_ignore_unknown_keys():
    out = retry_settings({"attempts": 2, "base_delay": 0, "bogus": 1})
    assert out == {"attempts": 2, "base_delay": 0.0, "max_delay": 4.0, "max_total": 180.0}


async def test_final_message_names_the_endpoint_once():
    fn = Flaky(TransportError("m at X: cannot connect: refused"), TransportError("m at X: cannot connect: refused"))
    with pytest.raises(TransportError) as info:
        await with_transport_retries(fn, attempts=2, base_delay=0, max_delay=0, max_total=0, describe="m at X")
    assert info.value.message == "m at X: gave up after 2 attempts (0s waiting); last error: cannot connect: refused"


async def test_max_total_bounds_the_whole_call_and_cuts_a_hanging_attempt():
    import asyncio
    import time

    calls = 0

    async def hangs():
        nonlocal calls
        calls += 1
        if calls == 1:
            raise err(503)
        await asyncio.sleep(30)  # a server that took the request and never answers

    started = time.monotonic()
    with pytest.raises(TransportError) as info:
        await with_transport_retries(hangs, attempts=4, base_delay=0.05, max_delay=0.05, max_total=0.4, describe="m at X")
    took = time.monotonic() - started
    assert took < 1.5  # not attempts x anything: the budget of the whole call
    assert calls == 2
    assert "no answer within the 0.4s budget of the whole call" in info.value.message
    assert "did not answer" in info.value.hint and "max_total" in info.value.hint


async def test_every_retry_is_announced_with_the_reason_and_the_wait():
    delays, sleep = recorder()
    said: list[str] = []
    fn = Flaky(TransportError("m at X: HTTP 503: busy"), err(502))
    assert await with_transport_retries(
        fn, attempts=3, base_delay=0.5, max_delay=4, max_total=100, sleep=sleep, describe="m at X", announce=said.append
    ) == "ok"
    assert said == [
        "m at X: HTTP 503: busy; retrying in 0.5s (attempt 2 of 3)",
        "m at X: HTTP 502; retrying in 1s (attempt 3 of 3)",
    ]


async def test_a_failure_that_ends_the_call_is_not_announced_as_a_retry():
    said: list[str] = []
    with pytest.raises(TransportError):
        await with_transport_retries(Flaky(err(), err()), attempts=2, base_delay=0, max_delay=0, max_total=10,
                                     announce=said.append, sleep=recorder()[1])
    assert len(said) == 1


def test_timeout_hints_fit_the_fault():
    from vance_cli.llm.retry import timeout_error

    hung = timeout_error("m", "http://h/v1", 120)
    assert "no answer within 120s" in hung.message
    assert "accepted the request but did not answer" in hung.hint
    unreachable = timeout_error("m", "http://h/v1", 10, connecting=True)
    assert "could not connect within 10s" in unreachable.message
    assert "reachable" in unreachable.hint and "did not answer" not in unreachable.hint
