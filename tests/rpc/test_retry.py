"""The attempts at one request (:class:`chainframe.rpc._retry.Attempts`): the first runs without tenacity, and a
failure hands over to tenacity's loop with the policy unchanged (what is retried, how often, for how long)."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import anyio
import pytest

from chainframe.rpc import InvalidParams, KeyRefused, RateLimited, RetryPolicy, TransportError
from chainframe.rpc._retry import Attempts

FAST = RetryPolicy(attempts=4, initial_wait=0.01, max_wait=0.02)


class Request:
    """A request that fails with ``errors`` in turn, then answers ``"ok"``; records what the loop did."""

    def __init__(self, *errors: BaseException, seconds: float = 0.0) -> None:
        self.errors = list(errors)
        self.seconds = seconds
        self.tries = 0
        self.retried: list[tuple[int, str]] = []

    def on_retry(self, state: Any) -> None:
        self.retried.append((state.attempt_number, type(state.outcome.exception()).__name__))

    async def run(self, policy: RetryPolicy) -> str:
        async for attempt in Attempts(policy, self.on_retry):
            with attempt:
                self.tries += 1
                await anyio.sleep(self.seconds)
                if self.errors:
                    raise self.errors.pop(0)
                return "ok"
        raise AssertionError("unreachable: the loop returns or raises")


def test_a_first_attempt_that_succeeds_runs_once() -> None:
    request = Request()
    assert anyio.run(request.run, FAST) == "ok"
    assert (request.tries, request.retried) == (1, [])


def test_a_loop_without_return_stops_after_a_success() -> None:
    async def main() -> int:
        tries = 0
        async for attempt in Attempts(FAST, lambda state: None):
            with attempt:
                tries += 1
        return tries

    assert anyio.run(main) == 1


def test_a_transient_first_failure_is_retried_counted_and_reported() -> None:
    request = Request(TransportError("reset"), RateLimited("slow down"))
    assert anyio.run(request.run, FAST) == "ok"
    assert request.tries == 3
    assert request.retried == [(1, "TransportError"), (2, "RateLimited")]


def test_a_terminal_error_is_raised_after_one_attempt() -> None:
    request = Request(InvalidParams("bad block"))
    with pytest.raises(InvalidParams, match="bad block"):
        anyio.run(request.run, FAST)
    assert (request.tries, request.retried) == (1, [])


def test_a_refused_key_is_tried_once_more_then_raised() -> None:
    request = Request(KeyRefused("invalid project id"), KeyRefused("invalid project id"))
    with pytest.raises(KeyRefused):
        anyio.run(request.run, FAST)
    assert request.tries == 2


def test_transient_errors_stop_at_the_attempts_bound() -> None:
    request = Request(*(TransportError(f"reset {i}") for i in range(10)))
    with pytest.raises(TransportError, match="reset 3"):
        anyio.run(request.run, FAST)
    assert request.tries == FAST.attempts
    assert [n for n, _ in request.retried] == [1, 2, 3]


def test_the_time_budget_counts_the_first_attempt() -> None:
    """A first attempt that used up the policy's ``total`` is not retried, as with tenacity's loop from the start."""
    request = Request(TransportError("slow and failed"), seconds=0.3)
    started = time.monotonic()
    with pytest.raises(TransportError):
        anyio.run(request.run, RetryPolicy(attempts=5, initial_wait=0.01, total=0.2))
    assert request.tries == 1
    assert time.monotonic() - started < 1.0


def test_ctrl_c_in_the_first_attempt_goes_straight_on() -> None:
    request = Request(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        anyio.run(request.run, FAST)
    assert (request.tries, request.retried) == (1, [])


def test_a_cancelled_first_attempt_is_not_retried() -> None:
    request = Request(seconds=10)

    async def main() -> bool:
        with anyio.move_on_after(0.05) as scope:
            await request.run(FAST)
        return scope.cancelled_caught

    assert anyio.run(main)
    assert (request.tries, request.retried) == (1, [])


def test_requests_that_succeed_never_load_tenacity() -> None:
    """tenacity imports Tornado where it is installed: 25 ms of start-up for a loop no request needed."""
    code = (
        "import sys, anyio\n"
        "from chainframe.rpc._retry import Attempts, RetryPolicy\n"
        "async def main():\n"
        "    async for attempt in Attempts(RetryPolicy(), lambda state: None):\n"
        "        with attempt:\n"
        "            pass\n"
        "anyio.run(main)\n"
        "print('tenacity' in sys.modules)\n"
        "async def failing():\n"
        "    async for attempt in Attempts(RetryPolicy(initial_wait=0.01), lambda state: None):\n"
        "        with attempt:\n"
        "            if attempt.__class__.__name__ == '_FirstAttempt':\n"
        "                raise __import__('chainframe.rpc', fromlist=['x']).TransportError('once')\n"
        "anyio.run(failing)\n"
        "print('tenacity' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "True"]
