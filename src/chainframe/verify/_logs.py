"""Logs against receipts and headers: every log of every receipt exactly once, and the block's ``logsBloom``.

Completeness uses the receipts' ``log_count`` (per transaction), duplicates the unique ``(block, log_index)``; the
bloom recomputed from the logs of a block must equal the header's, which proves the set of addresses and topics
without the receipts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from chainframe.verify._bloom import bloom
from chainframe.verify._report import Failure, Report

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


def check_log_counts(logs: pa.Table, receipts: pa.Table, report: Report) -> None:
    frame = pl.from_arrow(logs.select(["block_number", "transaction_index", "log_index"]))
    assert isinstance(frame, pl.DataFrame)
    for block, log_index, copies in (
        frame.group_by("block_number", "log_index").len().filter(pl.col("len") > 1).sort("block_number").rows()
    ):
        report.failures.append(Failure("logs", block, "log_unique", "1 row", f"{copies} rows of log_index {log_index}"))
    wanted = pl.from_arrow(receipts.select(["block_number", "transaction_index", "log_count"]))
    assert isinstance(wanted, pl.DataFrame)
    have = frame.group_by("block_number", "transaction_index").len()
    joined = wanted.join(have, on=["block_number", "transaction_index"], how="full", coalesce=True).with_columns(
        pl.col("log_count").fill_null(0), pl.col("len").fill_null(0).cast(pl.UInt64)
    )
    for block, tx, expected, actual in (
        joined.filter(pl.col("log_count") != pl.col("len"))
        .sort("block_number", "transaction_index")
        .select("block_number", "transaction_index", "log_count", "len")
        .rows()
    ):
        report.failures.append(
            Failure("logs", block, "log_count", f"{expected} logs (receipt of tx {tx})", f"{actual} logs stored")
        )
    report.count("logs", blocks=wanted["block_number"].n_unique(), rows=logs.num_rows)


def check_logs_bloom(logs: pa.Table, blocks: pa.Table, report: Report) -> None:
    per_block: dict[int, list[bytes]] = {}
    for row in logs.select(["block_number", "address", "topics"]).to_pylist():
        per_block.setdefault(row["block_number"], []).extend([row["address"], *row["topics"]])
    for number, stored in zip(blocks["block_number"].to_pylist(), blocks["logs_bloom"].to_pylist(), strict=True):
        computed = bloom(per_block.get(number, []))
        if computed != stored:
            report.failures.append(
                Failure("logs", number, "logs_bloom", "0x" + (stored or b"").hex(), "0x" + computed.hex())
            )
