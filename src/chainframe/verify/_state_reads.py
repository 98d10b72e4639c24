"""A state read's rows (balances, nonces, codes, slots) proven through eth_getProof of the same accounts (and slots)
at the same blocks, those proofs proven against the headers' state roots: the check of
:class:`~chainframe.datasets._proof.StateProof`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from chainframe._keccak import keccak256
from chainframe.datasets import ACCOUNT_PROOFS, STORAGE_PROOFS, U256
from chainframe.verify._report import Failure, Report
from chainframe.verify._rows import check_same_rows
from chainframe.verify._tables import verify_tables

if TYPE_CHECKING:
    import polars as pl

    from chainframe.verify._piece import Piece
else:
    from chainframe._lazy import polars as pl


def prove_state(piece: Piece) -> None:
    """The rows are what eth_getProof of the same accounts (and slots) at the same blocks says, those proofs proven
    against the headers' state roots (a slot's against its account's storage hash); a code hashes to its code hash.
    The proofs are of exactly the rows asked: a row dropped, added or moved to another block fails."""
    rows, answers, report, chain_id = piece.rows, list(piece.of(piece.dataset)), piece.report, piece.chain_id
    # The proven values in the rows' own form (a balance as decimal or as a 32-byte word).
    wide = "balance" in rows.column_names and pa.types.is_fixed_size_binary(rows.schema.field("balance").type)
    u256: U256 = "binary" if wide else "decimal"
    accounts = ACCOUNT_PROOFS.transform(answers, chain_id=chain_id, u256=u256)
    keyed = "storage_key" in rows.column_names
    slots = STORAGE_PROOFS.transform(answers, chain_id=chain_id, u256=u256) if keyed else None
    verify_tables(blocks=piece.headers, account_proofs=accounts, storage_proofs=slots, report=report,
                  chain_id=chain_id)  # fmt: skip
    want = slots if slots is not None else accounts
    key = list(piece.dataset.sort)
    values = [c for c in rows.column_names if c in want.column_names and c not in key]
    check_same_rows(piece.name, "state", rows.select(key + values), want.select(key + values), key, report)
    if "code" in rows.column_names and "code_hash" in rows.column_names:
        _same_code_hashes(piece.name, rows, report)


def _same_code_hashes(dataset: str, rows: pa.Table, report: Report) -> None:
    """Each stored code hashes to its row's code hash (which the account's proof proves)."""
    frame = pl.DataFrame(pl.from_arrow(rows.select(["block_number", "address", "code", "code_hash"])))
    distinct = frame["code"].unique()
    hashes = pl.Series([keccak256(c) for c in distinct.to_list()], dtype=pl.Binary())
    computed = frame["code"].replace_strict(distinct, hashes, return_dtype=pl.Binary())
    wrong = frame.with_columns(computed.alias("computed")).filter(pl.col("computed") != pl.col("code_hash"))
    for number, address, _, stored, hashed in wrong.head(3).rows():
        at = f"address 0x{bytes(address).hex()} code_hash 0x{bytes(stored).hex()}"
        report.failures.append(Failure(dataset, number, "code_hash", at, f"keccak of its code 0x{bytes(hashed).hex()}"))
