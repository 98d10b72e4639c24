"""Static ABI values from 32-byte words, vectorized: a column of words is an (n, 32) byte matrix sliced with numpy.

Integers of up to 64 bits become Arrow integers; wider ones follow the u256 rule (``decimal128(38, 0)``, or the
lossless 32-byte word with ``u256="binary"``). Padding that a correct encoder leaves zero (or sign-extended) is
checked, so a log encoded some other way fails loudly instead of being misread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import DecodeError, ValueOutOfRange
from chainframe._u256 import U256
from chainframe.decode._abi import AbiType

# Where a failing row came from, for the message: given a row number, "block 12 log 3 (transaction 0x...)".
Locate = Callable[[int], str]
# Where the rows that do not decode go, instead of an error: given the rows (a boolean mask) and why. Calls take it
# (a call's bytes are the sender's, not the contract's: a bad one is a row kept with its reason); logs raise.
Faults = Callable[[np.ndarray, str], None]
_DECIMAL_MAX = 10**38 - 1


def words_of(array: pa.Array) -> np.ndarray:
    """An (n, 32) uint8 matrix of a binary array whose every value is 32 bytes long (no nulls)."""
    array = pc.cast(array, pa.large_binary())
    n = len(array)
    if n == 0:
        return np.zeros((0, 32), np.uint8)
    if array.null_count:
        raise DecodeError("expected 32-byte words, found a missing one")
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset : array.offset + n + 1]
    if not np.array_equal(np.diff(offsets), np.full(n, 32)):
        raise DecodeError("expected 32-byte words")
    values = np.frombuffer(array.buffers()[2], dtype=np.uint8)
    return values[offsets[0] : offsets[0] + 32 * n].reshape(n, 32)


def arrow_type(t: AbiType, u256: U256) -> pa.DataType:
    """The column type of an ABI type (indexed dynamic types are hashes: the caller asks for ``bytes32``)."""
    if t.base == "tuple":
        return pa.struct([pa.field(name, arrow_type(c, u256)) for name, c in t.components])
    if t.item is not None:
        return pa.list_(arrow_type(t.item, u256))
    if t.base == "address":
        return pa.binary(20)
    if t.base == "bool":
        return pa.bool_()
    if t.base == "string":
        return pa.string()
    if t.base == "bytes":
        return pa.binary()
    if t.base.startswith("bytes"):
        return pa.binary(int(t.base[5:]))
    if t.bits > 64:
        return pa.decimal128(38, 0) if u256 == "decimal" else pa.binary(32)
    bits = 8 if t.bits <= 8 else 16 if t.bits <= 16 else 32 if t.bits <= 32 else 64
    return pa.from_numpy_dtype(np.dtype(f"{'u' if t.base.startswith('u') else ''}int{bits}"))


def _fixed(matrix: np.ndarray, width: int) -> pa.Array:
    data = np.ascontiguousarray(matrix)
    return pa.Array.from_buffers(pa.binary(width), len(data), [None, pa.py_buffer(data.tobytes())])


def _bad(rows: Any, column: str, t: AbiType, locate: Locate, faults: Faults | None = None) -> None:
    if faults is not None:
        faults(rows, f"{column}: not a valid {t.canonical} encoding (bad padding)")
    elif rows.any():
        row = int(np.flatnonzero(rows)[0])
        raise DecodeError(f"{column}: the {t.canonical} word at {locate(row)} is not a valid encoding (bad padding)")


def decode_words(
    words: np.ndarray, t: AbiType, *, column: str, u256: U256, locate: Locate, faults: Faults | None = None
) -> pa.Array:
    """One column from an (n, 32) matrix of words holding static elementary values of type ``t``. With ``faults``,
    rows that are no valid encoding are handed to it (their values are then meaningless) instead of raising."""
    if t.base == "address":
        _bad(words[:, :12].any(axis=1), column, t, locate, faults)
        return _fixed(words[:, 12:], 20)
    if t.base == "bool":
        _bad(words[:, :31].any(axis=1) | (words[:, 31] > 1), column, t, locate, faults)
        # pa.array(ndarray) imports pandas (0.3 s) to ask whether it was given a Series: the buffers are handed over
        bits = np.packbits(words[:, 31] == 1, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(words), [None, pa.py_buffer(bits)])
    if t.base.startswith("bytes"):
        width = int(t.base[5:])
        _bad(words[:, width:].any(axis=1), column, t, locate, faults)
        return _fixed(words[:, :width], width)
    signed = t.base.startswith("int")
    pad = 32 - t.bits // 8
    if signed:
        sign = np.where(words[:, pad] >= 0x80, 0xFF, 0).astype(np.uint8)
        _bad((words[:, :pad] != sign[:, None]).any(axis=1), column, t, locate, faults)
    else:
        _bad(words[:, :pad].any(axis=1), column, t, locate, faults)
    if t.bits <= 64:
        low = np.ascontiguousarray(words[:, 24:]).view(">i8" if signed else ">u8").ravel()
        arrow = arrow_type(t, u256)
        return pa.Array.from_buffers(arrow, len(low), [None, pa.py_buffer(low.astype(arrow.to_pandas_dtype()))])
    if u256 == "binary":
        return _fixed(words, 32)
    return _decimal(words, signed, column=column, locate=locate, faults=faults)


def _decimal(words: np.ndarray, signed: bool, *, column: str, locate: Locate, faults: Faults | None = None) -> pa.Array:
    # A value surely fits when its top 130 bits are all copies of the sign (|v| < 2**126 < 1e38); the few rows that
    # do not are checked exactly in Python, so the common case stays vectorized.
    sign = np.where(words[:, 0] >= 0x80, 0xFF, 0).astype(np.uint8) if signed else np.zeros(len(words), np.uint8)
    top_ok = (words[:, :16] == sign[:, None]).all(axis=1) & ((words[:, 16] & 0xC0) == (sign & 0xC0))
    for row in np.flatnonzero(~top_ok):
        value = int.from_bytes(words[row].tobytes(), "big", signed=signed)
        if abs(value) > _DECIMAL_MAX and faults is not None:
            faults(np.arange(len(words)) == row, f"{column}: {value} does not fit decimal128(38, 0) (--u256 binary)")
        elif abs(value) > _DECIMAL_MAX:
            raise ValueOutOfRange(
                f"{column}: {value} at {locate(int(row))} does not fit decimal128(38, 0); decode with "
                "u256='binary' for lossless 32-byte words"
            )
    # decimal128 is a 16-byte little-endian two's complement integer: the word's low half, bytes reversed.
    little = np.ascontiguousarray(words[:, 16:][:, ::-1])
    return pa.Array.from_buffers(pa.decimal128(38, 0), len(words), [None, pa.py_buffer(little.tobytes())])


# Arrow arrays to and from numpy through their buffers: pyarrow's to_numpy and pa.array(ndarray) import pandas where it
# is installed (0.3-0.8 s, more than a run's decoding), as any Python value made an Arrow array does.


def take_indices(index: np.ndarray) -> pa.Array:
    """Int64 take indices; a negative one is null (its row gets a null)."""
    index = np.ascontiguousarray(index, np.int64)
    missing = index < 0
    bitmap = pa.py_buffer(np.packbits(~missing, bitorder="little").tobytes()) if missing.any() else None
    return pa.Array.from_buffers(pa.int64(), len(index), [bitmap, pa.py_buffer(index.tobytes())])


def text_array(values: np.ndarray | str, n: int) -> pa.Array:
    """Strings from buffers: ``values`` an object array of ``n`` texts or None (null), or one text for all ``n`` rows.
    The distinct texts (a decoded call's few reasons, a function's signature) are written once and taken by index."""
    if isinstance(values, str):
        distinct, codes = [values], np.zeros(n, np.int64)
    else:
        distinct = sorted({v for v in values if v is not None}) if n else []
        codes = np.full(n, -1, np.int64)
        for code, text in enumerate(distinct):
            codes[values == text] = code
    encoded = [text.encode() for text in distinct]
    offsets = np.zeros(len(encoded) + 1, np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    texts = pa.Array.from_buffers(
        pa.string(), len(encoded), [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(encoded))]
    )
    return pc.take(texts, take_indices(codes))
