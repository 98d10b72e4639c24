"""Pacing: requests per second, credits per second (per-method weights from a provider's price table), and a
concurrency cap.

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

from chainframe._errors import InputError

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

# Alchemy's compute units, as its throughput limit (CUPS) counts them: the "Throughput CU" column where it has one
# (eth_getBlockReceipts 500, debug_trace* 1000), else the "CU" column. From
# https://www.alchemy.com/docs/reference/compute-unit-costs (and the debug_traceBlockByNumber method page), read
# 2026-11-28. A batch costs its calls' sum. trace_* is not in what was read: unlisted methods are priced at 20, the
# table's most common figure.
ALCHEMY_CU: Mapping[str, int] = {
    "eth_chainId": 0,
    "eth_blockNumber": 10,
    "eth_getBlockByNumber": 20,
    "eth_getBlockByHash": 20,
    "eth_getTransactionReceipt": 20,
    "eth_getTransactionByBlockNumberAndIndex": 20,
    "eth_getUncleByBlockNumberAndIndex": 20,
    "eth_getBalance": 20,
    "eth_getCode": 20,
    "eth_getStorageAt": 20,
    "eth_getTransactionCount": 20,
    "eth_getProof": 20,
    "eth_call": 26,
    "eth_getLogs": 60,
    "eth_getBlockReceipts": 500,
    "debug_traceBlockByNumber": 1000,
    "debug_traceBlockByHash": 1000,
}
# QuickNode's API credits on Ethereum (and the other chains of its "20" row: Arbitrum, Base, Optimism, Polygon...):
# every method 20, Trace & Debug methods twice the chain's figure, "large calls" (trace_replay*, txpool_content) four
# times. From https://www.quicknode.com/api-credits/blast (one page per chain, same table), read 2026-11-28. The page
# does not say how a batch is counted: taken as its calls' sum.
QUICKNODE_CREDITS: Mapping[str, int] = {
    "trace_block": 40,
    "trace_transaction": 40,
    "trace_filter": 40,
    "debug_traceBlockByNumber": 40,
    "debug_traceBlockByHash": 40,
    "debug_traceTransaction": 40,
    "debug_traceCall": 40,
    "trace_replayBlockTransactions": 80,
    "trace_replayTransaction": 80,
    "txpool_content": 80,
}


@dataclass(frozen=True)
class PriceTable:
    """A provider's published price of each method, in its own unit (credits, compute units)."""

    name: str
    costs: Mapping[str, int]
    default: int
    """The price of a method the table does not list."""
    batch: int | None
    """What a batch costs on top of its calls; None: one more call at ``default`` (Infura: 30 calls count as 31)."""


PRICE_TABLES: Mapping[str, PriceTable] = {
    table.name: table
    for table in (
        PriceTable("infura", INFURA_CREDITS, DEFAULT_CREDITS, None),
        PriceTable("alchemy", ALCHEMY_CU, 20, 0),
        PriceTable("quicknode", QUICKNODE_CREDITS, 20, 0),
    )
}
"""The price tables by name: what ``--endpoints`` files and :meth:`Pacing.priced` name."""


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
    batch_cost: int | None = None
    """What a batch costs on top of its calls; None: one more call at ``default_cost`` (Infura's rule)."""

    @classmethod
    def priced(
        cls,
        table: str | PriceTable,
        *,
        requests_per_second: float | None = None,
        credits_per_second: float | None = None,
        max_concurrency: int = 16,
    ) -> Pacing:
        """Pacing by a provider's price table (:data:`PRICE_TABLES`: ``infura``, ``alchemy``, ``quicknode``)."""
        if isinstance(table, str):
            if table not in PRICE_TABLES:
                raise InputError(f"no price table {table!r}; known: {', '.join(sorted(PRICE_TABLES))}")
            table = PRICE_TABLES[table]
        return cls(
            requests_per_second=requests_per_second, credits_per_second=credits_per_second,
            max_concurrency=max_concurrency, credit_costs=dict(table.costs), default_cost=table.default,
            batch_cost=table.batch,
        )  # fmt: skip

    def cost(self, methods: Sequence[str]) -> int:
        """Credits of one request. A batch also pays for itself (Infura: as one more call, 30 calls count as 31)."""
        surcharge = 0
        if len(methods) > 1:
            surcharge = self.default_cost if self.batch_cost is None else self.batch_cost
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

    def start_empty(self) -> None:
        """Begin with no allowance in hand, as if a burst had just been sent. For an endpoint that shares a run with
        others: its provider's bucket then keeps its whole second in hand for the requests that arrive bunched (the
        several endpoints' answers and the machine's load move sends about), not a quarter of it."""
        for bucket in (self._requests, self._credits):
            if bucket is not None:
                bucket.tokens, bucket.at = 0.0, time.monotonic()

    def pause(self, seconds: float, *, announce: bool = True) -> None:
        """Hold every request for ``seconds`` (the service asked us to back off); ``announce=False`` for a pause
        another sharer of the budget was asked for (it is not passed on again)."""
        self._resume_at = max(self._resume_at, time.monotonic() + seconds)
        if announce and self.announce is not None:
            self.announce(seconds)

    def try_take(self, methods: Sequence[str]) -> float:
        """Take the allowance of one request now and return 0, or take nothing and return the seconds until it
        could be taken (a pause counts). The caller keeps the order among waiters (:meth:`slot`, or a
        :class:`~chainframe.rpc._pool.Pool` choosing among several pacers)."""
        wait = self._resume_at - time.monotonic()
        if wait <= 0 and self._requests is not None:
            wait = self._requests.wait_for(self.pacing.calls(methods))
        if wait <= 0 and self._credits is not None:
            wait = self._credits.wait_for(self.pacing.cost(methods))
            if wait > 0 and self._requests is not None:
                self._requests.tokens += self.pacing.calls(methods)  # give back; both are taken together
        return max(wait, 0.0)

    @property
    def busy(self) -> float:
        """The share of its concurrency cap in use (0 to 1)."""
        return self._limiter.borrowed_tokens / self.pacing.max_concurrency

    async def _allowance(self, methods: Sequence[str]) -> None:
        async with self._lock:  # one waiter at a time keeps the order fair and the buckets consistent
            while (wait := self.try_take(methods)) > 0:
                self.waited += wait
                await anyio.sleep(wait)

    @asynccontextmanager
    async def slot(self, methods: Sequence[str], *, paid: bool = False) -> AsyncIterator[None]:
        """Wait for allowance and a concurrency slot; hold the slot while the request runs. ``paid``: the allowance
        was taken already (:meth:`try_take`), only the slot is waited for."""
        async with self._limiter:
            if not paid:
                await self._allowance(methods)
            yield
