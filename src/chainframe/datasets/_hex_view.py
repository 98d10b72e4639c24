"""Binary columns as 0x hex and back, and wei as ether: Polars/Arrow helpers and DuckDB macros.

Columns stay binary on disk (half the size of hex text, and exact); these show them the way nodes and explorers do,
and turn ``'0x…'`` text into the binary value a filter must compare with: comparing a binary column with text finds
nothing, without an error, in DuckDB and in Polars. Wei become ether exactly (``decimal128(38, 18)``: the same integer
with 18 decimals, no division), or as Float64 where that is asked for.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import polars as pl
import pyarrow as pa

from chainframe._errors import InputError

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def _hex(expr: pl.Expr) -> pl.Expr:
    return pl.concat_str(pl.lit("0x"), expr.bin.encode("hex"))


def hex_view(frame: Frame) -> Frame:
    """``frame`` with every binary column (and list of binaries) as ``0x``-prefixed lowercase hex text."""
    schema = frame.collect_schema()
    changes = []
    for name, dtype in schema.items():
        if dtype == pl.Binary:
            changes.append(_hex(pl.col(name)).alias(name))
        elif isinstance(dtype, pl.List) and dtype.inner == pl.Binary:
            changes.append(pl.col(name).list.eval(_hex(pl.element())).alias(name))
    return frame.with_columns(changes) if changes else frame


_HEX_TEXT = re.compile(r"^0[xX]([0-9a-fA-F]{2})*$")


def hex_bytes(text: str) -> bytes:
    """``'0x…'`` text (checksummed or not) as the bytes a binary column holds: ``pl.col("address") ==
    hex_bytes("0x5FbD…")``. Refuses what is not even-length 0x hex, instead of matching nothing."""
    if not isinstance(text, str) or not _HEX_TEXT.match(text):
        raise InputError(f"{text!r} is not 0x-prefixed hex with an even number of digits")
    return bytes.fromhex(text[2:])


def wei_to_ether(values: Any, *, exact: bool = True) -> Any:
    """Wei (``decimal128(38, 0)``, as the datasets store them) as ether: exact ``decimal128(38, 18)`` (the same integer
    read with 18 decimals), or Float64 with ``exact=False``. Takes and gives an Arrow array or a Polars Series.
    (In Polars, ``decimal / 10**18`` rounds to whole ether: 8 for 7.91.)"""
    series = isinstance(values, pl.Series)
    array = values.to_arrow() if series else values
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not pa.types.is_decimal128(array.type) or array.type.scale != 0:
        raise InputError(f"wei_to_ether takes decimal128(38, 0) wei; got {array.type}")
    ether = array.cast(pa.decimal128(38, 0)).view(pa.decimal128(38, 18))
    if not exact:
        ether = ether.cast(pa.float64())
    return pl.Series(values.name, ether) if series else ether


DUCKDB_MACROS = (
    "CREATE OR REPLACE MACRO hex0x(b) AS '0x' || lower(hex(b))",
    "CREATE OR REPLACE MACRO hex0x_list(l) AS list_transform(l, lambda x: '0x' || lower(hex(x)))",
    # '0x…' text (any case) as a BLOB, to compare binary columns with: WHERE address = unhex0x('0x5FbD…')
    "CREATE OR REPLACE MACRO unhex0x(t) AS from_hex(regexp_replace(t, '^0[xX]', ''))",
    # wei as exact DECIMAL(38, 18) ether: DuckDB's decimal division gives DOUBLE, so the digits are placed instead
    "CREATE OR REPLACE MACRO ether(w) AS (CASE WHEN w < 0 THEN -1 ELSE 1 END) * ("
    "(abs(w)::HUGEINT // 1000000000000000000)::VARCHAR || '.' || "
    "lpad((abs(w)::HUGEINT % 1000000000000000000)::VARCHAR, 18, '0'))::DECIMAL(38, 18)",
)


def register_duckdb(connection: Any) -> None:
    """Define ``hex0x(blob)``, ``hex0x_list(list)``, ``unhex0x(text)`` and ``ether(wei)`` in a DuckDB connection."""
    for statement in DUCKDB_MACROS:
        connection.execute(statement)
