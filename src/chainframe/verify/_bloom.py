"""The 2048-bit logs bloom (yellow paper 4.3.1): three bits per address and per topic, chosen by keccak."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from chainframe.verify._hashing import keccak


@lru_cache(maxsize=1 << 16)
def _bits(item: bytes) -> int:
    """The item's three bloom bits as one integer. Cached: the same contracts and event signatures fill most blocks'
    logs, and a keccak call costs more than the rest of the bloom (profiled: 50,333 calls were half of verifying the
    devnet folder)."""
    digest = keccak(item)
    bits = 0
    for i in (0, 2, 4):
        bits |= 1 << (int.from_bytes(digest[i : i + 2], "big") & 2047)
    return bits


def bloom(items: Iterable[bytes]) -> bytes:
    bits = 0
    for item in items:
        bits |= _bits(item)
    return bits.to_bytes(256, "big")
