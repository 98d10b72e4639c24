"""``receiptsRoot`` from the receipts and their logs: status (or the pre-Byzantium state root), cumulative gas,
bloom and logs of each receipt, typed receipts prefixed with their type (EIP-2718)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from chainframe.verify._hashing import RlpItem, rlp, uint
from chainframe.verify._report import Failure, Report
from chainframe.verify._trie import ordered_root

# Receipt types whose encoding is not Ethereum's (OP Stack deposits carry deposit nonce and version).
FOREIGN_TYPES = frozenset(range(0x7E, 0x100))


def receipt_bytes(receipt: dict[str, Any], logs: list[dict[str, Any]]) -> bytes:
    outcome = receipt["root"] if receipt["status"] is None else uint(receipt["status"])
    body: list[RlpItem] = [
        outcome,
        uint(receipt["cumulative_gas_used"]),
        receipt["logs_bloom"],
        [[log["address"], list(log["topics"]), log["data"]] for log in logs],
    ]
    kind = receipt["transaction_type"] or 0
    return rlp(body) if kind == 0 else bytes([kind]) + rlp(body)


def check_receipts_roots(receipts: pa.Table, logs: pa.Table, blocks: pa.Table, report: Report) -> None:
    by_tx: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for log in logs.select(["block_number", "transaction_index", "log_index", "address", "topics", "data"]).to_pylist():
        by_tx.setdefault((log["block_number"], log["transaction_index"]), []).append(log)
    by_block: dict[int, list[dict[str, Any]]] = {}
    names = ["block_number", "transaction_index", "transaction_type", "status", "root", "cumulative_gas_used",
             "logs_bloom"]  # fmt: skip
    for receipt in receipts.select(names).to_pylist():
        by_block.setdefault(receipt["block_number"], []).append(receipt)
    foreign = 0
    for number, stored in zip(blocks["block_number"].to_pylist(), blocks["receipts_root"].to_pylist(), strict=True):
        rows = sorted(by_block.get(number, []), key=lambda r: r["transaction_index"])
        if any((r["transaction_type"] or 0) in FOREIGN_TYPES for r in rows):
            foreign += 1
            continue
        encoded = [
            receipt_bytes(r, sorted(by_tx.get((number, r["transaction_index"]), []), key=lambda x: x["log_index"]))
            for r in rows
        ]
        computed = ordered_root(encoded)
        if computed != stored:
            report.failures.append(
                Failure("receipts", number, "receipts_root", "0x" + (stored or b"").hex(), "0x" + computed.hex())
            )
    report.skip("receipts", "receipts_root", "deposit (type 0x7e+) receipts do not encode the Ethereum way",
                blocks=foreign)  # fmt: skip


def check_receipt_gas(receipts: pa.Table, blocks: pa.Table, report: Report) -> None:
    """``gasUsed`` is not in the receipt's encoding, so the root cannot prove it; it must be the step in cumulative gas
    from the receipt before, and the last receipt's cumulative gas the header's ``gasUsed``."""
    import polars as pl

    frame = pl.DataFrame(pl.from_arrow(receipts.select(["block_number", "transaction_index", "gas_used",
                                                         "cumulative_gas_used"])))  # fmt: skip
    step = pl.col("cumulative_gas_used") - pl.col("cumulative_gas_used").shift(1, fill_value=0).over("block_number")
    wrong = frame.sort("block_number", "transaction_index").filter(pl.col("gas_used") != step)
    for number, index, used, cumulative in wrong.head(10).rows():
        report.failures.append(
            Failure("receipts", number, "gas_used", f"cumulative {cumulative} (transaction {index})", f"{used} used")
        )
    last = frame.group_by("block_number").agg(pl.col("cumulative_gas_used").max().alias("receipts_gas"))
    headers = pl.DataFrame(pl.from_arrow(blocks.select(["block_number", "gas_used"])))
    joined = headers.join(last, on="block_number", how="left").with_columns(pl.col("receipts_gas").fill_null(0))
    for number, header_gas, receipts_gas in joined.filter(pl.col("gas_used") != pl.col("receipts_gas")).rows():
        report.failures.append(
            Failure("receipts", number, "block_gas_used", f"{header_gas} in the header", f"{receipts_gas} in receipts")
        )
