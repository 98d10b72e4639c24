"""Columns of Python values to Arrow arrays, written as their buffers: no pandas, numpy or Polars.

For rows that are read in Python anyway (the state diffs' nested answers): ``pa.array`` of a list makes pyarrow import
pandas (0.3 s), and a Polars series per column and a cast of its text cost about 15 us a row on the benchmark chain's
balance diffs, most of the transform. Here a column is one join of its values' bytes and, where it has them, a
validity bitmap from a 0/1 byte string cast to booleans (Arrow packs the bits). Values that do not fit raise
:class:`~chainframe.datasets.ValueOutOfRange` naming the column, as the text converters do.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence
from itertools import accumulate

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import DecodeError, ValueOutOfRange

_WEI_LIMIT = 10**38
"""decimal128(38, 0) holds values below this."""


def _validity(values: Sequence[object]) -> pa.Buffer | None:
    """The bitmap of the values that are not None; None when all are."""
    if None not in values:
        return None
    flags = bytes(v is not None for v in values)
    bits = pc.cast(pa.Array.from_buffers(pa.uint8(), len(flags), [None, pa.py_buffer(flags)]), pa.bool_())
    return bits.buffers()[1]


def _offsets(lengths: Sequence[int]) -> pa.Buffer:
    ends = array("i", [0])
    ends.extend(accumulate(lengths))
    return pa.py_buffer(ends)


def u64(values: Sequence[int | None], column: str) -> pa.Array:
    try:
        data = array("Q", [0 if v is None else v for v in values])
    except OverflowError:
        raise ValueOutOfRange(f"{column}: {max(v for v in values if v is not None)} does not fit uint64") from None
    if sys.byteorder != "little":
        data.byteswap()
    return pa.Array.from_buffers(pa.uint64(), len(values), [_validity(values), pa.py_buffer(data)])


def strings(values: Sequence[str | None]) -> pa.Array:
    texts = [v or "" for v in values]
    data = "".join(texts).encode()
    lengths = [len(t) for t in texts] if data.isascii() else [len(t.encode()) for t in texts]
    return pa.Array.from_buffers(pa.string(), len(values), [_validity(values), _offsets(lengths), pa.py_buffer(data)])


def fixed_hex(values: Sequence[str | None], width: int, column: str) -> pa.Array:
    """0x-prefixed hex of at most ``width`` bytes as fixed-size binary, shorter values left-padded with zeros (a
    slot written as a quantity)."""
    digits = 2 * width
    texts = []
    for v in values:
        if v is None:
            texts.append("0" * digits)
        elif len(v) == digits + 2 and v[:2] == "0x":
            texts.append(v[2:])
        elif v[:2] != "0x" or len(v) > digits + 2:
            raise DecodeError(f"{column}: {v[:80]!r} is not 0x-prefixed hex of at most {width} bytes")
        else:
            texts.append(v[2:].rjust(digits, "0"))
    try:
        data = bytes.fromhex("".join(texts))
    except ValueError:
        bad = next(v for v in values if v is not None and not _is_hex(v[2:]))
        raise DecodeError(f"{column}: {bad[:80]!r} is not hex") from None
    return pa.Array.from_buffers(pa.binary(width), len(values), [_validity(values), pa.py_buffer(data)])


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text if len(text) % 2 == 0 else "0" + text)
    except ValueError:
        return False
    return True


def binary_hex(values: Sequence[str | None], column: str) -> pa.Array:
    """0x-prefixed hex (even length) as variable-size binary."""
    parts = []
    for v in values:
        try:
            parts.append(b"" if v is None else bytes.fromhex(v[2:]) if v[:2] == "0x" else None)
        except ValueError:
            parts.append(None)
        if parts[-1] is None:
            raise DecodeError(f"{column}: {str(v)[:80]!r} is not 0x-prefixed hex")
    data = b"".join(parts)  # type: ignore[arg-type]  # no None left: raised above
    lengths = [len(p) for p in parts]  # type: ignore[arg-type]
    return pa.Array.from_buffers(pa.binary(), len(values), [_validity(values), _offsets(lengths), pa.py_buffer(data)])


def words(values: Sequence[int | None], column: str) -> pa.Array:
    """Integers below 2**256 as 32-byte big-endian words."""
    try:
        data = b"".join((0 if v is None else v).to_bytes(32, "big") for v in values)
    except OverflowError:
        raise ValueOutOfRange(f"{column}: a value is wider than 256 bits (or negative)") from None
    return pa.Array.from_buffers(pa.binary(32), len(values), [_validity(values), pa.py_buffer(data)])


def wei(values: Sequence[int | None], column: str) -> pa.Array:
    """Integers as decimal128(38, 0): never wrapped or rounded."""
    largest = max((v for v in values if v is not None), default=0)
    if largest >= _WEI_LIMIT or min((v for v in values if v is not None), default=0) < 0:
        raise ValueOutOfRange(
            f"{column}: {largest} does not fit decimal128(38, 0) (values are never wrapped or rounded); this chain "
            "holds larger amounts: decode with u256='binary' to store wei columns as 32-byte words"
        )
    data = b"".join((0 if v is None else v).to_bytes(16, sys.byteorder) for v in values)
    return pa.Array.from_buffers(pa.decimal128(38, 0), len(values), [_validity(values), pa.py_buffer(data)])
