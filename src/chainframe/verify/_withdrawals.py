"""``withdrawalsRoot`` from the block's withdrawals (Shanghai): the trie of RLP([index, validator, address, gwei])."""

from __future__ import annotations

import pyarrow as pa

from chainframe.families import ETHEREUM, ChainFamily
from chainframe.verify._hashing import rlp, uint
from chainframe.verify._report import Failure, Report
from chainframe.verify._trie import ordered_root


def check_withdrawals_roots(
    blocks: pa.Table, report: Report, *, family: ChainFamily = ETHEREUM, chain_id: int | None = None
) -> None:
    """Each header's ``withdrawals_root`` is the root of its block's withdrawals, where ``family`` says the header
    commits to them at the block's time (else skipped with its reason)."""
    if "withdrawals_root" not in blocks.column_names:
        return
    names = ["block_number", "timestamp", "withdrawals", "withdrawals_root"]
    for row in blocks.select([n for n in names if n in blocks.column_names]).to_pylist():
        if row["withdrawals_root"] is None:
            continue  # before Shanghai the header has no such field; the block hash already proves its absence
        why = family.withdrawals_root(chain_id, row["timestamp"]) if row.get("timestamp") is not None else None
        if why is not None:
            report.skip("blocks", "withdrawals_root", why, blocks=1)
            continue
        items = [
            rlp([uint(w["index"]), uint(w["validator_index"]), w["address"], uint(w["amount"])])
            for w in row["withdrawals"] or []
        ]
        computed = ordered_root(items)
        if computed != row["withdrawals_root"]:
            report.failures.append(
                Failure(
                    "blocks",
                    row["block_number"],
                    "withdrawals_root",
                    "0x" + row["withdrawals_root"].hex(),
                    "0x" + computed.hex(),
                )
            )
