"""Infura-style pacing: a bucket of credits per second, each method weighted as on Infura's price list."""

from __future__ import annotations

import time
from collections.abc import Iterable

from chainframe.rpc import DEFAULT_CREDITS as DEFAULT_COST
from chainframe.rpc import INFURA_CREDITS as CREDIT_COST


def cost(methods: Iterable[str]) -> int:
    methods = list(methods)
    # A batch counts each call plus one for the batch itself.
    extra = DEFAULT_COST if len(methods) > 1 else 0
    return sum(CREDIT_COST.get(m, DEFAULT_COST) for m in methods) + extra


class CreditBucket:
    """Holds up to one second of credits; a request that finds too few is refused with the time to wait."""

    def __init__(self, per_second: float) -> None:
        self.per_second = per_second
        self._credits = per_second
        self._at = time.monotonic()

    def take(self, amount: int) -> float:
        """Take ``amount`` credits; return 0.0 when granted, else the seconds until they would be."""
        now = time.monotonic()
        self._credits = min(self.per_second, self._credits + (now - self._at) * self.per_second)
        self._at = now
        if amount <= self._credits or (amount > self.per_second and self._credits >= self.per_second):
            self._credits -= amount
            return 0.0
        return (min(amount, self.per_second) - self._credits) / self.per_second
