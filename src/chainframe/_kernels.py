"""The Arrow compute kernels chainframe uses, called by name, with pyarrow.compute's names and defaults.

``import pyarrow.compute`` builds a Python wrapper, with its docstring, for each of Arrow's ~600 kernels: 39 ms of
every run's start-up here (more than half of ``import pyarrow`` itself), for the ~25 kernels we call. These call the
same kernels through ``pyarrow._compute.call_function``, which costs 5 ms to import. Arrow's own ``Array.cast``,
``.filter``, ``.take``, ``ListArray.flatten`` and ``Table.cast`` import pyarrow.compute on first use, so chainframe
calls the functions here instead (``tests/engine/test_startup.py`` fails if a run loads pyarrow.compute).

Import as ``from chainframe import _kernels as pc``: the names and their meaning are pyarrow.compute's.
"""

from __future__ import annotations

import sys
from typing import Any

import pyarrow as pa
from pyarrow._compute import CastOptions, SetLookupOptions, call_function

Datum = Any
"""An Array, ChunkedArray, Scalar, RecordBatch or Table (pyarrow ships no types)."""


def add(x: Datum, y: Datum) -> Datum:
    return call_function("add", [x, y])


def subtract(x: Datum, y: Datum) -> Datum:
    return call_function("subtract", [x, y])


def equal(x: Datum, y: Datum) -> Datum:
    return call_function("equal", [x, y])


def not_equal(x: Datum, y: Datum) -> Datum:
    return call_function("not_equal", [x, y])


def greater(x: Datum, y: Datum) -> Datum:
    return call_function("greater", [x, y])


def greater_equal(x: Datum, y: Datum) -> Datum:
    return call_function("greater_equal", [x, y])


def less_equal(x: Datum, y: Datum) -> Datum:
    return call_function("less_equal", [x, y])


def and_(x: Datum, y: Datum) -> Datum:
    return call_function("and", [x, y])


def or_(x: Datum, y: Datum) -> Datum:
    return call_function("or", [x, y])


def is_null(x: Datum) -> Datum:
    return call_function("is_null", [x])


def if_else(cond: Datum, left: Datum, right: Datum) -> Datum:
    return call_function("if_else", [cond, left, right])


def coalesce(*values: Datum) -> Datum:
    return call_function("coalesce", list(values))


def is_in(values: Datum, *, value_set: pa.Array) -> Datum:
    return call_function("is_in", [values], SetLookupOptions(value_set=value_set))


def sum(values: Datum) -> pa.Scalar:
    return call_function("sum", [values])


def all(values: Datum) -> pa.Scalar:
    return call_function("all", [values])


def any(values: Datum) -> pa.Scalar:
    return call_function("any", [values])


def min_max(values: Datum) -> pa.StructScalar:
    return call_function("min_max", [values])


def valid_rows(values: pa.Array) -> Any:
    """Which rows of ``values`` are not null: a numpy bool array, its validity bitmap unpacked. (Arrow's own
    ``to_numpy`` of a boolean array loads pandas.)"""
    import numpy as np  # here, not above: a plain extraction loads no numpy (tests/cli/test_process.py)

    bitmap = values.buffers()[0]
    if bitmap is None or not values.null_count:  # no nulls, or (a null-typed array, no bitmap) all null
        return np.full(len(values), not values.null_count)
    bits = np.unpackbits(np.frombuffer(bitmap, np.uint8), bitorder="little")
    return bits[values.offset : values.offset + len(values)].astype(bool)


def list_value_length(lists: Datum) -> Datum:
    return call_function("list_value_length", [lists])


def list_flatten(lists: Datum) -> Datum:
    """The items of ``lists``, one level down (a null list's items left out), as ``ListArray.flatten()``."""
    return call_function("list_flatten", [lists])


def list_parent_indices(lists: Datum) -> Datum:
    return call_function("list_parent_indices", [lists])


def sort_indices(values: Datum) -> pa.Array:
    """Indices that sort ``values`` ascending, stably."""
    return call_function("sort_indices", [values])


def take(data: Datum, indices: Datum) -> Datum:
    """Rows of an Array, ChunkedArray, RecordBatch or Table at ``indices`` (a null index gives a null row)."""
    return call_function("take", [data, indices])


def filter(data: Datum, mask: Datum) -> Datum:
    """Rows of an Array, ChunkedArray, RecordBatch or Table where ``mask`` is true (null drops the row)."""
    return call_function("filter", [data, mask])


def cast(values: Datum, target: pa.DataType) -> Datum:
    """``values`` as ``target``, refusing a lossy cast (an overflow, a truncation) as pyarrow.compute's does."""
    if values.type == target:
        return values
    return call_function("cast", [values], CastOptions.safe(target))


def cast_table(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s names and types (each column cast safely), as ``Table.cast`` does."""
    if table.schema.names != schema.names:
        raise ValueError(f"the table's columns {table.schema.names} are not the schema's {schema.names}")
    columns = [cast(column, field.type) for column, field in zip(table.columns, schema, strict=True)]
    return pa.Table.from_arrays(columns, schema=schema)


def constant(value: Any, n: int, dtype: pa.DataType) -> pa.Array:
    """``value`` ``n`` times. Integers, booleans and fixed-size bytes (a hash) are built as one buffer: pa.repeat
    cost 0.1 s per 312,000 rows, and a Python value made into an Arrow scalar makes pyarrow import pandas (0.3 s)
    where it is installed."""
    if pa.types.is_boolean(dtype) and isinstance(value, bool):
        return pa.Array.from_buffers(dtype, n, [None, pa.py_buffer((b"\xff" if value else b"\x00") * ((n + 7) // 8))])
    if pa.types.is_integer(dtype) and isinstance(value, int):
        signed = pa.types.is_signed_integer(dtype)
        item = value.to_bytes(dtype.bit_width // 8, sys.byteorder, signed=signed)
        return pa.Array.from_buffers(dtype, n, [None, pa.py_buffer(item * n)])
    if pa.types.is_fixed_size_binary(dtype) and isinstance(value, bytes) and len(value) == dtype.byte_width:
        return pa.Array.from_buffers(dtype, n, [None, pa.py_buffer(value * n)])
    return pa.repeat(pa.scalar(value, dtype), n)


def empty_table(schema: pa.Schema) -> pa.Table:
    """No rows of ``schema``: ``schema.empty_table()`` makes pyarrow import pandas (0.3 s) where it is installed, in
    every run that writes a chunk with no rows (a function no block of it calls)."""
    return pa.Table.from_arrays([pa.nulls(0, field.type) for field in schema], schema=schema)
