"""Retrying only what can succeed on retry: exponential backoff with jitter, the service's own backoff honoured,
bounded in attempts and in total time. Rate limits are waited out within a time budget of their own and do not use
up the attempts: several processes sharing one key all finish, each waiting its turn."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from chainframe.rpc._errors import KeyRefused, RateLimited, TransientError

if TYPE_CHECKING:
    from tenacity import AsyncRetrying, RetryCallState


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How hard to try before giving up on a request."""

    attempts: int = 6
    """Attempts in all, the first included."""
    initial_wait: float = 0.25
    """First backoff in seconds; doubles each attempt, with jitter."""
    max_wait: float = 30.0
    """Longest single backoff (a service's own backoff hint may ask for more, and gets it)."""
    total: float = 180.0
    """Give up on errors once this many seconds have passed since the first attempt."""
    rate_limit_total: float = 900.0
    """Keep waiting out rate limits until this many seconds have passed since the first attempt."""

    def retrying(self, *, started: float | None = None) -> AsyncRetrying:
        """tenacity's loop for this policy; ``started`` (``time.monotonic()``) when the first attempt was earlier."""
        from tenacity import AsyncRetrying, wait_exponential_jitter

        backoff = wait_exponential_jitter(multiplier=self.initial_wait, max=self.max_wait, jitter=self.initial_wait)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            hinted = exc.backoff if isinstance(exc, RateLimited) and exc.backoff is not None else 0.0
            return max(hinted, backoff(state))

        def should_retry(state: RetryCallState) -> bool:
            exc = state.outcome.exception() if state.outcome else None
            # Infura has answered "invalid project id" spuriously under load: one more try, never more.
            return isinstance(exc, TransientError) or (isinstance(exc, KeyRefused) and state.attempt_number == 1)

        failures = 0  # errors other than rate limits, for this request

        def stop(state: RetryCallState) -> bool:
            nonlocal failures
            exc = state.outcome.exception() if state.outcome else None
            elapsed = time.monotonic() - started if started is not None else state.seconds_since_start or 0.0
            if isinstance(exc, RateLimited):
                return elapsed >= self.rate_limit_total
            failures += 1
            return failures >= self.attempts or elapsed >= self.total

        return AsyncRetrying(retry=should_retry, wait=wait, stop=stop, reraise=True)


NO_RETRY = RetryPolicy(attempts=1)


class Attempts:
    """``async for attempt in Attempts(policy, on_retry): with attempt: ...``: the attempts at one request, with
    ``on_retry`` called before each backoff, as tenacity's ``AsyncRetrying`` gives them. But tenacity is loaded only
    when the first attempt fails: where Tornado is installed (Dask, Jupyter) tenacity imports it, 25 ms of the
    start-up of a run whose requests all succeed. The first failure is handed to tenacity's loop as its first
    attempt's, so it is counted, logged (``on_retry``) and waited on as any other."""

    def __init__(self, policy: RetryPolicy, on_retry: Callable[[RetryCallState], None]) -> None:
        self._policy = policy
        self._on_retry = on_retry
        self._started = time.monotonic()
        self._first: _FirstAttempt | None = None
        self._rest: AsyncRetrying | None = None

    def __aiter__(self) -> Attempts:
        return self

    async def __anext__(self) -> Any:
        if self._first is None:
            self._first = _FirstAttempt()
            return self._first
        if self._rest is None:
            failed = self._first.error
            if failed is None:
                raise StopAsyncIteration
            rest = self._policy.retrying(started=self._started)
            rest.before_sleep = self._on_retry
            self._rest = rest.__aiter__()
            with await self._rest.__anext__():
                raise failed
        return await self._rest.__anext__()


class _FirstAttempt:
    """Keeps the first attempt's error for tenacity (an ``Exception``: a cancellation or Ctrl-C goes straight on)."""

    error: Exception | None = None

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> bool:
        if isinstance(error, Exception):
            self.error = error
            return True
        return False
