"""Deciding, reproducibly, which fault a request gets."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable

from chainframe.devnet.gateway._config import FaultKind, FaultRule

_REQUEST_LEVEL: frozenset[FaultKind] = frozenset({"http_429", "http_402", "http_5xx", "drop", "truncate"})


class FaultInjector:
    """Draws faults for requests from the rules, with a seeded generator, counting what it injected."""

    def __init__(self, rules: Iterable[FaultRule], seed: int) -> None:
        self.rules = tuple(rules)
        self._rng = random.Random(seed)
        self._fired: Counter[int] = Counter()
        self.injected: Counter[str] = Counter()

    def _fires(self, index: int, rule: FaultRule, methods: Iterable[str], transport: str) -> bool:
        if rule.transport not in ("any", transport):
            return False
        if rule.methods and not set(rule.methods) & set(methods):
            return False
        if rule.times is not None and self._fired[index] >= rule.times:
            return False
        if rule.probability < 1.0 and self._rng.random() >= rule.probability:
            return False
        self._fired[index] += 1
        self.injected[rule.kind] += 1
        return True

    def request_fault(self, methods: list[str], transport: str) -> FaultRule | None:
        """The first request-level fault (status, drop, truncate) that fires for this request, if any."""
        for i, rule in enumerate(self.rules):
            if rule.kind in _REQUEST_LEVEL and self._fires(i, rule, methods, transport):
                return rule
        return None

    def first(self, kind: FaultKind, methods: list[str], transport: str) -> FaultRule | None:
        """The first rule of ``kind`` that fires for these methods, if any."""
        for i, rule in enumerate(self.rules):
            if rule.kind == kind and self._fires(i, rule, methods, transport):
                return rule
        return None

    def shuffle(self, items: list[bytes]) -> None:
        self._rng.shuffle(items)

    def pick(self, n: int) -> int:
        return self._rng.randrange(n)
