"""ABI values that are not a fixed slice of the data (strings, bytes, arrays, tuples), decoded row by row in Python.

Static elementary values never come here (see ``_words``); these are the rare dynamic parameters, where the
offsets differ from row to row. Results are Python values ready for ``pyarrow.array`` with the column's type.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from chainframe._errors import DecodeError, ValueOutOfRange
from chainframe._u256 import U256
from chainframe.decode._abi import AbiType

_DECIMAL_MAX = 10**38 - 1


def _word(data: bytes, pos: int) -> bytes:
    word = data[pos : pos + 32]
    if len(word) != 32:
        raise DecodeError(f"data ends at byte {len(data)}, inside the word at {pos}")
    return word


def _uint(data: bytes, pos: int) -> int:
    return int.from_bytes(_word(data, pos), "big")


def decode_value(t: AbiType, data: bytes, pos: int, *, u256: U256) -> Any:
    """The value of type ``t`` whose head is at ``pos`` in ``data`` (offsets count from ``0``: call with a slice)."""
    if t.is_dynamic:
        start = _uint(data, pos)
        if start > len(data):
            raise DecodeError(f"offset {start} points past the data's end ({len(data)} bytes)")
        return _tail(t, data[start:], u256=u256)
    if t.base == "tuple":
        return _tuple(t, data, pos, u256=u256)
    if t.item is not None:
        assert t.length is not None
        size = 32 * t.item.head_words
        return [decode_value(t.item, data, pos + i * size, u256=u256) for i in range(t.length)]
    return _elementary(t, _word(data, pos), u256=u256)


def _tuple(t: AbiType, data: bytes, pos: int, *, u256: U256) -> dict[str, Any]:
    """A tuple whose head starts at ``pos``: its components one after another; a dynamic component's offset counts
    from the tuple's start (``data`` begins there when the tuple is dynamic)."""
    values = {}
    for name, component in t.components:
        values[name] = decode_value(component, data, pos, u256=u256)
        pos += 32 * component.head_words
    return values


def _tail(t: AbiType, data: bytes, *, u256: U256) -> Any:
    if t.base == "tuple":
        return _tuple(t, data, 0, u256=u256)
    length = _uint(data, 0)
    if t.item is None:
        if 32 + length > len(data):
            raise DecodeError(f"a {t.base} of {length} bytes runs past the data's end")
        raw = data[32 : 32 + length]
        return raw.decode("utf-8") if t.base == "string" else raw
    if t.length is not None:  # a static-length array of dynamic items: no length word
        length, body = t.length, data
    else:
        body = data[32:]
    if length * 32 > len(body):
        raise DecodeError(f"an array of {length} items runs past the data's end")
    size = 32 * t.item.head_words
    return [decode_value(t.item, body, i * size, u256=u256) for i in range(length)]


def _elementary(t: AbiType, word: bytes, *, u256: U256) -> Any:
    if t.base == "address":
        return word[12:]
    if t.base == "bool":
        return word[31] == 1
    if t.base.startswith("bytes"):
        return word[: int(t.base[5:])]
    value = int.from_bytes(word, "big", signed=t.base.startswith("int"))
    if t.bits <= 64:
        return value
    if u256 == "binary":
        return word
    if abs(value) > _DECIMAL_MAX:
        raise ValueOutOfRange(f"{value} does not fit decimal128(38, 0); decode with u256='binary'")
    return Decimal(value)
