"""``verify=True``: each piece's rows proven against its blocks' headers before they are kept.

For a piece of blocks the engine fetches the headers (``eth_getBlockByNumber``) and, for logs and receipts, the
blocks' receipts (``eth_getBlockReceipts``), then runs :func:`chainframe.verify.verify_tables` on them with the rows:

- every header hashes to its block hash (all header fields are what the node signed off);
- ``blocks``: the rows are headers themselves; ``transactions``: ``transactionsRoot``; ``receipts``: ``receiptsRoot``
  (with the logs inside the same answers); ``uncles``: ``sha3Uncles``; ``account_proofs`` and ``storage_proofs``: the
  proofs against ``stateRoot``;
- logs (plain, filtered, ``event=`` series and the token transfers): the blocks' receipts are proven against
  ``receiptsRoot`` and ``logsBloom``, and the logs kept must be exactly the receipts' logs that match the filter
  (a dropped, added or altered log fails ``log_set``);
- every row's block hash is its header's.

A failed check is :class:`~chainframe.engine._answers.WrongAnswer`: the piece is fetched again, then the error names
the method, blocks, endpoint and the check with both values. Call traces have no header field that commits to them:
they are reported as skipped, with the reason, never as verified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa

from chainframe.datasets import BLOCKS, LOGS, RECEIPTS, BlockRange
from chainframe.engine._answers import WrongAnswer

LOG_DATASETS = frozenset({"logs", "erc20_transfers", "erc721_transfers", "erc1155_transfers"})
_TABLE_ARGUMENT = {
    "blocks": "blocks", "transactions": "transactions", "receipts": "receipts", "uncles": "uncles",
    "account_proofs": "account_proofs", "storage_proofs": "storage_proofs",
}  # fmt: skip
_UNPROVABLE = {
    "call_traces": "no header field commits to execution traces",
    "prestate_accounts": "no header field commits to execution traces",
    "prestate_storage": "no header field commits to execution traces",
}
_LOG_KEY = ("block_number", "log_index", "transaction_index", "transaction_hash", "block_hash", "address", "topics",
            "data")  # fmt: skip


@dataclass
class Material:
    """What a piece is proven against: its blocks' headers, and their receipts where the dataset needs them."""

    headers: list[bytes]
    receipts: list[bytes] = field(default_factory=list)


@dataclass
class Proven:
    """Blocks and rows proven, and the checks skipped (with why), for a run's report."""

    blocks: int = 0
    rows: int = 0
    skipped: dict[str, str] = field(default_factory=dict)

    def add(self, other: Proven) -> None:
        self.blocks += other.blocks
        self.rows += other.rows
        self.skipped.update(other.skipped)


async def material(client: Any, dataset: str, part: BlockRange) -> Material | None:
    """Fetch what ``dataset``'s rows for ``part`` are proven against (None: nothing can prove them)."""
    if dataset in _UNPROVABLE:
        return None
    if dataset == "blocks":
        return Material([])  # the rows are the headers
    headers = await BLOCKS.fetch(client, part)
    receipts = await RECEIPTS.fetch(client, part) if dataset in LOG_DATASETS else []
    return Material(headers, receipts)


def verify_piece(
    dataset: str,
    rows: pa.Table,
    part: BlockRange,
    proof: Material | None,
    *,
    chain_id: int,
    filters: Mapping[str, Any],
    bodies: Sequence[bytes] = (),
) -> Proven:
    """Prove ``rows`` (the dataset's rows for ``part``; for the log datasets, the logs before decoding) or raise
    :class:`WrongAnswer` naming the first failure. ``bodies``: the rows' own answers (receipts carry their logs)."""
    if proof is None:
        return Proven(skipped={dataset: _UNPROVABLE.get(dataset, "nothing to prove it against")})
    from chainframe.verify import Report, verify_tables

    # The blocks dataset's rows are the headers; every other dataset is proven against headers fetched for it.
    headers = rows if dataset == "blocks" else BLOCKS.transform(proof.headers, chain_id=chain_id, u256="binary")
    report = Report()
    tables: dict[str, pa.Table] = {}
    if dataset in LOG_DATASETS:
        receipts = RECEIPTS.transform(proof.receipts, chain_id=chain_id, u256="binary")
        logs = LOGS.from_receipts(proof.receipts, chain_id=chain_id, u256="binary")
        verify_tables(blocks=headers, receipts=receipts, logs=logs, report=report)
        _same_logs(rows, logs, filters, report)
    elif dataset == "receipts":
        logs = LOGS.from_receipts(list(bodies), chain_id=chain_id, u256="binary")
        verify_tables(blocks=headers, receipts=rows, logs=logs, report=report)
    elif dataset == "blocks":
        verify_tables(blocks=rows, report=report)
    else:
        tables[_TABLE_ARGUMENT[dataset]] = rows
        verify_tables(blocks=headers, report=report, **tables)
    _same_block_hashes(dataset, rows, headers, report)
    if report.failures:
        first = report.failures[0]
        more = f" (and {len(report.failures) - 1} more)" if len(report.failures) > 1 else ""
        raise WrongAnswer(
            f"block {first.block_number}: the header or receipts say {first.expected}, the rows give {first.actual}"
            f"{more}",
            check=f"verify {first.check}",
        )
    return Proven(
        blocks=len(part),
        rows=rows.num_rows,
        skipped={f"{s.dataset} {s.check}": s.reason for s in report.skipped},
    )


def _same_block_hashes(dataset: str, rows: pa.Table, headers: pa.Table, report: Any) -> None:
    """Every row's block hash is the proven header's (a row from another fork would otherwise pass)."""
    from chainframe.verify import Failure

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
        report.failures.append(Failure(dataset, number, "row_block_hash", shown, "0x" + bytes(stored).hex()))


def _same_logs(rows: pa.Table, proven: pa.Table, filters: Mapping[str, Any], report: Any) -> None:
    """The logs kept are exactly the proven receipts' logs that match the filter: none dropped, added or changed."""
    from chainframe.engine._logs import matches
    from chainframe.verify import Failure

    want = pl.DataFrame(pl.from_arrow(proven.select(list(_LOG_KEY))))
    have = pl.DataFrame(pl.from_arrow(rows.select(list(_LOG_KEY))))
    if filters.get("address") or filters.get("topics"):
        want = want.filter(matches(filters))
    key = ["block_number", "log_index"]
    values = [c for c in _LOG_KEY if c not in key]
    joined = want.join(have, on=key, how="full", suffix="_kept", coalesce=True)
    differ = pl.any_horizontal([pl.col(c).ne_missing(pl.col(f"{c}_kept")) for c in values])
    for row in joined.filter(differ).sort(key).head(3).iter_rows(named=True):
        if row["address"] is None:
            expected, actual = "no such log", f"a log at log_index {row['log_index']}"
        elif row["address_kept"] is None:
            expected, actual = f"a log at log_index {row['log_index']}", "none"
        else:
            column = next(c for c in values if row[c] != row[f"{c}_kept"])
            expected = f"log_index {row['log_index']} {column} {_shown(row[column])}"
            actual = _shown(row[f"{column}_kept"])
        report.failures.append(Failure("logs", row["block_number"], "log_set", expected, actual))


def _shown(value: Any) -> str:
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return str(value)
