"""Verify one block range held in memory: the Arrow tables of blocks, transactions, receipts and logs.

This is the unit the engine can call on a chunk before committing it; ``verify_folder`` calls it on what a folder
holds. Any table may be missing: the checks that need it are skipped, and say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.families import ChainFamily, family_of
from chainframe.verify._columns import int_values
from chainframe.verify._derived import (
    RECEIPT_NAMES,
    check_block_lists,
    check_header_columns,
    check_indexes,
    check_logs_with_receipts,
    check_receipts_with_transactions,
    check_transaction_fields,
)
from chainframe.verify._family_columns import check_family_columns, check_header_family_columns
from chainframe.verify._headers import check_block_hashes
from chainframe.verify._logs import check_log_counts, check_logs_bloom
from chainframe.verify._outside_roots import set_aside_outside_roots
from chainframe.verify._proofs import check_proofs
from chainframe.verify._receipts import check_receipt_gas, check_receipt_outcomes, check_receipts_roots
from chainframe.verify._report import Failure, Report
from chainframe.verify._transactions import check_transactions_roots
from chainframe.verify._uncles import check_uncles
from chainframe.verify._withdrawals import check_withdrawals_roots

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


def _restrict(table: pa.Table, numbers: pa.Array | pa.ChunkedArray, column: str = "block_number") -> pa.Table:
    """The rows of ``table`` in the blocks ``numbers`` (the table itself when they all are: no copy)."""
    if isinstance(numbers, pa.ChunkedArray):
        numbers = numbers.combine_chunks()
    inside = pc.is_in(table[column], value_set=numbers)
    return table if pc.all(inside).as_py() is not False else pc.filter(table, inside)


def _counts_hold(rows: pa.Table, blocks: pa.Table) -> bool:
    """Whether every block's ``transaction_count`` is certainly its rows' count, from numpy (False when unsure: a
    null, a count that differs, a value beyond int64; :func:`_check_counts` then joins in Polars to name the block)."""
    import numpy as np

    if rows["block_number"].null_count or blocks["block_number"].null_count or blocks["transaction_count"].null_count:
        return False
    try:
        numbers, counts = np.unique(int_values(rows["block_number"]), return_counts=True)
        wanted, expected = int_values(blocks["block_number"]), int_values(blocks["transaction_count"])
    except pa.ArrowInvalid:
        return False
    if not len(numbers):
        return not bool(expected.any())
    at = np.minimum(np.searchsorted(numbers, wanted), len(numbers) - 1)
    stored = np.where(numbers[at] == wanted, counts[at], 0)
    return bool(np.array_equal(stored, expected))


def _check_counts(name: str, rows: pa.Table, blocks: pa.Table, report: Report) -> None:
    """One row per transaction of each block: the count the header's transaction list gives."""
    if _counts_hold(rows, blocks):
        report.count(name, blocks=blocks.num_rows, rows=rows.num_rows)
        return
    have = pl.from_arrow(rows.select(["block_number"]))
    want = pl.from_arrow(blocks.select(["block_number", "transaction_count"]))
    assert isinstance(have, pl.DataFrame)
    assert isinstance(want, pl.DataFrame)
    joined = want.join(have.group_by("block_number").len(), on="block_number", how="left").with_columns(
        pl.col("len").fill_null(0).cast(pl.UInt64)
    )
    for block, expected, actual in (
        joined.filter(pl.col("transaction_count") != pl.col("len")).sort("block_number").rows()
    ):
        report.failures.append(Failure(name, block, "row_count", f"{expected} transactions", f"{actual} rows stored"))
    report.count(name, blocks=blocks.num_rows, rows=rows.num_rows)


def _provable(receipts: pa.Table, blocks: pa.Table, family: ChainFamily, report: Report) -> pa.Table:
    """``receipts`` without the columns ``family``'s headers commit to nothing of, each skipped with its reason: the
    rules that derive them from the transaction (Ethereum's price paid, blob gas) do not hold there."""
    dropped = [
        name for name in RECEIPT_NAMES if name in receipts.column_names and f"receipts.{name}" in family.unprovable
    ]
    for name in dropped:
        report.skip("receipts", name, family.unprovable[f"receipts.{name}"], blocks=blocks.num_rows)
    return receipts.drop_columns(dropped) if dropped else receipts


def check_receipts_from_transactions(
    receipts: pa.Table,
    transactions: pa.Table,
    blocks: pa.Table,
    report: Report,
    *,
    chain_id: int | None = None,
    family: ChainFamily | None = None,
) -> None:
    """What the receipts say of their transactions (sender, recipient, hash, type, price paid, created address), by
    the rules of the chain's family: what its headers commit to nothing of is skipped with its reason (Arbitrum's price
    paid), not failed. Every route that checks receipts against transactions comes here, so none forgets the family.
    ``family``: None, the family of ``chain_id``."""
    family = family if family is not None else family_of(chain_id)
    creations = {code: kind.creation for code, kind in family.transaction_types.items() if kind.creation}
    check_receipts_with_transactions(
        _provable(receipts, blocks, family, report), transactions, blocks, report, unproven_creations=creations
    )


TABLES = frozenset({"transactions", "receipts", "logs", "uncles", "account_proofs", "storage_proofs"})
"""The tables :func:`verify_tables` checks against the headers, by their datasets' names (its keywords)."""


def verify_tables(
    *,
    blocks: pa.Table | None = None,
    report: Report | None = None,
    headers: bool = True,
    chain_id: int | None = None,
    proven: frozenset[str] = frozenset(),
    family: ChainFamily | None = None,
    **tables: pa.Table | None,
) -> Report:
    """Check the given tables of one block range against each other and the headers in ``blocks``.

    ``tables``: the rows by their dataset's name, any of :data:`TABLES` (the keywords a folder's declared check is
    given, :class:`~chainframe.datasets.Offline`); a missing one is None.
    Rows of blocks absent from ``blocks`` cannot be proven against a header: those checks are reported as skipped.
    Give only the blocks each table covers: a block with no rows is read as a block with no transactions.
    ``chain_id``: the chain the rows must say they are of (None: their ``chain_id`` is not checked).
    ``proven``: given tables (``"transactions"``; ``"receipts"``, with their logs) proven already against these
    headers, from the same answers (by another dataset of an extraction): their own checks are not repeated, the checks
    of the others against them are.
    ``family``: the chain family whose rules the rows follow (None: the family of ``chain_id``, Ethereum's where it is
    unknown or not given).
    """
    unknown = set(tables) - TABLES
    if unknown:
        raise TypeError(f"verify_tables() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    transactions, receipts, logs = tables.get("transactions"), tables.get("receipts"), tables.get("logs")
    uncles, account_proofs = tables.get("uncles"), tables.get("account_proofs")
    storage_proofs = tables.get("storage_proofs")
    report = report if report is not None else Report()
    family = family if family is not None else family_of(chain_id)
    if blocks is None:
        for name, table in (("transactions", transactions), ("receipts", receipts), ("logs", logs)):
            if table is not None:
                report.skip(name, "against headers", "no blocks dataset to check against",
                            blocks=len(set(table["block_number"].to_pylist())))  # fmt: skip
        if logs is not None and receipts is not None:
            check_log_counts(logs, receipts, report)
        return report
    if headers:  # False: the blocks were proven already, the other tables are checked against them
        check_block_hashes(blocks, report, family=family)
        check_withdrawals_roots(blocks, report, family=family, chain_id=chain_id)
        check_header_columns("blocks", blocks, blocks, report, chain_id=chain_id)
        check_family_columns("blocks", blocks, family, report)
        check_header_family_columns(blocks, family, report)
        check_block_lists(blocks, report)
    numbers = blocks["block_number"]
    # Every check below reads only the rows of these blocks (the proofs' check sorts out its own): filtered once.
    transactions = _restrict(transactions, numbers) if transactions is not None else None
    receipts = _restrict(receipts, numbers) if receipts is not None else None
    logs = _restrict(logs, numbers) if logs is not None else None
    uncles = _restrict(uncles, numbers, "nephew_number") if uncles is not None else None
    given = {"transactions": transactions, "receipts": receipts, "logs": logs}
    if "receipts" in proven:
        proven = proven | {"logs"}  # the logs given are the proven receipts' own
    for name, table in (*given.items(), ("account_proofs", account_proofs), ("storage_proofs", storage_proofs)):
        if table is not None and name not in proven:
            rows = table if name in given else _restrict(table, numbers)
            check_header_columns(name, rows, blocks, report, chain_id=chain_id)
            check_family_columns(name, rows, family, report)
    if uncles is not None:
        check_header_columns("uncles", uncles, blocks, report, chain_id=chain_id)
    if (transactions is not None and "transactions" not in proven) or uncles is not None:
        check_block_lists(blocks, report, transactions=transactions, uncles=uncles)
    if account_proofs is not None or storage_proofs is not None:
        check_proofs(account_proofs, storage_proofs, blocks, report)
    if uncles is not None:
        check_uncles(uncles, blocks, report)
    for name, table in (("transactions", transactions), ("receipts", receipts)):
        if table is not None and name not in proven:
            _check_counts(name, table, blocks, report)
            check_indexes(name, table, report)
    if family.outside_roots is not None:  # counted and indexed above; in no root below
        kept = set_aside_outside_roots({"transactions": transactions, "receipts": receipts, "logs": logs}, blocks,
                                       family, report)  # fmt: skip
        transactions, receipts, logs = kept["transactions"], kept["receipts"], kept["logs"]
    if transactions is not None and receipts is not None:
        check_receipts_from_transactions(receipts, transactions, blocks, report, family=family)
    if receipts is not None and "receipts" not in proven:
        check_receipt_gas(receipts, blocks, report)
        check_receipt_outcomes(receipts, report)
    if transactions is not None and "transactions" not in proven:
        check_transactions_roots(transactions, blocks, report, family=family)
        check_transaction_fields(transactions, blocks, report)
    if logs is not None and "logs" not in proven:
        check_logs_bloom(logs, blocks, report)
        check_indexes("logs", logs, report)
        if receipts is not None:
            check_log_counts(logs, receipts, report)
            check_logs_with_receipts(logs, receipts, report)
            check_receipts_roots(receipts, logs, blocks, report, family=family, chain_id=chain_id)
        else:
            report.count("logs", blocks=blocks.num_rows, rows=logs.num_rows)
            report.skip("logs", "log_count", "no receipts dataset to count logs against", blocks=blocks.num_rows)
    elif logs is None and receipts is not None:
        report.skip("receipts", "receipts_root", "no logs dataset to rebuild the receipts from", blocks=blocks.num_rows)
    return report
