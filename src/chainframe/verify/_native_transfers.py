"""Movements of ether (``native_transfers``) proven where a header commits to them: a transaction's own value by the
proven transactions and their receipts' status, a withdrawal by the withdrawals root; the check of
:class:`~chainframe.datasets._proof.NativeTransfersProof`. Movements inside execution come from traces, which no header
commits to: reported as skipped, with the proof's reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chainframe.datasets import RECEIPTS, TRANSACTIONS
from chainframe.verify._answers import receipts_and_logs
from chainframe.verify._rows import check_same_rows
from chainframe.verify._tables import verify_tables

if TYPE_CHECKING:
    import polars as pl

    from chainframe.verify._piece import Piece
else:
    from chainframe._lazy import polars as pl

_PROVEN_MOVES = ("transaction", "withdrawal")
"""The movements of ether a header proves: a transaction's own value, a withdrawal (all others are execution)."""


def prove_native_transfers(piece: Piece) -> None:
    """The proven movements are exactly what the proven transactions (with value, and a receipt saying success) and
    the headers' withdrawals (gwei, as wei) give; internal movements are reported as skipped."""
    name, rows, headers, report, chain_id = piece.name, piece.rows, piece.headers, piece.report, piece.chain_id
    transactions = TRANSACTIONS.transform(list(piece.of(TRANSACTIONS)), chain_id=chain_id, u256="binary")
    receipts, logs = receipts_and_logs(list(piece.of(RECEIPTS)), chain_id=chain_id)
    verify_tables(blocks=headers, transactions=transactions, receipts=receipts, logs=logs, report=report,
                  chain_id=chain_id)  # fmt: skip
    where = ["block_number", "transaction_index"]
    sent = pl.DataFrame(pl.from_arrow(transactions.select([*where, "transaction_hash", "from_address", "to_address",
                                                           "value"])))  # fmt: skip
    done = pl.DataFrame(pl.from_arrow(receipts.select([*where, "status", "contract_address"])))
    moved = (
        sent.join(done, on=where)
        .with_columns(_wei(pl.col("value")).alias("value"), pl.col("to_address").fill_null(pl.col("contract_address")))
        .filter((pl.col("status") == 1) & (pl.col("value") != "0"))
        .select("block_number", pl.format("transaction {}", "transaction_index").alias("at"),
                "transaction_hash", "from_address", "to_address", "value")
    )  # fmt: skip
    paid = pl.DataFrame(pl.from_arrow(headers.select(["block_number", "withdrawals"]))).explode("withdrawals")
    paid = paid.filter(pl.col("withdrawals").is_not_null()).unnest("withdrawals")
    paid = paid.select(
        "block_number", pl.format("withdrawal {}", "index").alias("at"), pl.lit(None, pl.Binary).alias(
            "transaction_hash"), pl.lit(None, pl.Binary).alias("from_address"), pl.col("address").alias("to_address"),
        (pl.col("amount").cast(pl.Decimal(38, 0)) * 10**9).cast(pl.Decimal(38, 0)).cast(pl.String).alias("value"),
    )  # fmt: skip
    have = (
        pl.DataFrame(pl.from_arrow(rows))
        .filter(pl.col("transfer_type").is_in(_PROVEN_MOVES))
        .select("block_number", pl.format("{} {}", "transfer_type", pl.coalesce("transaction_index",
                "withdrawal_index")).alias("at"), "transaction_hash", "from_address", "to_address",
                _wei(pl.col("value")).alias("value"))
    )  # fmt: skip
    want = pl.concat([moved.cast(have.schema), paid.cast(have.schema)])
    check_same_rows(name, "value", have.to_arrow(), want.to_arrow(), ["block_number", "at"], report)
    if any(kind not in _PROVEN_MOVES for kind in set(rows["transfer_type"].to_pylist())):
        report.skip(name, "internal", piece.proof.unprovable["internal"],
                    blocks=len(set(rows["block_number"].to_pylist())))  # fmt: skip


def _wei(value: pl.Expr) -> pl.Expr:
    """An amount of wei as decimal text, whether stored as decimal128 or as a 32-byte word."""
    return value.map_elements(
        lambda v: str(int.from_bytes(v, "big")) if isinstance(v, bytes) else str(int(v)), return_dtype=pl.String
    )
