"""Arrow columns as the buffers ``_native.c`` reads: int64 values, binary offsets and bytes, list offsets.

Nulls are filled first (with the value the pure-Python code would encode for them), so the native code never reads a
validity bitmap; each column is one contiguous array, its slice offset passed beside its buffers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from chainframe import _kernels as pc

Ints = tuple[Any, int]
"""An int64 column: its values buffer and its array offset."""
Binary = tuple[Any, Any, int]
"""A binary column: its int32 offsets buffer, its data buffer (or ``b""``) and its array offset."""


def _array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


# Fill values and value sets are built from buffers: an Arrow scalar or array made from Python values makes pyarrow
# import pandas (0.3 s of a run that has no other use for it).


def zeros(n: int, dtype: pa.DataType) -> pa.Array:
    """``n`` zeros of a fixed-width type (integers, decimals)."""
    return pa.Array.from_buffers(dtype, n, [None, pa.py_buffer(bytes(dtype.bit_width // 8 * n))])


def integers(values: Iterable[int], dtype: pa.DataType) -> pa.Array:
    """Python integers as an Arrow array of ``dtype``."""
    from array import array

    items = array("q", values)
    return pc.cast(pa.Array.from_buffers(pa.int64(), len(items), [None, pa.py_buffer(items)]), dtype)


def _empties(n: int) -> pa.Array:
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(bytes(4 * (n + 1))), pa.py_buffer(b"")])


def ints(column: pa.Array | pa.ChunkedArray, *, null: int = 0) -> Ints:
    array = pc.cast(_array(column), pa.int64())
    if array.null_count:
        array = pc.coalesce(array, pc.constant(null, len(array), pa.int64()))
    return array.buffers()[1], array.offset


def binary(column: pa.Array | pa.ChunkedArray) -> Binary:
    array = _array(column)
    if not pa.types.is_binary(array.type):
        array = pc.cast(array, pa.binary())
    if array.null_count:  # a null slot of a cast fixed-size column still holds bytes
        array = pc.coalesce(array, _empties(len(array)))
    buffers = array.buffers()
    return buffers[1], buffers[2] if buffers[2] is not None else b"", array.offset


def lists(column: pa.Array | pa.ChunkedArray) -> pa.ListArray:
    """A list column whose null slots are empty lists (their offsets, read without the validity bitmap, hold none)."""
    array = _array(column)
    if array.null_count:
        offsets = array.offsets
        sizes = pc.subtract(offsets.slice(1), offsets.slice(0, len(offsets) - 1))
        if pc.sum(pc.filter(sizes, pc.is_null(array))).as_py():  # a null slot spans items: filled with empty lists
            none = pa.Array.from_buffers(array.type, len(array), [None, pa.py_buffer(bytes(4 * (len(array) + 1)))],
                                         children=[array.values.slice(0, 0)])  # fmt: skip
            array = pc.coalesce(array, none)
    return array


def binary_lists(column: pa.Array | pa.ChunkedArray) -> tuple[Ints, Binary]:
    """A list of binary column: its offsets (``len + 1`` of them, into the items) and its items."""
    array = lists(column)
    return ints(array.offsets), binary(array.values)


def _in_order(table: pa.Table, names: tuple[str, ...]) -> bool:
    """Whether ``table``'s integer columns ``names`` are in ascending order already, read with numpy (False: not, or
    not only integers without nulls, and sorting decides)."""
    import numpy as np

    if table.num_rows < 2:
        return True
    if not all(pa.types.is_integer(table[name].type) and not table[name].null_count for name in names):
        return False
    try:
        keys = [int_values(table[name]) for name in names]
    except pa.ArrowInvalid:  # beyond int64
        return False
    tied = np.ones(table.num_rows - 1, dtype=bool)  # the earlier keys of two neighbours are equal
    for key in keys:
        step = np.diff(key)
        if (tied & (step < 0)).any():
            return False
        tied &= step == 0
    return True


def sorted_by(table: pa.Table, *names: str) -> pa.Table:
    """``table`` sorted by ``names``, ascending, stably (ties keep their order)."""
    import numpy as np
    from pyarrow._compute import SortOptions, call_function

    if _in_order(table, names):
        return table  # sorted already, as stored files and most answers are: no sort, no copy
    order = call_function("sort_indices", [table], SortOptions([(name, "ascending") for name in names]))
    ranks = pa.Array.from_buffers(order.type, len(order), [None, pa.py_buffer(np.arange(len(order), dtype=np.uint64))])
    if pc.all(pc.equal(order, ranks)).as_py() is not False:
        return table  # sorted already, as stored files and most answers are: no copy
    return pc.take(table, order)


# Whole-column screens: which rows a check must look at in Python (the others certainly pass), with numpy and Arrow
# kernels over the columns. A screen may name rows that pass; it never leaves out one that fails.


def bools(column: pa.Array | pa.ChunkedArray) -> Any:
    """A boolean column as a numpy bool array, nulls as False (read from its bits: ``to_numpy`` imports pandas)."""
    import numpy as np

    array = _array(column)
    if array.null_count:
        array = pc.coalesce(array, pc.constant(False, len(array), pa.bool_()))
    bits = np.unpackbits(np.frombuffer(array.buffers()[1], dtype=np.uint8), bitorder="little")
    return bits[array.offset : array.offset + len(array)].astype(bool)


def int_values(column: pa.Array | pa.ChunkedArray, *, null: int = 0) -> Any:
    """An integer column as a numpy int64 array, nulls as ``null``."""
    import numpy as np

    values, offset = ints(column, null=null)
    return np.frombuffer(values, dtype=np.int64, count=len(column), offset=8 * offset)


def nulls(column: pa.Array | pa.ChunkedArray) -> Any:
    """Where ``column`` is null, as a numpy bool array."""
    import numpy as np

    if not column.null_count:
        return np.zeros(len(column), dtype=bool)
    return bools(pc.is_null(_array(column)))


def filled(column: pa.Array | pa.ChunkedArray) -> Any:
    """Where ``column`` holds a value other than null or an empty list (what a type must not have), as numpy bools."""
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        lengths = pc.list_value_length(_array(column))
        return bools(pc.greater(lengths, pc.constant(0, len(lengths), lengths.type)))  # a null list: none
    return ~nulls(column)


def words(column: pa.Array | pa.ChunkedArray, size: int) -> Any:
    """A fixed-size binary column as an ``(n, size)`` uint8 numpy array (None: not that type, or nulls in it)."""
    import numpy as np

    if column.type != pa.binary(size) or column.null_count:
        return None
    array = _array(column)
    data = np.frombuffer(array.buffers()[1], dtype=np.uint8)
    return data[size * array.offset : size * (array.offset + len(array))].reshape(len(array), size)


def differs(stored: pa.Array | pa.ChunkedArray, computed: pa.Array | pa.ChunkedArray) -> Any:
    """Where ``stored != computed`` as Python compares the values (null equal to null only), as numpy bools; None
    when the two are not of one type (the rows are then compared in Python)."""
    if stored.type != computed.type:
        return None
    left, right = _array(stored), _array(computed)
    unequal = pc.not_equal(left, right)
    if unequal.null_count:
        one_null = pc.not_equal(pc.is_null(left), pc.is_null(right))
        unequal = pc.coalesce(unequal, one_null)
    return bools(unequal)


WIDE = pa.decimal256(61, 0)
"""Wei values with room for a sum of two (Arrow's decimal128 holds 38 digits, and its sum would not fit)."""


def wide(column: pa.Array | pa.ChunkedArray) -> pa.Array | None:
    """A wei column (decimal integers, or 32-byte big-endian words: u256="binary") as decimal256 integers; None when
    it is neither, or a word is too large for them (the rows are then compared in Python)."""
    import numpy as np

    kind = column.type
    array = _array(column)
    if pa.types.is_decimal(kind) and kind.scale == 0 and kind.precision < WIDE.precision:
        return pc.cast(array, WIDE)
    if kind != pa.binary(32):
        return None
    if not len(array):
        return pa.Array.from_buffers(WIDE, 0, [None, pa.py_buffer(b"")])
    buffers = array.buffers()
    words = np.frombuffer(buffers[1], dtype=np.uint8).reshape(-1, 32)
    if words[array.offset : array.offset + len(array), :7].any():  # 2**200 and above: more than 61 digits
        return None
    little = np.ascontiguousarray(words[:, ::-1])  # decimal256 is a little-endian two's complement integer
    return pa.Array.from_buffers(WIDE, len(array), [buffers[0], pa.py_buffer(little)], offset=array.offset)


def unequal_wide(stored: pa.Array, computed: pa.Array) -> Any:
    """Where two wide columns differ, or ``stored`` is null (nulls of ``computed`` are the caller's), as numpy bools."""
    unequal = pc.not_equal(stored, computed)
    return bools(pc.coalesce(unequal, pc.is_null(stored)))


def positions(values: Any) -> pa.Array:
    """Row positions (a numpy integer array) as an Arrow int64 array, for ``take`` (from the buffer, as above)."""
    import numpy as np

    items = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(items), [None, pa.py_buffer(items)])
