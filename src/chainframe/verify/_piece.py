"""One piece of a dataset's rows proven against what its proof read (:class:`Piece`), and the checks of the catalogue's
proofs of the chain's own structures: each is named by a :class:`~chainframe.datasets.Proof`'s ``check``.

The engine fetches what a dataset's proof declares it reads (an extraction's pieces, and ``verify --rpc``'s stored
rows), builds a :class:`Piece` and runs the declared check on it; a check adds its failures, skips and notes to the
piece's report and knows nothing of the run. A check of one's own (a test's kind of proof) is a function of the same
shape anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe.datasets import ACCOUNT_PROOFS, BLOCKS, RECEIPTS, TRANSACTIONS, U256, BlockRange, Dataset, Proof
from chainframe.families import ChainFamily, family_of
from chainframe.verify._answers import receipts_and_logs
from chainframe.verify._derived import check_header_columns, check_not_removed
from chainframe.verify._report import Failure, Report
from chainframe.verify._rows import check_log_set, check_same_rows
from chainframe.verify._tables import verify_tables

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

_NOT_IN_RECEIPTS = frozenset({"chain_id", "block_timestamp", "block_time", "removed"})
"""Log columns a receipt's logs do not carry (or that are ours): not compared."""


def _unknown(answers: Sequence[bytes], of: Hashable) -> bool:
    return False


@dataclass
class Piece:
    """A dataset's rows of some blocks, with the answers its proof read: what a proof's check is given."""

    dataset: Dataset
    name: str
    """The series, as the report names it."""
    rows: pa.Table
    """The rows (in an extraction of logs: the logs before they are made into rows)."""
    blocks: BlockRange
    answers: Mapping[Dataset, Sequence[bytes]]
    """What the proof read, by the dataset whose answers they are (what its proof's ``material`` fetched)."""
    report: Report
    """The check's own: its failures, skips and notes (the caller counts the rows)."""
    chain_id: int
    filters: Mapping[str, Any]
    u256: U256 = "decimal"
    """How the rows hold wei."""
    bodies: Sequence[bytes] = ()
    """The rows' own answers, in an extraction; empty for stored rows."""
    proven: Callable[[Sequence[bytes], Hashable], bool] = _unknown
    """Whether these answers were proven to be that dataset's already, by another dataset of the run (the same
    answers: nothing is proven twice)."""
    family: ChainFamily | None = None
    """The chain family whose rules the rows follow (``--chain-family``); None: the chain id's."""

    @property
    def chain_family(self) -> ChainFamily:
        """The family the checks apply: the one given, else the chain id's (Ethereum's for a chain no family knows)."""
        return self.family if self.family is not None else family_of(self.chain_id)

    @property
    def proof(self) -> Proof:
        """The declaration being run (its reasons for what it skips, say)."""
        assert self.dataset.proof is not None  # a piece is proven by its dataset's proof
        return self.dataset.proof

    def of(self, dataset: Dataset) -> Sequence[bytes]:
        """The answers of ``dataset`` that the proof read."""
        return self.answers.get(dataset, ())

    @cached_property
    def headers(self) -> pa.Table:
        """The blocks' headers the proof read, as the blocks dataset's rows (wei as words)."""
        return BLOCKS.transform(list(self.of(BLOCKS)), chain_id=self.chain_id, u256="binary")

    @property
    def headers_proven(self) -> bool:
        """The headers were proven by another dataset of the run: their own checks are not repeated."""
        return self.proven(self.of(BLOCKS), BLOCKS)

    def transactions_proven(self, answers: Sequence[bytes]) -> frozenset[str]:
        """``verify_tables``'s ``proven``: the transactions, where these full blocks were proven already."""
        return frozenset({TRANSACTIONS.name}) if self.proven(answers, TRANSACTIONS) else frozenset()


def prove_headers(piece: Piece) -> None:
    """The rows are headers: each hashes to its block hash."""
    verify_tables(blocks=piece.rows, report=piece.report, chain_id=piece.chain_id, family=piece.chain_family)


def prove_transactions(piece: Piece) -> None:
    verify_tables(blocks=piece.headers, transactions=piece.rows, report=piece.report, chain_id=piece.chain_id,
                  headers=not piece.headers_proven, proven=piece.transactions_proven(piece.bodies),
                  family=piece.chain_family)  # fmt: skip


def prove_receipts(piece: Piece) -> None:
    """The receipts root, rebuilt with the logs of the rows' own answers (stored receipts: of the node's receipts,
    their logs not being stored with them), and what the receipts say of their transactions."""
    _, logs = receipts_and_logs(list(piece.bodies or piece.of(RECEIPTS)), chain_id=piece.chain_id)
    answers = piece.of(TRANSACTIONS)
    transactions = TRANSACTIONS.transform(list(answers), chain_id=piece.chain_id, u256="binary")
    ours = frozenset({RECEIPTS.name}) if piece.proven(piece.bodies, RECEIPTS) else frozenset()  # by the logs
    verify_tables(blocks=piece.headers, receipts=piece.rows, logs=logs, transactions=transactions, report=piece.report,
                  chain_id=piece.chain_id, headers=not piece.headers_proven,
                  proven=piece.transactions_proven(answers) | ours, family=piece.chain_family)  # fmt: skip
    _node_repeats(piece.report)


def prove_logs(piece: Piece) -> None:
    """The blocks' receipts against the receipts root and the logs bloom; the rows exactly the receipts' logs their
    filter matches (or what the dataset makes of them); the columns the receipts' logs lack, against the headers."""
    known, found, headers, rows = piece.headers_proven, piece.report, piece.headers, piece.rows
    receipts, logs = receipts_and_logs(list(piece.of(RECEIPTS)), chain_id=piece.chain_id)
    if not (known and piece.proven(piece.of(RECEIPTS), RECEIPTS)):
        verify_tables(blocks=headers, receipts=receipts, logs=logs, report=found, headers=not known,
                      chain_id=piece.chain_id, family=piece.chain_family)  # fmt: skip
    check_log_set(piece.dataset, rows, logs, piece.filters, found, u256=piece.u256, leave=_NOT_IN_RECEIPTS)
    # Columns a receipt's logs do not carry: the rows' own block columns, chain and removed flag.
    check_header_columns(piece.name, rows, headers, found, chain_id=piece.chain_id,
                         columns=("block_timestamp", "block_time", "chain_id"))  # fmt: skip
    check_not_removed(piece.name, rows, found)
    same_block_hashes(piece.name, rows, headers, found)  # the other datasets': verify_tables's row_block_hash
    _node_repeats(found)


def prove_uncles(piece: Piece) -> None:
    verify_tables(blocks=piece.headers, uncles=piece.rows, report=piece.report, chain_id=piece.chain_id,
                  family=piece.chain_family)  # fmt: skip


def prove_accounts(piece: Piece) -> None:
    verify_tables(blocks=piece.headers, account_proofs=piece.rows, report=piece.report, chain_id=piece.chain_id,
                  family=piece.chain_family)  # fmt: skip


def prove_slots(piece: Piece) -> None:
    """A slot's proof hangs from its account's storage hash, proven by the account's proof against the state root:
    the rows' own eth_getProof answers carry it, stored rows have the accounts' proofs fetched again."""
    answers = list(piece.bodies or piece.of(ACCOUNT_PROOFS))
    accounts = ACCOUNT_PROOFS.transform(answers, chain_id=piece.chain_id, u256="binary") if answers else None
    verify_tables(blocks=piece.headers, account_proofs=accounts, storage_proofs=piece.rows, report=piece.report,
                  chain_id=piece.chain_id, family=piece.chain_family)  # fmt: skip


def prove_derived(piece: Piece) -> None:
    """Rows computed from transactions (and receipts): those are proven against the headers, then the rows must be
    exactly what the dataset computes from them (none dropped, added or changed)."""
    dataset = piece.dataset
    transaction_answers, receipt_answers = (
        dataset.inputs_of(piece.bodies) if piece.bodies else (list(piece.of(TRANSACTIONS)), list(piece.of(RECEIPTS)))
    )
    if piece.bodies and dataset.derived_fetched is not None and TRANSACTIONS not in dataset.derived_fetched:
        transaction_answers = list(piece.of(TRANSACTIONS))  # its rows' answers hold none: the proof read them
    transactions = TRANSACTIONS.transform(transaction_answers, chain_id=piece.chain_id, u256="binary")
    receipts = logs = None
    if RECEIPTS in dataset.derived_from:
        receipts, logs = receipts_and_logs(receipt_answers, chain_id=piece.chain_id)
    verify_tables(blocks=piece.headers, transactions=transactions, receipts=receipts, logs=logs, report=piece.report,
                  chain_id=piece.chain_id, family=piece.chain_family)  # fmt: skip
    want = dataset.derive(transactions, receipts, logs, chain_id=piece.chain_id)
    check_same_rows(piece.name, "derived_rows", piece.rows, want, list(dataset.sort), piece.report)


_NODE_REPEATS = (
    " in the node's own receipts: its answers give two logs of one block the same logIndex (a node that numbers them"
    " per transaction), an inconsistency of the node, not a sign that stored data was changed"
)


def _node_repeats(report: Report) -> None:
    """A repeated (block, log index) found among the logs of the node's receipts, said to be the node's."""
    report.failures[:] = [
        replace(f, actual=f.actual + _NODE_REPEATS) if f.check == "log_unique" else f for f in report.failures
    ]


def same_block_hashes(dataset: str, rows: pa.Table, headers: pa.Table, report: Report) -> None:
    """Every row's block hash is the proven header's (a row from another fork would otherwise pass)."""
    if rows.num_rows == 0 or "block_hash" not in rows.column_names or "block_number" not in rows.column_names:
        return
    have = pl.DataFrame(pl.from_arrow(rows.select(["block_number", "block_hash"])))
    want = pl.DataFrame(pl.from_arrow(headers.select(["block_number", "block_hash"]))).rename(
        {"block_hash": "header_hash"}
    )
    wrong = have.join(want, on="block_number", how="left").filter(
        pl.col("header_hash").is_null() | (pl.col("block_hash") != pl.col("header_hash"))
    )
    for number, stored, header in wrong.unique("block_number").sort("block_number").head(3).rows():
        shown = "no header" if header is None else "0x" + bytes(header).hex()
        report.failures.append(Failure(dataset, number, "row_block_hash", "0x" + bytes(stored).hex(), shown))
