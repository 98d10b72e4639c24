"""Binary columns as 0x hex and back: a Polars helper and DuckDB macros (with ``ether`` for wei in DuckDB).

Columns stay binary on disk (half the size of hex text, and exact); these show them the way nodes and explorers do,
and ``unhex0x`` turns ``'0x…'`` text into the binary value a filter must compare with: comparing a binary column with
text finds nothing, without an error. In Python: :func:`chainframe.decode.binary` and
:func:`chainframe.datasets.wei_to_ether`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import polars as pl

    Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)
else:
    from chainframe._lazy import polars as pl


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
