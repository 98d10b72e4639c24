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
