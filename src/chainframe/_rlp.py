"""RLP, the encoding Ethereum hashes: the reference in Python (``chainframe.verify`` uses a compiled twin where it is
built; the devnet signs with this one). The ``rlp`` package would bring eth-utils and its tree for these lines."""

from __future__ import annotations

RlpItem = bytes | list["RlpItem"]


def uint(value: int) -> bytes:
    """The minimal big-endian bytes of a non-negative integer, as RLP wants integers (zero is empty)."""
    return value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""


def _length(size: int, offset: int) -> bytes:
    if size < 56:
        return bytes([offset + size])
    raw = uint(size)
    return bytes([offset + 55 + len(raw)]) + raw


def python_rlp(item: RlpItem) -> bytes:
    if isinstance(item, bytes):
        if len(item) == 1 and item[0] < 0x80:
            return item
        return _length(len(item), 0x80) + item
    body = b"".join(python_rlp(x) for x in item)
    return _length(len(body), 0xC0) + body
