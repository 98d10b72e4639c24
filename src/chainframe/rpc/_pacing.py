"""Pacing: requests per second, Infura credits per second (per-method weights), and a concurrency cap.

Buckets hold 0.75 s of allowance and may go into debt for a single request that costs more than that (an
eth_getBlockReceipts at 1,000 credits on a 500-credit plan), so such a request waits for a full bucket, then runs.
A rate-limit answer pauses everyone, not only the request that got it.

Several processes on one budget (Dask workers, :mod:`chainframe.engine._dask`): each paces itself to an equal
:meth:`Pacing.share` of it, and a pause one of them is told to take is announced to the others
(:attr:`Pacer.announce`), which take it too (:meth:`Pacer.pause` with ``announce=False``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

# Infura's credit costs (its pricing/credit-cost page, in docs/research/providers.md); unlisted methods cost 80. The one
# table: the devnet gateway charges by it too. Infura prices every trace_* method at 300 and every debug_trace* at 1000.
INFURA_CREDITS: Mapping[str, int] = {
    "eth_getBlockReceipts": 1000,
    "eth_getLogs": 255,
    "eth_getTransactionReceipt": 80,
    "eth_getBlockByNumber": 80,
    "eth_blockNumber": 80,
    "eth_chainId": 5,
    "debug_traceCall": 1000,
    "debug_traceTransaction": 1000,
    "debug_traceBlockByNumber": 1000,
    "trace_block": 300,
    "trace_transaction": 300,
}
DEFAULT_CREDITS = 80


@dataclass(frozen=True, kw_only=True)
class Pacing:
    """How fast to send. None means no limit of that kind."""

    requests_per_second: float | None = None
    """JSON-RPC calls per second (a batch of 30 counts 31, as on Infura)."""
    credits_per_second: float | None = None
    """Provider credits per second (Infura free: 500, Developer: 4,000, Team: 40,000)."""
    max_concurrency: int = 16
    """Requests in flight at once."""
    credit_costs: Mapping[str, int] = field(default_factory=lambda: dict(INFURA_CREDITS))
    default_cost: int = DEFAULT_CREDITS

    def cost(self, methods: Sequence[str]) -> int:
        """Credits of one request. A batch also pays for itself as one more call (Infura: 30 calls count as 31)."""
        surcharge = self.default_cost if len(methods) > 1 else 0
        return sum(self.credit_costs.get(m, self.default_cost) for m in methods) + surcharge

    def share(self, parts: int) -> Pacing:
        """One of ``parts`` equal shares of this budget (per second); the concurrency cap stays per process.

        Equal shares of a per-second budget add up to the budget at every moment, with no message between the
        sharers per request: what a provider's per-key bucket needs. The cost is a share left unused while its
        holder has nothing to send."""
        if parts < 1:
            raise ValueError(f"parts must be at least 1; got {parts}")

        def part(rate: float | None) -> float | None:
            return None if rate is None else rate / parts

        return dataclasses.replace(
            self, requests_per_second=part(self.requests_per_second), credits_per_second=part(self.credits_per_second)
        )

    @staticmethod
    def calls(methods: Sequence[str]) -> int:
        """Calls one request counts as against a requests-per-second limit (a batch counts one more)."""
        return len(methods) + 1 if len(methods) > 1 else len(methods)


class _Bucket:
    """Allowance refilled at ``per_second``, holding at most ``BURST`` seconds of it."""

    BURST = 0.75
    """Less than the provider's one second: its bucket then keeps a quarter second in hand, so requests that
    arrive bunched up (latency varies) are not refused. With a full second, a pacer set to the plan's exact rate
    ran the provider's bucket at zero and got 429s (and paused everyone for a second)."""

    def __init__(self, per_second: float) -> None:
        self.rate = per_second
        self.capacity = per_second * self.BURST
        self.tokens = self.capacity
        self.at = time.monotonic()

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` (capped at a full bucket) is available; 0 takes it now."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        need = min(amount, self.capacity)
        if self.tokens >= need:
            self.tokens -= amount
            return 0.0
        return (need - self.tokens) / self.rate


class Pacer:
    """The runtime side of :class:`Pacing`, shared by every request of one client."""

    def __init__(self, pacing: Pacing) -> None:
        self.pacing = pacing
        self._limiter = anyio.CapacityLimiter(pacing.max_concurrency)
        self._lock = anyio.Lock()
        self._requests = _Bucket(pacing.requests_per_second) if pacing.requests_per_second else None
        self._credits = _Bucket(pacing.credits_per_second) if pacing.credits_per_second else None
        self._resume_at = 0.0
        self.waited = 0.0
        """Seconds spent waiting for allowance (for run reports)."""
        self.announce: Callable[[float], None] | None = None
        """Told of every pause this pacer's own requests asked for, to pass on to the other sharers of a budget."""

    def pause(self, seconds: float, *, announce: bool = True) -> None:
        """Hold every request for ``seconds`` (the service asked us to back off); ``announce=False`` for a pause
        another sharer of the budget was asked for (it is not passed on again)."""
        self._resume_at = max(self._resume_at, time.monotonic() + seconds)
        if announce and self.announce is not None:
            self.announce(seconds)

    async def _allowance(self, methods: Sequence[str]) -> None:
        async with self._lock:  # one waiter at a time keeps the order fair and the buckets consistent
            while True:
                wait = self._resume_at - time.monotonic()
                if wait <= 0 and self._requests is not None:
                    wait = self._requests.wait_for(self.pacing.calls(methods))
                if wait <= 0 and self._credits is not None:
                    wait = self._credits.wait_for(self.pacing.cost(methods))
                    if wait > 0 and self._requests is not None:
                        self._requests.tokens += self.pacing.calls(methods)  # give back; both are taken together
                if wait <= 0:
                    return
                self.waited += wait
                await anyio.sleep(wait)

    @asynccontextmanager
    async def slot(self, methods: Sequence[str]) -> AsyncIterator[None]:
        """Wait for allowance and a concurrency slot; hold the slot while the request runs."""
        async with self._limiter:
            await self._allowance(methods)
            yield
