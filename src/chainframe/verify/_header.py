"""A block's hash from its stored columns: keccak(RLP(header)), for every header layout mainnet has had.

The fields are the header's, in its order; each fork appended some (London the base fee, Shanghai the withdrawals
root, Cancun the blob gas fields and the beacon root, Prague the requests hash), so a block's header is the base
fields plus the optional ones it has, up to the first it lacks. A stored block whose columns hash to its
``block_hash`` holds exactly its header: every field a check proves against is then proven too.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from chainframe.decode import keccak256 as keccak
from chainframe.verify._rlp import encode, uint

BASE = ("parent_hash", "sha3_uncles", "miner", "state_root", "transactions_root", "receipts_root", "logs_bloom",
        "difficulty", "block_number", "gas_limit", "gas_used", "timestamp", "extra_data", "mix_hash",
        "block_nonce")  # fmt: skip
LATER = ("base_fee_per_gas", "withdrawals_root", "blob_gas_used", "excess_blob_gas", "parent_beacon_block_root",
         "requests_hash")  # fmt: skip
HEADER_COLUMNS = BASE + LATER


def _field(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, Decimal):
        return uint(int(value))
    if isinstance(value, int):
        return uint(value)
    raise TypeError(f"cannot encode {value!r} in a header")


def header_hash(block: dict[str, Any]) -> bytes | None:
    """keccak(RLP(header)) of a stored block row (a dict of its columns); None if a base field is missing."""
    if any(block.get(name) is None for name in BASE):
        return None
    fields = [_field(block[name]) for name in BASE]
    for name in LATER:
        if block.get(name) is None:
            break
        value = block[name]
        # A 32-byte word column (u256="binary") holds base fees as words: RLP wants the integer.
        fields.append(uint(int.from_bytes(value, "big")) if name == "base_fee_per_gas" and isinstance(value, bytes)
                      else _field(value))  # fmt: skip
    return keccak(encode(fields))
