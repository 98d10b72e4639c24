"""Retrying only what can succeed on retry: exponential backoff with jitter, the service's own backoff honoured,
bounded in attempts and in total time. Rate limits are waited out within a time budget of their own and do not use
up the attempts: several processes sharing one key all finish, each waiting its turn."""

from __future__ import annotations

from dataclasses import dataclass

from tenacity import AsyncRetrying, RetryCallState, wait_exponential_jitter

from chainframe.rpc._errors import KeyRefused, RateLimited, TransientError


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

    def retrying(self) -> AsyncRetrying:
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
            elapsed = state.seconds_since_start or 0.0
            if isinstance(exc, RateLimited):
                return elapsed >= self.rate_limit_total
            failures += 1
            return failures >= self.attempts or elapsed >= self.total

        return AsyncRetrying(retry=should_retry, wait=wait, stop=stop, reraise=True)


NO_RETRY = RetryPolicy(attempts=1)
