"""Rows that must be exactly the proven ones: a series made of logs (filtered, decoded, token transfers) against the
proven logs its filter matches, and any rows against rows computed again from proven inputs.

Compared column by column in Arrow first (rows nearly always come in the same order, and equal); only a table that
differs is joined in Polars, to name the first rows that differ: a row stored that the proof has not (``a row at``), a
row the proof has that is not stored (``no row at``), or the column whose value differs, with both values.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe.datasets import U256, Dataset, matches_filter
from chainframe.verify._columns import sorted_by
from chainframe.verify._report import Failure, Report

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

SHOWN = 3
"""Differing rows named per check."""


def check_log_set(
    dataset: Dataset,
    rows: pa.Table,
    logs: pa.Table,
    filters: Mapping[str, Any],
    report: Report,
    *,
    u256: U256 = "decimal",
    leave: Collection[str] = (),
    name: str | None = None,
) -> None:
    """``rows`` of a :attr:`~chainframe.datasets.Fetch.LOGS` dataset are exactly what it makes of the proven ``logs``
    its filter matches (none dropped, added or changed): their decoded columns (``event=``), the token transfers; rows
    that are logs still (an extraction proves its logs before it makes them into rows) are compared as logs.
    ``leave``: columns the proven logs do not carry (a receipt's logs have no timestamp)."""
    log_filter = dataset.log_filter(filters)
    if log_filter.get("address") or log_filter.get("topics"):
        frame = pl.DataFrame(pl.from_arrow(logs.select(["address", "topics"])))
        logs = logs.filter(pa.array(frame.select(matches_filter(log_filter)).to_series().to_arrow()))
    made = any(c not in logs.column_names for c in rows.column_names)
    want = dataset.from_logs(logs, filters, u256=u256) if made else logs
    key = list(dataset.sort) if made else ["block_number", "log_index"]
    values = [c for c in want.column_names if c in rows.column_names and c not in key and c not in leave]
    check_same_rows(name or dataset.name, "log_set", rows.select(key + values), want.select(key + values), key, report)


def check_same_rows(dataset: str, check: str, rows: pa.Table, want: pa.Table, key: list[str], report: Report) -> None:
    """``rows`` equal to the proven ``want``, matched by ``key``: the first differences as failures of ``check``."""
    if _equal(rows, want, key):
        return
    have, expected = pl.DataFrame(pl.from_arrow(rows)), pl.DataFrame(pl.from_arrow(want))
    values = [c for c in have.columns if c not in key]
    joined = expected.join(have, on=key, how="full", suffix="_kept", coalesce=True)
    present = pl.col(values[0]).is_not_null() if values else pl.lit(True)
    kept = pl.col(f"{values[0]}_kept").is_not_null() if values else pl.lit(True)
    differ = pl.any_horizontal([pl.col(c).ne_missing(pl.col(f"{c}_kept")) for c in values]) if values else pl.lit(False)
    bad = joined.with_columns(present.alias("__want"), kept.alias("__have")).filter(differ)
    where = " ".join(f"{k} {{{k}}}" for k in key[1:])
    for row in bad.sort(key).head(SHOWN).iter_rows(named=True):
        at = where.format(**row)
        if not row["__want"]:
            stored, proven = f"a row at {at}", "no such row"
        elif not row["__have"]:
            stored, proven = f"no row at {at}", f"a row at {at}"
        else:
            column = next(c for c in values if row[c] != row[f"{c}_kept"])
            stored, proven = f"{at} {column} {_shown(row[f'{column}_kept'])}", _shown(row[column])
        report.failures.append(Failure(dataset, row["block_number"], check, stored, proven))


def _equal(rows: pa.Table, want: pa.Table, key: list[str]) -> bool:
    """The same rows in the same order of ``key``, column by column in Arrow."""
    if rows.num_rows != want.num_rows or rows.column_names != want.column_names:
        return False
    rows, want = sorted_by(rows, *key), sorted_by(want, *key)
    return all(rows[c].equals(want[c]) for c in rows.column_names)


def _shown(value: Any) -> str:
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return str(value)
