"""``receiptsRoot`` from the receipts and their logs: status (or the pre-Byzantium state root), cumulative gas,
bloom and logs of each receipt, typed receipts prefixed with their type (EIP-2718)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.families import ETHEREUM, ChainFamily
from chainframe.verify._columns import binary, binary_lists, int_values, ints, sorted_by
from chainframe.verify._hashing import NATIVE, RlpItem, rlp, uint
from chainframe.verify._report import Failure, Report
from chainframe.verify._trie import EMPTY_ROOT, ordered_root

# Receipt types whose encoding is not Ethereum's (OP Stack deposits carry deposit nonce and version).
FOREIGN_TYPES = frozenset(range(0x7E, 0x100))
NAMES = ["block_number", "transaction_index", "transaction_type", "status", "root", "cumulative_gas_used", "logs_bloom"]


def receipt_bytes(receipt: dict[str, Any], logs: list[dict[str, Any]], *, zero_byte: bool = False) -> bytes:
    """``zero_byte``: a failed status encoded as the byte 0x00, as Ganache's receipts trie has it (the spec: empty)."""
    outcome = (receipt["root"] or b"") if receipt["status"] is None else uint(receipt["status"])
    if zero_byte and receipt["status"] == 0:
        outcome = b"\x00"
    body: list[RlpItem] = [
        outcome,
        uint(receipt["cumulative_gas_used"]),
        receipt["logs_bloom"],
        [[log["address"], list(log["topics"]), log["data"]] for log in logs],
    ]
    kind = receipt["transaction_type"] or 0
    return rlp(body) if kind == 0 else bytes([kind]) + rlp(body)


def _python_roots(receipts: pa.Table, logs: pa.Table, *, zero_byte: bool = False) -> dict[int, bytes]:
    """Each block's receipts root, receipt by receipt in Python (the reference of :func:`_native_roots`)."""
    by_tx: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for log in logs.select(["block_number", "transaction_index", "log_index", "address", "topics", "data"]).to_pylist():
        by_tx.setdefault((log["block_number"], log["transaction_index"]), []).append(log)
    by_block: dict[int, list[dict[str, Any]]] = {}
    for receipt in receipts.select(NAMES).to_pylist():
        by_block.setdefault(receipt["block_number"], []).append(receipt)
    roots = {}
    for number, rows in by_block.items():
        rows = sorted(rows, key=lambda r: r["transaction_index"])
        encoded = [
            receipt_bytes(
                r,
                sorted(by_tx.get((number, r["transaction_index"]), []), key=lambda x: x["log_index"]),
                zero_byte=zero_byte,
            )
            for r in rows
        ]
        roots[number] = ordered_root(encoded)
    return roots


def _native_roots(receipts: pa.Table, logs: pa.Table) -> dict[int, bytes]:
    """Each block's receipts root, encoded and hashed in C from the columns (sorted here by block and index)."""
    receipts = sorted_by(receipts.select(NAMES), "block_number", "transaction_index")
    logs = sorted_by(logs.select(["block_number", "transaction_index", "log_index", "address", "topics", "data"]),
                     "block_number", "transaction_index", "log_index")  # fmt: skip
    topic_offsets, topics = binary_lists(logs["topics"])
    found = NATIVE.receipts_roots(
        receipts.num_rows, logs.num_rows,
        ints(receipts["block_number"]), ints(receipts["transaction_index"]), ints(receipts["transaction_type"]),
        ints(receipts["status"], null=-1), binary(receipts["root"]), ints(receipts["cumulative_gas_used"]),
        binary(receipts["logs_bloom"]),
        ints(logs["block_number"]), ints(logs["transaction_index"]), binary(logs["address"]), topic_offsets, topics,
        binary(logs["data"]),
    )  # fmt: skip
    return dict(found)


def _log_items(logs: pa.Table, numbers: set[int]) -> dict[tuple[int, int], list[RlpItem]]:
    """The logs of the blocks ``numbers`` as their receipts' RLP items, by block and transaction index, in order."""
    value_set = pa.array(sorted(numbers), logs.schema.field("block_number").type)
    mine = pc.filter(logs, pc.is_in(logs["block_number"], value_set=value_set))
    names = ["block_number", "transaction_index", "log_index", "address", "topics", "data"]
    by_tx: dict[tuple[int, int], list[RlpItem]] = {}
    for log in sorted(mine.select(names).to_pylist(), key=lambda x: (x["block_number"], x["log_index"])):
        by_tx.setdefault((log["block_number"], log["transaction_index"]), []).append(
            [log["address"], list(log["topics"]), log["data"]]
        )
    return by_tx


def _family_roots(
    receipts: pa.Table, logs: pa.Table, blocks: pa.Table, numbers: set[int], family: ChainFamily, chain_id: int | None
) -> dict[int, bytes | str]:
    """The receipts root of each block of ``numbers`` (which hold a receipt type ``family`` encodes its own way),
    receipt by receipt in Python; or why it cannot be rebuilt from what is stored (a column its encoding reads is not
    there), or names the row that cannot be the chain's receipt (a field its encoding reads is null)."""
    value_set = pa.array(sorted(numbers), receipts.schema.field("block_number").type)
    mine = pc.filter(receipts, pc.is_in(receipts["block_number"], value_set=value_set))
    times = dict(zip(blocks["block_number"].to_pylist(), blocks["timestamp"].to_pylist(), strict=True))
    items = _log_items(logs, numbers)
    rows: dict[int, list[dict[str, Any]]] = {}
    for row in mine.to_pylist():
        rows.setdefault(row["block_number"], []).append(row)
    roots: dict[int, bytes | str] = {}
    for number, block in rows.items():
        encoded = []
        for receipt in sorted(block, key=lambda r: r["transaction_index"]):
            own = family.receipt_types.get(receipt["transaction_type"] or 0)
            logs_of = items.get((number, receipt["transaction_index"]), [])
            if own is None:
                encoded.append(receipt_bytes(receipt, [{"address": a, "topics": t, "data": d}
                                                       for a, t, d in logs_of]))  # fmt: skip
                continue
            needs = own.needs(times[number], chain_id)
            absent = [name for name in needs if name not in receipt]
            if absent:
                roots[number] = f"{', '.join(absent)} not stored"
                break
            missing = [name for name in needs if receipt[name] is None]
            if missing:
                roots[number] = f"transaction_index {receipt['transaction_index']} missing {', '.join(missing)}"
                break
            encoded.append(own.encode(receipt, logs_of, times[number], chain_id))
        else:
            roots[number] = ordered_root(encoded)
    return roots


def check_receipts_roots(
    receipts: pa.Table,
    logs: pa.Table,
    blocks: pa.Table,
    report: Report,
    *,
    family: ChainFamily = ETHEREUM,
    chain_id: int | None = None,
) -> None:
    """Each block's ``receiptsRoot`` from its receipts and logs; a receipt type ``family`` declares is encoded as it
    says (at the block's hardfork), one of 0x7e and above that it does not is skipped with its block's root."""
    numbers, kinds = receipts["block_number"].to_pylist(), receipts["transaction_type"].to_pylist()
    own_blocks = {number for number, kind in zip(numbers, kinds, strict=True) if (kind or 0) in family.receipt_types}
    foreign_blocks = {number for number, kind in zip(numbers, kinds, strict=True)
                      if (kind or 0) in FOREIGN_TYPES and (kind or 0) not in family.receipt_types}  # fmt: skip
    own_blocks -= foreign_blocks
    roots: dict[int, bytes | str] = dict((_native_roots if NATIVE is not None else _python_roots)(receipts, logs))
    if own_blocks and "timestamp" in blocks.column_names:
        roots.update(_family_roots(receipts, logs, blocks, own_blocks, family, chain_id))
    elif own_blocks:
        foreign_blocks |= own_blocks  # no block times: which hardfork encodes them is not known
    foreign = 0
    unstored: dict[str, int] = {}
    wrong: dict[int, tuple[bytes, bytes]] = {}
    for number, stored in zip(blocks["block_number"].to_pylist(), blocks["receipts_root"].to_pylist(), strict=True):
        if number in foreign_blocks:
            foreign += 1
            continue
        computed = roots.get(number, EMPTY_ROOT)
        if isinstance(computed, str) and computed.endswith(" not stored"):
            unstored[computed] = unstored.get(computed, 0) + 1
            continue
        if isinstance(computed, str):
            report.failures.append(Failure("receipts", number, "receipts_root", "0x" + (stored or b"").hex(), computed))
            continue
        if computed != stored:
            wrong[number] = (stored or b"", computed)
    for number in _ganache_roots(receipts, logs, wrong, report):
        del wrong[number]
    for number, (stored, computed) in wrong.items():
        report.failures.append(Failure("receipts", number, "receipts_root", "0x" + stored.hex(), "0x" + computed.hex()))
    report.skip("receipts", "receipts_root", "deposit (type 0x7e+) receipts do not encode the Ethereum way",
                blocks=foreign)  # fmt: skip
    for why, count in unstored.items():
        report.skip("receipts", "receipts_root", f"the {family.name} family's receipts read {why}", blocks=count)


GANACHE_ZERO_STATUS = (
    "receipts_root: the node's headers commit to a failed status encoded as the byte 0x00, not as empty bytes "
    "(Ganache's receipts trie); proven with that encoding, which reads the same fields, so a changed value still fails"
)


def _ganache_roots(
    receipts: pa.Table, logs: pa.Table, wrong: dict[int, tuple[bytes, bytes]], report: Report
) -> list[int]:
    """The blocks of ``wrong`` (block -> header root, computed root) with a failed receipt whose header root is the one
    a failed status encoded as 0x00 gives (Ganache's own encoding): proven so, and said in ``report.notes``. That
    encoding is as injective as the spec's (a status of 1 is 0x01 in both), so it proves the same stored values."""
    if not wrong:
        return []  # the common case: no column read
    failed = {n for n, status in zip(receipts["block_number"].to_pylist(), receipts["status"].to_pylist(),
                                     strict=True) if status == 0 and n in wrong}  # fmt: skip
    if not failed:
        return []
    value_set = pa.array(sorted(failed), receipts.schema.field("block_number").type)
    mine = pc.filter(receipts, pc.is_in(receipts["block_number"], value_set=value_set))
    theirs = pc.filter(logs, pc.is_in(logs["block_number"], value_set=value_set))
    roots = _python_roots(mine, theirs, zero_byte=True)
    proven = sorted(n for n in failed if roots.get(n) == wrong[n][0])
    report.note("receipts", GANACHE_ZERO_STATUS, blocks=len(proven))
    return proven


def check_receipt_outcomes(receipts: pa.Table, report: Report) -> None:
    """A receipt holds its outcome as a status (Byzantium on) or as the state root after it (before), never both and
    never neither: the root is built from the status when there is one, so a root stored beside it is proven by
    nothing and would pass unseen."""
    status, root = receipts["status"], receipts["root"]
    if status.null_count == 0 and root.null_count == len(root):  # every receipt has a status and no root: Byzantium on
        return
    import polars as pl  # not imported by a run whose receipts all hold (it costs 0.4 s)

    frame = pl.DataFrame(pl.from_arrow(receipts.select(["block_number", "transaction_index", "status", "root"])))
    both = pl.col("status").is_not_null() & pl.col("root").is_not_null()
    neither = pl.col("status").is_null() & pl.col("root").is_null()
    bad = frame.filter(both | neither).sort("block_number", "transaction_index")
    for number, index, status, root in bad.head(10).rows():
        at = f"transaction_index {index}"
        if status is None:
            check, stored, computed = "status", f"{at} status null, root null", "a status or a state root"
        else:
            check, stored = "root", f"{at} root 0x{bytes(root).hex()} beside status {status}"
            computed = "no root: a receipt with a status has none"
        report.failures.append(Failure("receipts", number, check, stored, computed, row=at))


def _gas_holds(receipts: pa.Table, blocks: pa.Table) -> bool:
    """Whether :func:`check_receipt_gas` certainly finds nothing, from numpy over the receipts sorted by block and
    index (False when unsure: a null, an index twice, a step or a block's gas that differs)."""
    import numpy as np

    names = ["block_number", "transaction_index", "gas_used", "cumulative_gas_used"]
    if any(receipts[n].null_count for n in names) or any(blocks[n].null_count for n in ("block_number", "gas_used")):
        return False
    table = sorted_by(receipts.select(names), "block_number", "transaction_index")
    block, index = int_values(table["block_number"]), int_values(table["transaction_index"])
    used, cumulative = int_values(table["gas_used"]), int_values(table["cumulative_gas_used"])
    headers, header_gas = int_values(blocks["block_number"]), int_values(blocks["gas_used"])
    if not len(block):
        return not bool(header_gas.any())
    same = np.diff(block) == 0
    if (same & (np.diff(index) == 0)).any():
        return False
    before = np.concatenate([[0], np.where(same, cumulative[:-1], 0)])
    if not np.array_equal(used, cumulative - before):
        return False
    starts = np.concatenate([[0], np.flatnonzero(~same) + 1])
    numbers, most = block[starts], np.maximum.reduceat(cumulative, starts)
    at = np.minimum(np.searchsorted(numbers, headers), len(numbers) - 1)
    return bool(np.array_equal(np.where(numbers[at] == headers, most[at], 0), header_gas))


def check_receipt_gas(receipts: pa.Table, blocks: pa.Table, report: Report) -> None:
    """``gasUsed`` is not in the receipt's encoding, so the root cannot prove it; it must be the step in cumulative gas
    from the receipt before, and the last receipt's cumulative gas the header's ``gasUsed``."""
    try:
        if _gas_holds(receipts, blocks):
            return
    except pa.ArrowInvalid:  # a value beyond int64: Polars reads it
        pass
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
