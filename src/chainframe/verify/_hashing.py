"""keccak-256 and the RLP encoding of the values a header or bloom needs.

Both in C where ``_native.c`` is built (and ``CHAINFRAME_NATIVE`` is not 0): proving a chunk makes millions of RLP
calls and hundreds of thousands of hashes, and Python's call overhead was most of their cost. The pure-Python code
below is the reference the native one is tested against, and what runs where nothing compiled. The ``rlp`` package
would bring eth-utils and its tree for nothing more than the ten lines of :func:`python_rlp`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from chainframe._keccak import keccak256

try:
    from chainframe.verify import _native as _built  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler at install time): the Python code serves
    _built = None

NATIVE: Any = None if os.environ.get("CHAINFRAME_NATIVE", "1") == "0" else _built
"""The compiled module (``keccak256``, ``rlp``, ``ordered_root``, ``receipts_roots``, ``blooms``,
``transactions_encoded``), or None."""

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


keccak: Callable[[bytes], bytes] = NATIVE.keccak256 if NATIVE is not None else keccak256
rlp: Callable[[RlpItem], bytes] = NATIVE.rlp if NATIVE is not None else python_rlp
