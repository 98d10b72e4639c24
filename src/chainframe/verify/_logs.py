"""Logs against receipts and headers: every log of every receipt exactly once, and the block's ``logsBloom``.

Completeness uses the receipts' ``log_count`` (per transaction), duplicates the unique ``(block, log_index)``; the
bloom recomputed from the logs of a block must equal the header's, which proves the set of addresses and topics
without the receipts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from chainframe.verify._bloom import bloom
from chainframe.verify._columns import binary, binary_lists, integers, ints
from chainframe.verify._hashing import NATIVE
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


def _python_blooms(logs: pa.Table, numbers: list[int]) -> dict[int, bytes]:
    """Each block's bloom from its logs' addresses and topics, in Python (the reference of :func:`_native_blooms`)."""
    per_block: dict[int, list[bytes]] = {}
    for row in logs.select(["block_number", "address", "topics"]).to_pylist():
        per_block.setdefault(row["block_number"], []).extend([row["address"], *row["topics"]])
    return {number: bloom(per_block.get(number, [])) for number in numbers}


def _native_blooms(logs: pa.Table, numbers: list[int]) -> dict[int, bytes]:
    """Each block's bloom computed in C from the columns: each distinct address and topic hashed once."""
    from pyarrow._compute import SetLookupOptions, call_function

    distinct = list(dict.fromkeys(numbers))
    column = logs["block_number"]
    value_set = integers(distinct, column.type)
    group = call_function("index_in", [column], SetLookupOptions(value_set=value_set))  # null: not one of them
    topic_offsets, topics = binary_lists(logs["topics"])
    found = NATIVE.blooms(
        len(distinct), logs.num_rows, ints(group, null=-1), binary(logs["address"]), topic_offsets, topics
    )
    return {number: found[256 * i : 256 * (i + 1)] for i, number in enumerate(distinct)}


def check_logs_bloom(logs: pa.Table, blocks: pa.Table, report: Report) -> None:
    numbers = blocks["block_number"].to_pylist()
    computed_by_block = (_native_blooms if NATIVE is not None else _python_blooms)(logs, numbers)
    for number, stored in zip(numbers, blocks["logs_bloom"].to_pylist(), strict=True):
        computed = computed_by_block[number]
        if computed != stored:
            report.failures.append(
                Failure("logs", number, "logs_bloom", "0x" + (stored or b"").hex(), "0x" + computed.hex())
            )
