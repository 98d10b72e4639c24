"""Verify one block range held in memory: the Arrow tables of blocks, transactions, receipts and logs.

This is the unit the engine can call on a chunk before committing it; ``verify_folder`` calls it on what a folder
holds. Any table may be missing: the checks that need it are skipped, and say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from chainframe.verify._derived import (
    check_block_lists,
    check_header_columns,
    check_indexes,
    check_logs_with_receipts,
    check_receipts_with_transactions,
    check_transaction_fields,
)
from chainframe.verify._headers import check_block_hashes
from chainframe.verify._logs import check_log_counts, check_logs_bloom
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


def _restrict(table: pa.Table, numbers: pa.Array) -> pa.Table:
    from chainframe import _kernels as pc

    return pc.filter(table, pc.is_in(table["block_number"], value_set=numbers))


def _restrict_nephews(table: pa.Table, numbers: pa.ChunkedArray) -> pa.Table:
    from chainframe import _kernels as pc

    return pc.filter(table, pc.is_in(table["nephew_number"], value_set=numbers.combine_chunks()))


def _check_counts(name: str, rows: pa.Table, blocks: pa.Table, report: Report) -> None:
    """One row per transaction of each block: the count the header's transaction list gives."""
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


def verify_tables(
    *,
    blocks: pa.Table | None = None,
    transactions: pa.Table | None = None,
    receipts: pa.Table | None = None,
    logs: pa.Table | None = None,
    uncles: pa.Table | None = None,
    account_proofs: pa.Table | None = None,
    storage_proofs: pa.Table | None = None,
    report: Report | None = None,
    headers: bool = True,
    chain_id: int | None = None,
) -> Report:
    """Check the given tables of one block range against each other and the headers in ``blocks``.

    Rows of blocks absent from ``blocks`` cannot be proven against a header: those checks are reported as skipped.
    Give only the blocks each table covers: a block with no rows is read as a block with no transactions.
    ``chain_id``: the chain the rows must say they are of (None: their ``chain_id`` is not checked).
    """
    report = report if report is not None else Report()
    if blocks is None:
        for name, table in (("transactions", transactions), ("receipts", receipts), ("logs", logs)):
            if table is not None:
                report.skip(name, "against headers", "no blocks dataset to check against",
                            blocks=len(set(table["block_number"].to_pylist())))  # fmt: skip
        if logs is not None and receipts is not None:
            check_log_counts(logs, receipts, report)
        return report
    if headers:  # False: the blocks were proven already, the other tables are checked against them
        check_block_hashes(blocks, report)
        check_withdrawals_roots(blocks, report)
        check_header_columns("blocks", blocks, blocks, report, chain_id=chain_id)
        check_block_lists(blocks, report)
    numbers = blocks["block_number"]
    given = {"transactions": transactions, "receipts": receipts, "logs": logs, "account_proofs": account_proofs,
             "storage_proofs": storage_proofs}  # fmt: skip
    for name, table in given.items():
        if table is not None:
            check_header_columns(name, _restrict(table, numbers), blocks, report, chain_id=chain_id)
    if uncles is not None:
        check_header_columns("uncles", _restrict_nephews(uncles, numbers), blocks, report, chain_id=chain_id)
    if transactions is not None or uncles is not None:
        check_block_lists(
            blocks, report,
            transactions=_restrict(transactions, numbers) if transactions is not None else None,
            uncles=_restrict_nephews(uncles, numbers) if uncles is not None else None,
        )  # fmt: skip
    if account_proofs is not None or storage_proofs is not None:
        check_proofs(account_proofs, storage_proofs, blocks, report)
    if uncles is not None:
        check_uncles(_restrict_nephews(uncles, blocks["block_number"]), blocks, report)
    for name, table in (("transactions", transactions), ("receipts", receipts)):
        if table is not None:
            _check_counts(name, _restrict(table, numbers), blocks, report)
            check_indexes(name, _restrict(table, numbers), report)
    if transactions is not None and receipts is not None:
        check_receipts_with_transactions(_restrict(receipts, numbers), _restrict(transactions, numbers), blocks, report)
    if receipts is not None:
        check_receipt_gas(_restrict(receipts, numbers), blocks, report)
        check_receipt_outcomes(_restrict(receipts, numbers), report)
    if transactions is not None:
        check_transactions_roots(_restrict(transactions, numbers), blocks, report)
        check_transaction_fields(_restrict(transactions, numbers), blocks, report)
    if logs is not None:
        in_range = _restrict(logs, numbers)
        check_logs_bloom(in_range, blocks, report)
        check_indexes("logs", in_range, report)
        if receipts is not None:
            check_log_counts(in_range, _restrict(receipts, numbers), report)
            check_logs_with_receipts(in_range, _restrict(receipts, numbers), report)
            check_receipts_roots(_restrict(receipts, numbers), in_range, blocks, report)
        else:
            report.count("logs", blocks=blocks.num_rows, rows=in_range.num_rows)
            report.skip("logs", "log_count", "no receipts dataset to count logs against", blocks=blocks.num_rows)
    elif receipts is not None:
        report.skip("receipts", "receipts_root", "no logs dataset to rebuild the receipts from", blocks=blocks.num_rows)
    return report
