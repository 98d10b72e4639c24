"""Block hash = keccak(RLP(header)): proves that the stored block columns are exactly the header the chain hashed.

The header grew over the forks by appending fields; a field is in the RLP list when the block has it (London
``base_fee_per_gas``, Shanghai ``withdrawals_root``, Cancun blob gas and beacon root, Prague ``requests_hash``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa

from chainframe.verify._hashing import RlpItem, keccak, rlp, uint
from chainframe.verify._report import Failure, Report

FIXED = (
    "parent_hash", "sha3_uncles", "miner", "state_root", "transactions_root", "receipts_root", "logs_bloom",
    "difficulty", "block_number", "gas_limit", "gas_used", "timestamp", "extra_data", "mix_hash", "block_nonce",
)  # fmt: skip
# Appended by later forks, in this order; a block carries a prefix of them.
LATER = ("base_fee_per_gas", "withdrawals_root", "blob_gas_used", "excess_blob_gas", "parent_beacon_block_root",
         "requests_hash")  # fmt: skip


def _field(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, int | Decimal):
        return uint(int(value))
    raise TypeError(f"cannot encode {type(value).__name__} in a header")


def integer(value: Any) -> bytes:
    # Wei columns are decimal128 by default, or 32-byte words with u256="binary": both mean an integer here.
    return uint(int.from_bytes(value, "big")) if isinstance(value, bytes) else _field(value)


def header_rlp(row: dict[str, Any]) -> bytes | None:
    """The RLP of the header a ``blocks`` row stores, or None when a field every header has is missing."""
    items = header_items(row)
    return None if items is None else rlp(items)


def header_items(row: dict[str, Any]) -> list[RlpItem] | None:
    """The header a ``blocks`` (or ``uncles``) row stores as an RLP list, or None when a field is missing."""
    if any(row.get(name) is None for name in FIXED):
        return None
    items: list[RlpItem] = []
    for name in FIXED:
        items.append(integer(row[name]) if name == "difficulty" else _field(row[name]))
    for name in LATER:
        if row.get(name) is None:
            break
        items.append(integer(row[name]) if name == "base_fee_per_gas" else _field(row[name]))
    return items


def check_block_hashes(blocks: pa.Table, report: Report) -> None:
    names = [n for n in (*FIXED, *LATER, "block_hash") if n in blocks.column_names]
    missing = 0
    proven = 0
    for row in blocks.select(names).to_pylist():
        encoded = header_rlp(row)
        if encoded is None or row.get("block_hash") is None:
            missing += 1
            continue
        computed = keccak(encoded)
        if computed != row["block_hash"]:
            report.failures.append(
                Failure(
                    "blocks", row["block_number"], "block_hash", "0x" + row["block_hash"].hex(), "0x" + computed.hex()
                )
            )
        proven += 1
    report.skip("blocks", "block_hash", "a header field (nonce, mix hash, ...) is not stored for these blocks",
                blocks=missing)  # fmt: skip
    report.count("blocks", blocks=proven, rows=proven)
