"""Reading binary columns as 0x hex: a Polars helper and a DuckDB macro.

Columns stay binary on disk (half the size of hex text, and exact); these show them the way nodes and explorers do.
"""

from __future__ import annotations

from typing import Any, TypeVar

import polars as pl

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


DUCKDB_MACROS = (
    "CREATE OR REPLACE MACRO hex0x(b) AS '0x' || lower(hex(b))",
    "CREATE OR REPLACE MACRO hex0x_list(l) AS list_transform(l, lambda x: '0x' || lower(hex(x)))",
    # The opposite, for filters: comparing a binary column with '0x...' text matches nothing, silently.
    "CREATE OR REPLACE MACRO unhex0x(t) AS unhex(regexp_replace(t, '^0[xX]', ''))",
)


def register_duckdb(connection: Any) -> None:
    """Define ``hex0x(blob)``, ``hex0x_list(list)`` and ``unhex0x(text)`` (text to blob) in a DuckDB connection."""
    for statement in DUCKDB_MACROS:
        connection.execute(statement)
