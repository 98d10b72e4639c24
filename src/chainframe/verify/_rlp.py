"""RLP encoding (the Ethereum yellow paper, appendix B): byte strings and lists of them, nothing else.

Written here rather than taken from the ``rlp`` package, which brings pydantic, eth-utils and cytoolz for these
fifteen lines of a spec that does not change; the tests prove it on real block hashes of every header layout.
"""

from __future__ import annotations

from collections.abc import Sequence

Item = bytes | Sequence["Item"]


def _length(size: int, offset: int) -> bytes:
    if size < 56:
        return bytes([offset + size])
    digits = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([offset + 55 + len(digits)]) + digits


def encode(item: Item) -> bytes:
    if isinstance(item, bytes | bytearray):
        if len(item) == 1 and item[0] < 0x80:
            return bytes(item)
        return _length(len(item), 0x80) + bytes(item)
    payload = b"".join(encode(x) for x in item)
    return _length(len(payload), 0xC0) + payload


def uint(value: int) -> bytes:
    """An integer as RLP wants it: big-endian, no leading zero bytes (0 is the empty string)."""
    return value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
