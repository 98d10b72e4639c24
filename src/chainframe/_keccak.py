"""keccak-256, the hash Ethereum names events with (``hashlib.sha3_256`` is the NIST variant and gives other bytes)."""

from __future__ import annotations

from Crypto.Hash import keccak


def keccak256(data: bytes) -> bytes:
    """The 32-byte keccak-256 digest of ``data``."""
    return keccak.new(digest_bits=256, data=data).digest()
