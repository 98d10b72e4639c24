"""The 2048-bit logs bloom (yellow paper 4.3.1): three bits per address and per topic, chosen by keccak."""

from __future__ import annotations

from collections.abc import Iterable

from chainframe.verify._hashing import keccak


def bloom(items: Iterable[bytes]) -> bytes:
    bits = 0
    for item in items:
        digest = keccak(item)
        for i in (0, 2, 4):
            bits |= 1 << (int.from_bytes(digest[i : i + 2], "big") & 2047)
    return bits.to_bytes(256, "big")
