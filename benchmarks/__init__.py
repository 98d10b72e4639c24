"""Benchmarks: run explicitly (scripts/bench), never part of the default test run."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_rate(run: Callable[[], Any], rows: int, repeat: int) -> float:
    """Rows per second of the best of ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return rows / best
