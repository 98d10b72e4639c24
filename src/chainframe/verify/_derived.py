"""Columns no root or hash commits to, proven by derivation from proven ones (issue 26.2).

- every row's ``block_hash``, ``block_timestamp`` and ``block_time`` are its proven header's, ``chain_id`` the chain's;
- a block's ``block_time`` is its ``timestamp``, ``transaction_count`` the length of ``transaction_hashes``, which are
  the proven transactions' hashes; ``uncles`` is empty when ``sha3_uncles`` is the empty list's hash, else the proven
  uncles' hashes;
- a block's transactions and receipts are at indexes 0..n-1 (the roots are built in index order, so an index moved
  without changing the order would pass them), its logs at log indexes 0..n-1 in transaction order, none ``removed``;
- a transaction's fields outside its type's encoding: ``gas_price`` of a fee-market transaction is what it paid, a
  legacy transaction's chain id and parity are in its ``v``, a typed one's ``v`` is its ``y_parity``; fields its type
  does not have are null;
- a receipt's transaction hash, type, sender and recipient are its proven transaction's; ``effective_gas_price`` follows
  from the header's base fee and the transaction's fee fields; ``contract_address`` is keccak(rlp([sender, nonce]))[12:]
  for a creation (anvil and geth name it for a failed creation too) and null otherwise; ``blob_gas_used`` is 2**17 per
  blob; a log's ``transaction_hash`` is its receipt's.

Each failure names the block, the column (as the check) and the row.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.verify._columns import (
    WIDE,
    bools,
    differs,
    filled,
    int_values,
    nulls,
    positions,
    sorted_by,
    unequal_wide,
    wide,
    words,
)
from chainframe.verify._hashing import keccak, rlp, uint
from chainframe.verify._report import Failure, Report

if TYPE_CHECKING:
    import polars as pl

    from chainframe.datasets import Dataset
else:
    from chainframe._lazy import polars as pl

SHOWN = 3
"""Failures shown per check and table: the first rows are enough to find the edit."""
EMPTY_UNCLES = keccak(rlp([]))
GAS_PER_BLOB = 2**17
NOT_OF_TYPE = {
    0: ("max_fee_per_gas", "max_priority_fee_per_gas", "max_fee_per_blob_gas", "access_list", "blob_versioned_hashes",
        "authorization_list"),
    1: ("max_fee_per_gas", "max_priority_fee_per_gas", "max_fee_per_blob_gas", "blob_versioned_hashes",
        "authorization_list"),
    2: ("max_fee_per_blob_gas", "blob_versioned_hashes", "authorization_list"),
    3: ("authorization_list",),
    4: ("max_fee_per_blob_gas", "blob_versioned_hashes"),
}  # fmt: skip
"""Transaction fields a type's encoding does not have: nodes leave them out, so a value there is not the chain's."""


def row_keys(dataset: str) -> tuple[str, ...]:
    """What names a row within its block: its dataset's sort key after its block column (none for a series that is
    not named as its dataset)."""
    spec = _declared(dataset)
    return tuple(c for c in spec.sort if c != spec.block_column) if spec is not None else ()


def block_column(dataset: str) -> str:
    """The column that says which block a row is of, as its dataset declares (an uncle's: its nephew's)."""
    spec = _declared(dataset)
    return spec.block_column if spec is not None else "block_number"


def _declared(dataset: str) -> Dataset | None:
    from chainframe.datasets import DATASETS  # the whole catalogue: loaded once a check names a row

    return DATASETS.get(dataset)


def where(keys: tuple[str, ...], row: dict[str, Any]) -> str:
    """The row named by its key within the block, e.g. ``transaction_index 3``."""
    return " ".join(f"{k} {shown(row.get(k))}" for k in keys)


def shown(value: Any) -> str:
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, list):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    return "null" if value is None else str(value)


def integer(value: Any) -> int | None:
    """A wei column's value as an int: decimal128, or a 32-byte word with ``u256="binary"``."""
    if value is None:
        return None
    return int.from_bytes(value, "big") if isinstance(value, bytes) else int(Decimal(value))


def _frame(table: pa.Table, names: list[str]) -> pl.DataFrame:
    return pl.DataFrame(pl.from_arrow(table.select([n for n in dict.fromkeys(names) if n in table.column_names])))


def _report_rows(
    dataset: str, check: str, bad: pl.DataFrame, keys: tuple[str, ...], stored: str, computed: str, report: Report
) -> None:
    block = "nephew_number" if "nephew_number" in bad.columns else "block_number"
    for row in bad.head(SHOWN).iter_rows(named=True):
        report.failures.append(
            Failure(dataset, row[block], check, shown(row[stored]), shown(row[computed]), row=where(keys, row))
        )


def check_header_columns(
    dataset: str,
    rows: pa.Table,
    blocks: pa.Table,
    report: Report,
    *,
    chain_id: int | None = None,
    columns: tuple[str, ...] = ("block_hash", "block_timestamp", "block_time", "chain_id"),
    name: str | None = None,
) -> None:
    """Each row's block columns are its header's (a block's or uncle's ``block_time`` its own ``timestamp``), and
    ``chain_id`` is ``chain_id`` (when known). Rows of blocks not in ``blocks`` are left to the caller."""
    name = name or dataset
    spec = _declared(dataset)
    own = spec is not None and "timestamp" in spec.columns  # rows of headers (a block's, an uncle's): their own
    block = block_column(dataset)
    if rows.num_rows == 0 or block not in rows.column_names:
        return
    wanted = [c for c in columns if c in rows.column_names and (c != "chain_id" or chain_id is not None)]
    if own:
        wanted = [c for c in wanted if c in ("block_time", "chain_id")]
    if not wanted or _header_columns_hold(rows, blocks, block, wanted, chain_id, own=own):
        return
    keys = row_keys(dataset)
    frame = _frame(rows, [block, *keys, "timestamp", *wanted])
    if own:
        frame = frame.with_columns(pl.col("timestamp").alias("__timestamp"))
    else:
        headers = _frame(blocks, ["block_number", "block_hash", "timestamp"]).rename(
            {"block_hash": "__block_hash", "timestamp": "__timestamp", "block_number": block}
        )
        frame = frame.join(headers, on=block, how="inner")
    computed = {
        "block_hash": pl.col("__block_hash"),
        "block_timestamp": pl.col("__timestamp"),
        "block_time": pl.col("__timestamp").cast(pl.Int64),
        "chain_id": pl.lit(chain_id, pl.UInt64),
    }
    stored_as = {c: pl.col(c).dt.epoch("s") if c == "block_time" else pl.col(c) for c in wanted}
    differ = [stored_as[c].ne_missing(computed[c]) for c in wanted]
    frame = frame.filter(pl.any_horizontal(differ))  # the rows any column is wrong in (most often none): one pass
    if frame.height == 0:
        return
    for column in wanted:
        bad = frame.with_columns(stored_as[column].alias("__stored"), computed[column].alias("__computed")).filter(
            pl.col("__stored").ne_missing(pl.col("__computed"))
        )
        check = "row_block_hash" if column == "block_hash" else column
        _report_rows(name, check, bad.sort(block), keys, "__stored", "__computed", report)


def _header_columns_hold(
    rows: pa.Table, blocks: pa.Table, block: str, wanted: list[str], chain_id: int | None, *, own: bool
) -> bool:
    """Whether every row's ``wanted`` columns are certainly its header's, found with Arrow kernels alone (most
    pieces): False when unsure (a null, a block without its header, another type), and the Polars check decides."""
    from pyarrow._compute import SetLookupOptions, call_function

    def whole(column: pa.Array | pa.ChunkedArray) -> pa.Array:
        return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column

    where = None
    if not own:
        lookup = SetLookupOptions(value_set=whole(blocks["block_number"]))
        where = call_function("index_in", [whole(rows[block])], lookup)
        if where.null_count:
            return False
    timestamps = whole(rows["timestamp"]) if own else pc.take(whole(blocks["timestamp"]), where)
    for column in wanted:
        stored = whole(rows[column])
        if column == "chain_id":
            computed = pc.constant(chain_id, len(stored), stored.type)
        elif column == "block_hash" and where is not None:
            computed = pc.take(whole(blocks["block_hash"]), where)
        elif column == "block_timestamp":
            computed = timestamps
        elif column == "block_time" and pa.types.is_timestamp(stored.type):
            seconds = pc.cast(pc.cast(timestamps, pa.int64()), pa.timestamp("s", tz=stored.type.tz))
            computed = pc.cast(seconds, stored.type)
        else:
            return False
        if stored.null_count or computed.null_count or stored.type != computed.type:
            return False
        if not pc.all(pc.equal(stored, computed)).as_py():
            return False
    return True


def _indexes_hold(rows: pa.Table, column: str, *, logs: bool) -> bool:
    """Whether :func:`check_indexes` certainly finds nothing (each block's ``column`` is 0..n-1, and for logs their
    transaction indexes never go down in log order), from numpy over the rows sorted by block and ``column``; False
    when unsure (a null, or something differs), and the Polars check decides and names what differs."""
    import numpy as np

    names = ["block_number", column] + (["transaction_index"] if logs else [])
    if any(rows[name].null_count for name in names):
        return False
    table = sorted_by(rows.select(list(dict.fromkeys(names))), "block_number", column)
    block, index = int_values(table["block_number"]), int_values(table[column])
    if not len(block):
        return True
    starts = np.concatenate([[0], np.flatnonzero(np.diff(block)) + 1])
    first = np.repeat(starts, np.diff(np.append(starts, len(block))))  # each row's block's first row
    if not np.array_equal(index, np.arange(len(block)) - first):
        return False
    if logs:
        tx = int_values(table["transaction_index"])
        same_block = np.diff(block) == 0
        if (same_block & (np.diff(tx) < 0)).any():
            return False
    return True


def check_indexes(dataset: str, rows: pa.Table, report: Report) -> None:
    """A block's transactions (or receipts) are at 0..n-1; its logs at log indexes 0..n-1, in transaction order: the
    index is the row's key within its block, as its dataset's sort declares (a row of a transaction indexed apart from
    it, a log, is in its transaction's order too)."""
    column = (*row_keys(dataset), "transaction_index")[0]
    logs = column != "transaction_index"
    try:
        hold = _indexes_hold(rows, column, logs=logs)
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a value out of int64: Polars reads it
        hold = False
    if hold:
        if logs:
            check_not_removed(dataset, rows, report)
        return
    frame = _frame(rows, ["block_number", "transaction_index", "log_index"]).sort("block_number", column)
    position = pl.int_range(pl.len(), dtype=pl.UInt64).over("block_number").alias("__position")
    bad = frame.with_columns(position).filter(pl.col(column) != pl.col("__position"))
    _report_rows(dataset, column, bad.unique("block_number", keep="first", maintain_order=True), (column,), column,
                 "__position", report)  # fmt: skip
    if logs:
        earlier = pl.col("transaction_index").shift(1).over("block_number")
        bad = frame.with_columns(earlier.alias("__earlier")).filter(pl.col("transaction_index") < pl.col("__earlier"))
        _report_rows(dataset, "transaction_index", bad, ("log_index",), "transaction_index", "__earlier", report)
        check_not_removed(dataset, rows, report)


def check_not_removed(name: str, rows: pa.Table, report: Report) -> None:
    """A stored log is on the chain its header is: ``removed`` (set only in a reorg's notifications) is never true."""
    if "removed" not in rows.column_names:
        return
    if not rows.num_rows or pc.any(rows["removed"]).as_py() is not True:
        return  # no row removed (most pieces): nothing read
    keys = row_keys("logs") if "log_index" in rows.column_names else ()
    removed = _frame(rows, ["block_number", *keys, "removed"]).filter(pl.col("removed").fill_null(False))
    _report_rows(name, "removed", removed.with_columns(pl.lit(False).alias("__kept")), keys, "removed", "__kept",
                 report)  # fmt: skip


def _in_order(table: pa.Table, block: str, index: str) -> dict[int, list[bytes | None]]:
    """Each block's row hashes (``transaction_hash``, or an uncle's ``block_hash``) in index order."""
    column = "transaction_hash" if "transaction_hash" in table.column_names else "block_hash"
    pairs: dict[int, list[tuple[int | None, bytes | None]]] = {}
    for row in table.select([block, index, column]).to_pylist():
        pairs.setdefault(row[block], []).append((row[index], row[column]))

    def key(pair: tuple[int | None, bytes | None]) -> tuple[bool, int, bool, bytes]:
        # nulls last, as Arrow sorts them: a null index or hash is a row to fail, not a TypeError
        return pair[0] is None, pair[0] or 0, pair[1] is None, pair[1] or b""

    return {n: [h for _, h in sorted(found, key=key)] for n, found in pairs.items()}


def _lists_screen(blocks: pa.Table, transactions: pa.Table | None, *, alone: bool) -> list[int] | None:
    """The blocks rows :func:`check_block_lists` (without uncles) may find wrong, a superset: a transaction count that
    is not the list's length, a list that is not the transactions' hashes in index order (compared as bytes, block by
    block), uncles listed under the empty uncles hash. None where the columns are not what this reads (the reference
    then reads every row)."""
    import numpy as np

    if "transaction_hashes" not in blocks.column_names or "block_number" not in blocks.column_names:
        return None
    listed = blocks["transaction_hashes"].combine_chunks()
    if not pa.types.is_list(listed.type) or listed.type.value_type != pa.binary(32):
        return None
    given = ~nulls(listed)
    counts = int_values(pc.list_value_length(listed))
    screened = np.zeros(blocks.num_rows, dtype=bool)
    if alone and "transaction_count" in blocks.column_names:
        count = blocks["transaction_count"]
        screened |= given & (nulls(count) | (int_values(count) != counts))  # a null count is not a length
    if "uncles" in blocks.column_names and alone:
        if "sha3_uncles" not in blocks.column_names or blocks["sha3_uncles"].type != pa.binary(32):
            return None
        empty = pc.equal(blocks["sha3_uncles"], pc.constant(EMPTY_UNCLES, blocks.num_rows, pa.binary(32)))
        screened |= bools(empty) & bools(pc.greater(pc.list_value_length(blocks["uncles"]),
                                                    pc.constant(0, blocks.num_rows, pa.int32())))  # fmt: skip
    if transactions is not None:
        mine = sorted_by(transactions.select(["block_number", "transaction_index", "transaction_hash"]),
                         "block_number", "transaction_index", "transaction_hash")  # fmt: skip
        stored = words(mine["transaction_hash"], 32)
        values = listed.values
        if stored is None or values.null_count or nulls(mine["transaction_index"]).any():
            return None
        numbers = int_values(mine["block_number"])
        starts = np.flatnonzero(np.diff(numbers)) + 1 if len(numbers) else numbers
        bounds = np.concatenate([[0], starts, [len(numbers)]]).tolist() if len(numbers) else [0]
        spans = dict(zip(numbers[bounds[:-1]].tolist(), pairwise(bounds), strict=True))
        theirs = stored.tobytes()
        ours = words(values, 32)
        ours_bytes = ours.tobytes() if ours is not None else b""
        offsets = int_values(listed.offsets).tolist()
        for i, (number, present) in enumerate(zip(int_values(blocks["block_number"]).tolist(), given.tolist(),
                                                  strict=True)):  # fmt: skip
            if not present:
                continue
            start, stop = spans.get(number, (0, 0))
            if ours_bytes[32 * offsets[i] : 32 * offsets[i + 1]] != theirs[32 * start : 32 * stop]:
                screened[i] = True
    return np.flatnonzero(screened).tolist()


def check_block_lists(
    blocks: pa.Table, report: Report, *, transactions: pa.Table | None = None, uncles: pa.Table | None = None
) -> None:
    """With neither table: ``transaction_count`` is the length of ``transaction_hashes``, and ``uncles`` is empty
    for the empty uncles hash. With one or both: ``transaction_hashes`` are the proven transactions' hashes, ``uncles``
    the proven uncles' (only those: the blocks' own checks ran once already)."""
    alone = transactions is None and uncles is None
    names = ["block_number", "transaction_count", "transaction_hashes", "sha3_uncles", "uncles"]
    try:
        screened = _lists_screen(blocks, transactions, alone=alone) if uncles is None else None
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a value out of range: every row read
        screened = None
    if screened is not None:
        if not screened:
            return
        blocks = pc.take(blocks, positions(screened))
        if transactions is not None:
            numbers = blocks["block_number"].combine_chunks()
            transactions = pc.filter(transactions, pc.is_in(transactions["block_number"], value_set=numbers))
    hashes = _in_order(transactions, "block_number", "transaction_index") if transactions is not None else {}
    ommers = _in_order(uncles, "nephew_number", "uncle_index") if uncles is not None else {}
    for row in blocks.select([n for n in names if n in blocks.column_names]).to_pylist():
        number, listed = row["block_number"], row.get("transaction_hashes")
        if alone and "transaction_count" in row and listed is not None and row["transaction_count"] != len(listed):
            report.failures.append(Failure("blocks", number, "transaction_count", str(row["transaction_count"]),
                                           f"{len(listed)} transaction hashes"))  # fmt: skip
        if transactions is not None and listed is not None and listed != hashes.get(number, []):
            # Both sides were stored: the rows' hashes on the stored side (as a row's column is, beside a header's
            # field, in the other checks), the block's list beside them; each says which it is.
            rows = f"transactions' transaction_hash by transaction_index {shown(hashes.get(number, []))}"
            report.failures.append(Failure("blocks", number, "transaction_hashes", rows,
                                           f"the block's transaction_hashes {shown(listed)}"))  # fmt: skip
        if "uncles" not in row:
            continue
        if uncles is not None:
            want = ommers.get(number, [])
        elif alone and row.get("sha3_uncles") == EMPTY_UNCLES:
            want = []
        else:
            continue  # uncles there, their headers not given: the folder reports the skip
        if (row["uncles"] or []) != want:
            report.failures.append(Failure("blocks", number, "uncles", shown(row["uncles"]), shown(want)))


def effective_price(tx: dict[str, Any], base_fee: int | None) -> int | None:
    """What a transaction paid per gas: its gas price (types 0, 1), or min(fee cap, base fee + tip) (2, 3, 4); None
    when unknown (another type, or no base fee)."""
    kind = tx["transaction_type"] or 0
    if kind in (0, 1):
        return integer(tx["gas_price"])
    cap, tip = integer(tx["max_fee_per_gas"]), integer(tx["max_priority_fee_per_gas"])
    if kind not in (2, 3, 4) or base_fee is None or cap is None or tip is None:
        return None
    return min(cap, base_fee + tip)


def _base_fees(blocks: pa.Table) -> dict[int, int | None]:
    rows = blocks.select(["block_number", "base_fee_per_gas"]).to_pylist()
    return {r["block_number"]: integer(r["base_fee_per_gas"]) for r in rows}


TX_NAMES = (
    "block_number", "transaction_index", "transaction_hash", "transaction_type", "from_address", "to_address", "nonce",
    "gas_price", "max_fee_per_gas", "max_priority_fee_per_gas", "max_fee_per_blob_gas", "transaction_chain_id", "v",
    "y_parity", "access_list", "blob_versioned_hashes", "authorization_list",
)  # fmt: skip


def _bools(values: Any) -> pa.Array:
    """A numpy bool array as an Arrow one (from its bits: an array made from Python values imports pandas)."""
    import numpy as np

    bits = np.packbits(values, bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits.tobytes())])


def _paid(rows: pa.Table, kind: Any, blocks: pa.Table) -> tuple[pa.Array, Any] | None:
    """What each row's transaction paid per gas (:func:`effective_price`) as a wide decimal column, and where it is
    known, from whole columns; None where they are not decimals, or a block number repeats in ``blocks``."""
    import numpy as np
    from pyarrow._compute import SetLookupOptions, call_function

    numbers = blocks["block_number"].combine_chunks()
    price, cap, tip = (wide(rows[n]) for n in ("gas_price", "max_fee_per_gas", "max_priority_fee_per_gas"))
    fees = wide(blocks["base_fee_per_gas"])
    if (
        price is None
        or cap is None
        or tip is None
        or fees is None
        or len(np.unique(int_values(numbers))) < len(numbers)
    ):
        return None
    at = call_function("index_in", [rows["block_number"].combine_chunks()], SetLookupOptions(value_set=numbers))
    base = pc.take(fees, at)  # null: the row's block has no header here
    plain = (kind == 0) | (kind == 1)
    market = (kind == 2) | (kind == 3) | (kind == 4)
    capped = call_function("min_element_wise", [cap, pc.cast(pc.add(base, tip), WIDE)])
    known = (plain & ~nulls(price)) | (market & ~nulls(base) & ~nulls(cap) & ~nulls(tip))
    return pc.if_else(_bools(plain), price, capped), known


def _fields_screen(table: pa.Table, blocks: pa.Table) -> Any:
    """The rows :func:`check_transaction_fields` may find wrong (a superset), as numpy bools."""
    import numpy as np

    kind = int_values(table["transaction_type"])
    market = (kind == 2) | (kind == 3) | (kind == 4)
    paid = _paid(table, kind, blocks)
    if paid is None:
        screened = market.copy()
    else:
        price, known = paid
        screened = market & known & unequal_wide(wide(table["gas_price"]), price)
    v, v_null = int_values(table["v"]), nulls(table["v"])
    parity, parity_null = int_values(table["y_parity"]), nulls(table["y_parity"])
    chain, chain_null = int_values(table["transaction_chain_id"]), nulls(table["transaction_chain_id"])
    legacy = (kind == 0) & ~v_null
    eip155 = v >= 35
    screened |= legacy & np.where(eip155, chain_null | (chain != (v - 35) // 2), ~chain_null)
    screened |= legacy & ~parity_null & (parity != np.where(eip155, (v - 35) % 2, v - 27))
    screened |= (kind >= 1) & (kind <= 4) & ~v_null & ~parity_null & (v != parity)
    for k, columns in NOT_OF_TYPE.items():
        for column in columns:
            if column in table.column_names:
                screened |= (kind == k) & filled(table[column])
    return screened


def check_transaction_fields(transactions: pa.Table, blocks: pa.Table, report: Report) -> None:
    """The columns of a transaction outside its type's signed encoding (see the module docstring)."""
    import numpy as np

    table = transactions.select([n for n in TX_NAMES if n in transactions.column_names])
    try:
        screened = np.flatnonzero(_fields_screen(table, blocks))
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a column missing or out of range: all rows
        screened = np.arange(table.num_rows)
    if not len(screened):
        return
    base = _base_fees(blocks)
    keys = ("transaction_index",)
    for tx in pc.take(table, positions(screened)).to_pylist():
        kind, number = tx["transaction_type"] or 0, tx["block_number"]
        wrong: list[tuple[str, Any, Any]] = []
        if kind in (2, 3, 4):
            paid = effective_price(tx, base.get(number))
            if paid is not None and integer(tx["gas_price"]) != paid:
                wrong.append(("gas_price", integer(tx["gas_price"]), paid))
        v, parity = tx["v"], tx["y_parity"]
        if kind == 0 and v is not None:
            chain = (v - 35) // 2 if v >= 35 else None
            if tx["transaction_chain_id"] != chain:
                wrong.append(("transaction_chain_id", tx["transaction_chain_id"], chain))
            if parity is not None and parity != ((v - 35) % 2 if v >= 35 else v - 27):
                wrong.append(("y_parity", parity, (v - 35) % 2 if v >= 35 else v - 27))
        elif kind in NOT_OF_TYPE and v is not None and parity is not None and v != parity:
            wrong.append(("v", v, parity))
        for column in NOT_OF_TYPE.get(kind, ()):
            if tx.get(column) not in (None, []):
                wrong.append((column, tx[column], f"null (type {kind} has no {column})"))
        for column, stored, computed in wrong:
            report.failures.append(Failure("transactions", number, column, shown(stored),
                                           computed if isinstance(computed, str) else shown(computed),
                                           row=where(keys, tx)))  # fmt: skip


def create_address(sender: bytes, nonce: int) -> bytes:
    return keccak(rlp([sender, uint(nonce)]))[12:]


NOT_FOR_RECEIPTS = frozenset({"v", "y_parity", "transaction_chain_id", "access_list", "authorization_list",
                              "max_fee_per_blob_gas"})  # fmt: skip
"""Transaction columns no receipt column follows from."""
RECEIPT_NAMES = (
    "block_number", "transaction_index", "transaction_hash", "transaction_type", "from_address", "to_address",
    "contract_address", "effective_gas_price", "blob_gas_used",
)  # fmt: skip


def _pairs(receipts: pa.Table, transactions: pa.Table) -> tuple[Any, Any]:
    """Each receipt's row and its transaction's (the last of a block and index, as a dict by them keeps), as numpy
    positions; receipts without a transaction left out."""
    keys = ["block_number", "transaction_index"]
    matched = matched_rows(receipts.select(keys), transactions.select(keys))
    if matched is not None:
        return matched
    left = pl.DataFrame(pl.from_arrow(receipts.select(keys))).with_row_index("__receipt")
    right = pl.DataFrame(pl.from_arrow(transactions.select(keys))).with_row_index("__transaction")
    joined = left.join(right.unique(keys, keep="last"), on=keys, how="inner")
    return joined["__receipt"].to_numpy(), joined["__transaction"].to_numpy()


def _transaction_keys(table: pa.Table) -> tuple[Any, Any] | None:
    """Each row's (block, transaction index) as one int64 (the block above bit 32), and where neither is null;
    None where one does not fit so."""
    import numpy as np

    block, index = table["block_number"], table["transaction_index"]
    try:
        numbers, indexes = int_values(block), int_values(index)
    except pa.ArrowInvalid:  # beyond int64
        return None
    if len(numbers) and (min(numbers.min(), indexes.min()) < 0 or numbers.max() >= 2**31 or indexes.max() >= 2**32):
        return None
    return (numbers << np.int64(32)) | indexes, ~(nulls(block) | nulls(index))


def matched_rows(left: pa.Table, right: pa.Table, *, unique: bool = False) -> tuple[Any, Any] | None:
    """The rows of ``left`` and ``right`` with the same block and transaction index (an inner join), as numpy
    positions: each left row with the last right row of its key; a null key matches nothing. None where numpy cannot
    tell (a key beyond its range; with ``unique``, a key twice in ``right``, which a join would match twice): the
    caller joins in Polars."""
    import numpy as np

    mine, theirs = _transaction_keys(left), _transaction_keys(right)
    if mine is None or theirs is None:
        return None
    (wanted, valid), (keys, present) = mine, theirs
    at = np.flatnonzero(present)
    distinct, first = np.unique(keys[at][::-1], return_index=True)  # reversed: each key's first is its last
    if unique and len(distinct) < len(at):
        return None
    if not len(distinct):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    last = at[len(at) - 1 - first]
    found = np.minimum(np.searchsorted(distinct, wanted), len(distinct) - 1)
    hits = np.flatnonzero(valid & (distinct[found] == wanted))
    return hits, last[found[hits]]


def _receipts_screen(receipts: pa.Table, transactions: pa.Table, blocks: pa.Table) -> Any:
    """The receipts :func:`check_receipts_with_transactions` may find wrong (a superset), as numpy positions."""
    import numpy as np

    mine, theirs = _pairs(receipts, transactions)
    rows = pc.take(receipts, positions(mine))
    txs = pc.take(transactions, positions(theirs))
    screened = np.zeros(rows.num_rows, dtype=bool)
    for column in ("transaction_hash", "transaction_type", "from_address", "to_address"):
        if column in rows.column_names:
            unequal = differs(rows[column], txs[column])
            screened |= True if unequal is None else unequal
    kind = int_values(txs["transaction_type"])
    if "contract_address" in rows.column_names:  # a creation's address is computed in Python: few rows
        screened |= nulls(txs["to_address"]) | ~nulls(rows["contract_address"])
    if "effective_gas_price" in rows.column_names:
        paid = _paid(txs, kind, blocks)
        stored = wide(rows["effective_gas_price"])
        if paid is None or stored is None:
            screened |= True
        else:
            screened |= paid[1] & unequal_wide(stored, paid[0])
    if "blob_gas_used" in rows.column_names:
        used, unused = int_values(rows["blob_gas_used"]), nulls(rows["blob_gas_used"])
        if "blob_versioned_hashes" in txs.column_names:
            lengths = pc.list_value_length(txs["blob_versioned_hashes"].combine_chunks())
            blobs = int_values(lengths)  # a null list: none
        else:
            blobs = np.zeros(rows.num_rows, dtype=np.int64)
        screened |= np.where(kind == 3, unused | (used != blobs * GAS_PER_BLOB), ~unused & (used != 0))
    return mine[screened]


def check_receipts_with_transactions(
    receipts: pa.Table,
    transactions: pa.Table,
    blocks: pa.Table,
    report: Report,
    *,
    name: str = "receipts",
    unproven_creations: Mapping[int, str] | None = None,
) -> None:
    """A receipt's transaction columns are its proven transaction's; what it paid and created follow from them.
    ``unproven_creations``: transaction type -> why what its creations made follows from nothing proven (skipped)."""
    import numpy as np

    # What a receipt is checked against (the nested lists of every transaction are the costly ones to read).
    names = [n for n in TX_NAMES if n in transactions.column_names and n not in NOT_FOR_RECEIPTS]
    transactions = transactions.select(names)
    receipts = receipts.select([n for n in RECEIPT_NAMES if n in receipts.column_names])
    try:
        screened = np.sort(_receipts_screen(receipts, transactions, blocks))
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a column missing or out of range: all rows
        screened = np.arange(receipts.num_rows)
    if not len(screened):
        return
    receipts = pc.take(receipts, positions(screened))
    wanted = pc.is_in(transactions["block_number"], value_set=receipts["block_number"].combine_chunks())
    base = _base_fees(blocks)
    txs = {(t["block_number"], t["transaction_index"]): t for t in pc.filter(transactions, wanted).to_pylist()}
    keys = ("transaction_index",)
    unproven: dict[str, set[int]] = {}
    for receipt in receipts.to_pylist():
        number = receipt["block_number"]
        tx = txs.get((number, receipt["transaction_index"]))
        if tx is None:
            continue  # row_count and transaction_index name a missing or moved row
        reason = (unproven_creations or {}).get(tx["transaction_type"]) if tx["to_address"] is None else None
        if reason is not None and "contract_address" in receipt:
            unproven.setdefault(reason, set()).add(number)
            receipt = {k: v for k, v in receipt.items() if k != "contract_address"}
        wrong: list[tuple[str, Any, Any]] = [
            (c, receipt[c], tx[c])
            for c in ("transaction_hash", "transaction_type", "from_address", "to_address")
            if c in receipt and receipt[c] != tx[c]
        ]
        if "contract_address" in receipt:
            created = create_address(tx["from_address"], tx["nonce"]) if tx["to_address"] is None else None
            if receipt["contract_address"] != created:
                wrong.append(("contract_address", receipt["contract_address"], created))
        if "effective_gas_price" in receipt:
            paid = effective_price(tx, base.get(number))
            if paid is not None and integer(receipt["effective_gas_price"]) != paid:
                wrong.append(("effective_gas_price", integer(receipt["effective_gas_price"]), paid))
        if "blob_gas_used" in receipt:
            blobs = len(tx.get("blob_versioned_hashes") or [])
            allowed = {blobs * GAS_PER_BLOB} if (tx["transaction_type"] or 0) == 3 else {None, 0}
            if receipt["blob_gas_used"] not in allowed:
                wrong.append(("blob_gas_used", receipt["blob_gas_used"], blobs * GAS_PER_BLOB if blobs else None))
        for column, stored, computed in wrong:
            report.failures.append(
                Failure(name, number, column, shown(stored), shown(computed), row=where(keys, receipt))
            )
    for reason, numbers in unproven.items():
        report.skip(name, "contract_address", reason, blocks=len(numbers))


def _hashes_hold(logs: pa.Table, receipts: pa.Table) -> bool:
    """Whether every log's ``transaction_hash`` is certainly its receipt's, from numpy (False when unsure: a null, a
    receipt twice, a hash that differs; the join in Polars then names the rows)."""
    keys = ["block_number", "transaction_index"]
    matched = matched_rows(logs.select(keys), receipts.select(keys), unique=True)
    have, want = words(logs["transaction_hash"], 32), words(receipts["transaction_hash"], 32)
    if matched is None or have is None or want is None:
        return False
    mine, theirs = matched
    return not bool((have[mine] != want[theirs]).any())


def check_logs_with_receipts(logs: pa.Table, receipts: pa.Table, report: Report) -> None:
    """A log's ``transaction_hash`` is its receipt's (which the transactions prove)."""
    if "transaction_hash" not in logs.column_names or "transaction_hash" not in receipts.column_names:
        return
    if _hashes_hold(logs, receipts):
        return
    have = _frame(logs, ["block_number", "transaction_index", "log_index", "transaction_hash"])
    want = _frame(receipts, ["block_number", "transaction_index", "transaction_hash"]).rename(
        {"transaction_hash": "__receipt_hash"}
    )
    bad = have.join(want, on=["block_number", "transaction_index"], how="inner").filter(
        pl.col("transaction_hash") != pl.col("__receipt_hash")
    )
    _report_rows("logs", "transaction_hash", bad.sort("block_number", "log_index"), ("log_index",),
                 "transaction_hash", "__receipt_hash", report)  # fmt: skip
