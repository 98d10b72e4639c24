"""Logs against receipts and headers: every log of every receipt exactly once, and the block's ``logsBloom``.

Completeness uses the receipts' ``log_count`` (per transaction), duplicates the unique ``(block, log_index)``; the
bloom recomputed from the logs of a block must equal the header's, which proves the set of addresses and topics
without the receipts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from chainframe.verify._bloom import bloom
from chainframe.verify._columns import binary, binary_lists, int_values, integers, ints, sorted_by
from chainframe.verify._hashing import NATIVE
from chainframe.verify._report import Failure, Report

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


def _counts_hold(logs: pa.Table, receipts: pa.Table) -> int | None:
    """The number of blocks the receipts cover when the logs certainly pass :func:`check_log_counts` (no block and
    log index twice, each receipt's ``log_count`` the logs stored of it), from numpy over sorted columns; None when
    unsure (something differs, a null, a receipt twice), and the Polars check decides and names what differs."""
    import numpy as np

    keys = ["block_number", "transaction_index"]
    if any(logs[n].null_count for n in (*keys, "log_index")) or any(receipts[n].null_count for n in keys):
        return None
    by_index = sorted_by(logs.select(["block_number", "log_index"]), "block_number", "log_index")
    block, index = int_values(by_index["block_number"]), int_values(by_index["log_index"])
    if ((np.diff(block) == 0) & (np.diff(index) == 0)).any():
        return None
    mine = sorted_by(logs.select(keys), *keys)
    block, tx = int_values(mine["block_number"]), int_values(mine["transaction_index"])
    starts = np.flatnonzero((np.diff(block) != 0) | (np.diff(tx) != 0)) + 1 if len(block) else block
    starts = np.concatenate([[0], starts]) if len(block) else starts
    lengths = np.diff(np.append(starts, len(block)))
    theirs = sorted_by(receipts.select([*keys, "log_count"]), *keys)
    r_block, r_tx = int_values(theirs["block_number"]), int_values(theirs["transaction_index"])
    if ((np.diff(r_block) == 0) & (np.diff(r_tx) == 0)).any():
        return None  # a receipt twice: the join counts it twice
    count = int_values(theirs["log_count"])  # a null count: none, as the check reads it
    some = count != 0
    if not (
        np.array_equal(block[starts], r_block[some])
        and np.array_equal(tx[starts], r_tx[some])
        and np.array_equal(lengths, count[some])
    ):
        return None
    return int(np.count_nonzero(np.diff(r_block))) + 1 if len(r_block) else 0


def check_log_counts(logs: pa.Table, receipts: pa.Table, report: Report) -> None:
    try:
        covered = _counts_hold(logs, receipts)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a value out of int64: Polars reads it
        covered = None
    if covered is not None:
        report.count("logs", blocks=covered, rows=logs.num_rows)
        return
    frame = pl.from_arrow(logs.select(["block_number", "transaction_index", "log_index"]))
    assert isinstance(frame, pl.DataFrame)
    for block, log_index, copies in (
        frame.group_by("block_number", "log_index")
        .len()
        .filter(pl.col("len") > 1)
        .sort("block_number", "log_index")
        .rows()
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
