"""``withdrawalsRoot`` from the block's withdrawals (Shanghai): the trie of RLP([index, validator, address, gwei])."""

from __future__ import annotations

import pyarrow as pa

from chainframe.verify._hashing import rlp, uint
from chainframe.verify._report import Failure, Report
from chainframe.verify._trie import ordered_root


def check_withdrawals_roots(blocks: pa.Table, report: Report) -> None:
    if "withdrawals_root" not in blocks.column_names:
        return
    names = ["block_number", "withdrawals", "withdrawals_root"]
    for row in blocks.select(names).to_pylist():
        if row["withdrawals_root"] is None:
            continue  # before Shanghai the header has no such field; the block hash already proves its absence
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
