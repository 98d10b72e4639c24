"""Several endpoints at once: each request goes to whichever endpoint's budget allows it first.

A client given ``spread=`` endpoints (:class:`Provider`: an endpoint with its own :class:`Pacing`) holds one pacer per
endpoint. For each request the :class:`Pool` looks at them, least busy first and in turn among equals, and takes the
allowance of the first that has it; when none has, it waits for the soonest. So a run's rate is about the sum of the
endpoints' limits, and none of them is asked for more than its own. What each endpoint served is counted apart
(:class:`EndpointCounts`, by the endpoint's redacted URL), priced by its own table.

Setting an endpoint aside (unreachable, 5xx, another chain) stays the client's: it offers the pool only the endpoints
in service.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from chainframe._errors import InputError
from chainframe.rpc._endpoint import Endpoint
from chainframe.rpc._pacing import Pacer, Pacing


@dataclass(frozen=True)
class Provider:
    """One endpoint among several a client spreads its calls over, with its own limits (a key's or a plan's)."""

    endpoint: Endpoint
    pacing: Pacing | None = None
    """Its requests and credits per second and price table; None: a budget of its own the size of the client's
    ``pacing``."""

    @classmethod
    def of(cls, given: Provider | Endpoint | str) -> Provider:
        """``given`` as a Provider (a URL or an Endpoint with the client's pacing)."""
        if isinstance(given, Provider):
            return given
        if isinstance(given, Endpoint):
            return cls(given)
        if isinstance(given, str):
            return cls(Endpoint.from_url(given))
        raise InputError(f"spread takes URLs, Endpoints or Providers; got {type(given).__name__}")


@dataclass
class EndpointCounts:
    """What one endpoint was sent, for run reports."""

    requests: int = 0
    """HTTP requests or WebSocket messages (a batch is one), the chain id check included."""
    calls: int = 0
    """JSON-RPC calls, retries included."""
    credits: int = 0
    """The calls' price by the endpoint's own table (Infura credits, Alchemy compute units...)."""
    errors: int = 0
    """Requests and calls it answered with an error, or did not answer."""


class Pool:
    """Chooses an endpoint for each request by the budgets of their pacers."""

    def __init__(self) -> None:
        self._lock = anyio.Lock()  # one chooser at a time: waiters keep their order, buckets stay consistent
        self._turn = 0
        self.waited = 0.0
        """Seconds requests spent waiting for any endpoint's allowance (for run reports)."""

    async def choose(self, pacers: Sequence[Pacer], methods: Sequence[str]) -> int:
        """The index of the pacer whose allowance for ``methods`` was taken: the least busy that has it (in turn
        among equals), else, after waiting, the first to have it."""
        if not pacers:
            raise ValueError("no endpoint to choose from")
        count = len(pacers)
        async with self._lock:
            while True:
                turn = self._turn
                order = sorted(range(count), key=lambda i: (pacers[i].busy, (i - turn) % count))
                soonest = float("inf")
                for i in order:
                    wait = pacers[i].try_take(methods)
                    if wait <= 0:
                        self._turn = (i + 1) % count
                        return i
                    soonest = min(soonest, wait)
                self.waited += soonest
                await anyio.sleep(soonest)
