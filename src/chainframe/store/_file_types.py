"""How chainframe's exact column types are held in a Delta table's data files, and given back by its readers.

A Delta table declares no unsigned integers (:func:`~chainframe.store.delta_schema`: ``uint64`` -> ``long``), and a
Delta reader holds each file to the declared types: Polars' ``scan_delta`` refuses a ``uint64`` file column under a
declared ``long`` (it takes widening casts only), and a pyarrow dataset's safe cast fails on a value >= 2^63 (an
EIP-7702 authorization's nonce can be one). So a Delta data file holds every ``uint64``, at any depth (struct
fields, list items), as ``int64`` with the same 64 bits (a value >= 2^63 reads as negative there), and keeps the exact
Arrow types of the columns it holds so under :data:`KEY` in its footer (an IPC-serialized schema, base64). Every
other type is held as is: Delta readers widen ``uint8/16/32``, fixed-size binaries and second timestamps themselves.

chainframe's readers give the exact types back from that key: :func:`restore` for pyarrow tables and batches,
:func:`polars_restore` for a lazy Polars scan, :func:`sql_columns` and :func:`sql_select` for DuckDB. A file without
the key (a plain folder's chunk, or any Parquet file) already holds its exact types. Only the reinterpretation of the
same 64 bits is used, never a checked cast: the values come back exactly, whatever their size.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

KEY = b"chainframe.exact_types"
"""Footer key of a Delta data file: the exact Arrow types of the columns it holds in other types."""
_U64_MASK = 2**64 - 1

Data = TypeVar("Data", pa.Table, pa.RecordBatch)


# --- writing ---------------------------------------------------------------------------------------------------------


def file_schema(schema: pa.Schema) -> pa.Schema:
    """The schema a Delta data file holds for rows of ``schema``: every ``uint64`` at any depth as ``int64``."""
    return pa.schema([f.with_type(_held(f.type)) for f in schema], metadata=schema.metadata)


def _held(dtype: pa.DataType) -> pa.DataType:
    if pa.types.is_uint64(dtype):
        return pa.int64()
    if pa.types.is_list(dtype):
        return pa.list_(dtype.value_field.with_type(_held(dtype.value_type)))
    if pa.types.is_large_list(dtype):
        return pa.large_list(dtype.value_field.with_type(_held(dtype.value_type)))
    if pa.types.is_fixed_size_list(dtype):
        return pa.list_(dtype.value_field.with_type(_held(dtype.value_type)), dtype.list_size)
    if pa.types.is_struct(dtype):
        return pa.struct([f.with_type(_held(f.type)) for f in dtype])
    return dtype


def held_metadata(schema: pa.Schema) -> dict[bytes, bytes]:
    """The footer entry recording the exact types of the columns of ``schema`` a Delta data file holds in others
    (none: an empty dict)."""
    changed = pa.schema([f for f in schema if _held(f.type) != f.type])
    return {KEY: base64.b64encode(changed.serialize().to_pybytes())} if len(changed) else {}


def to_file(data: Data, schema: pa.Schema) -> Data:
    """``data`` (in exact types) as a file of ``schema`` (:func:`file_schema`) holds it: the same bits reinterpreted."""
    return data if data.schema.equals(schema) else data.cast(schema, safe=False)


# --- reading ---------------------------------------------------------------------------------------------------------


def exact_types(metadata: Mapping[bytes, bytes] | None) -> pa.Schema | None:
    """The exact types a file's footer ``metadata`` records for the columns it holds in others (None: it holds every
    column in its exact type)."""
    text = (metadata or {}).get(KEY)
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text))) if text else None


def restore(data: Data, metadata: Mapping[bytes, bytes] | None) -> Data:
    """``data`` read from a file whose footer holds ``metadata``, with its columns in their exact types (any subset
    of the file's columns; the schema's own metadata kept)."""
    types = exact_types(metadata)
    if types is None:
        return data
    target = pa.schema(
        [f.with_type(types.field(f.name).type) if f.name in types.names else f for f in data.schema],
        metadata=data.schema.metadata,
    )
    return to_file(data, target)  # int64 -> uint64 with safe=False: the same 64 bits again


def polars_restore(types: pa.Schema | None) -> list[pl.Expr]:
    """Polars expressions giving a scan of such files its exact types: a cast that wraps (two's complement, at any
    depth), never a checked one (which would fail or null a value >= 2^63)."""
    if types is None:
        return []
    exact = pl.DataFrame(types.empty_table()).schema
    return [pl.col(name).cast(dtype, wrap_numerical=True) for name, dtype in exact.items()]


def sql_columns(types: pa.Schema | None) -> dict[str, str]:
    """DuckDB select items (``expression AS "name"``) giving each column of ``types`` its exact type from the type a
    Delta data file holds it in."""
    out = {}
    for exact in types or ():
        name = _quoted(exact.name)
        expression = _sql(name, exact.type, depth=0)
        if expression is not None:
            out[exact.name] = f"{expression} AS {name}"
    return out


def sql_select(types: pa.Schema | None) -> str:
    """A DuckDB select list over such a file's columns, in their exact types: ``*``, or ``* REPLACE (...)``."""
    columns = sql_columns(types)
    return "* REPLACE (" + ", ".join(columns.values()) + ")" if columns else "*"


def _sql(value: str, exact: pa.DataType, *, depth: int) -> str | None:
    """``value``, as a file holds a value of type ``exact``, in that type; None when the file holds it as is."""
    if _held(exact) == exact:
        return None
    if pa.types.is_uint64(exact):
        return f"({value}::HUGEINT & {_U64_MASK})::UBIGINT"  # the same 64 bits, read unsigned
    if pa.types.is_struct(exact):
        parts = []
        for field in exact:
            inner = "struct_extract(" + value + ", '" + field.name.replace("'", "''") + "')"
            parts.append(f"{_quoted(field.name)} := {_sql(inner, field.type, depth=depth) or inner}")
        # struct_pack of a null struct would be a struct of nulls
        return f"CASE WHEN {value} IS NULL THEN NULL ELSE struct_pack({', '.join(parts)}) END"
    item = f"x{depth}"  # a list's items (nested lists each name theirs)
    return f"list_transform({value}, lambda {item}: {_sql(item, exact.value_type, depth=depth + 1) or item})"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
