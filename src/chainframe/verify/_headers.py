"""Block hash = keccak(RLP(header)): proves that the stored block columns are exactly the header the chain hashed.

The header grew over the forks by appending fields; a field is in the RLP list when the block has it (London
``base_fee_per_gas``, Shanghai ``withdrawals_root``, Cancun blob gas and beacon root, Prague ``requests_hash``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa

from chainframe.families import ChainFamily
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


def header_rlp(row: dict[str, Any], family: ChainFamily | None = None) -> bytes | None:
    """The RLP of the header a ``blocks`` row stores (as ``family`` lists a header's fields, Ethereum's by default),
    or None when a field every header has is missing."""
    items = header_items(row, *_fields(family))
    return None if items is None else rlp(items)


def _fields(family: ChainFamily | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The header's fields every header has, and those later forks appended, as ``family`` declares them."""
    return family.header_fields if family is not None and family.header_fields is not None else (FIXED, LATER)


def header_items(
    row: dict[str, Any], fixed: tuple[str, ...] = FIXED, later: tuple[str, ...] = LATER
) -> list[RlpItem] | None:
    """The header a ``blocks`` (or ``uncles``) row stores as an RLP list, or None when a field is missing."""
    if any(row.get(name) is None for name in fixed):
        return None
    items: list[RlpItem] = []
    for name in fixed:
        items.append(integer(row[name]) if name == "difficulty" else _field(row[name]))
    for name in later:
        if row.get(name) is None:
            break
        items.append(integer(row[name]) if name == "base_fee_per_gas" else _field(row[name]))
    return items


def _encoded(column: pa.ChunkedArray | pa.Array, name: str) -> list[Any]:
    """Each value of a header column as :func:`header_items` puts it in the header's RLP list (None: null): bytes as
    they are and unsigned integers minimal, read from the buffers where there are no nulls (``to_pylist`` makes an
    Arrow scalar of each value first)."""
    import numpy as np

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    number = name in ("difficulty", "base_fee_per_gas")
    if not array.null_count and pa.types.is_fixed_size_binary(array.type) and not number:
        width = array.type.byte_width
        data = array.buffers()[1].to_pybytes()[width * array.offset : width * (array.offset + len(array))]
        return [data[i : i + width] for i in range(0, len(data), width)]
    if not array.null_count and pa.types.is_unsigned_integer(array.type):
        kind = np.dtype(f"uint{array.type.bit_width}")
        values = np.frombuffer(array.buffers()[1], dtype=kind, count=len(array), offset=kind.itemsize * array.offset)
        return [uint(v) for v in values.tolist()]
    listed: list[Any] = array.to_pylist()
    if (pa.types.is_binary(array.type) or pa.types.is_fixed_size_binary(array.type)) and not number:
        return listed
    encode = integer if number else _field
    return [None if value is None else encode(value) for value in listed]


def check_block_hashes(blocks: pa.Table, report: Report, *, family: ChainFamily | None = None) -> None:
    """keccak(RLP(header)) of each row is its ``block_hash``, the header's fields as ``family`` lists them (Ethereum's
    by default). The fields are encoded column by column, and each row's list of them (the fixed fields, then the
    later forks' up to the first null) hashed in C."""
    names, appended = _fields(family)
    if any(name not in blocks.column_names for name in names):
        _row_by_row(blocks, report, family)  # no row has a whole header: each is counted as such
        return
    try:
        fixed = list(zip(*(_encoded(blocks[name], name) for name in names), strict=True))
        later = [_encoded(blocks[name], name) for name in appended if name in blocks.column_names]
    except TypeError:  # a column of a type no header field has: the reference names the row it fails on
        _row_by_row(blocks, report, family)
        return
    numbers = blocks["block_number"].to_pylist()
    hashes = blocks["block_hash"].to_pylist() if "block_hash" in blocks.column_names else [None] * blocks.num_rows
    if len(later) < len(appended):  # a field missing: the ones after it are not read either
        later = later[: next(i for i, name in enumerate(appended) if name not in blocks.column_names)]
    missing = 0
    proven = 0
    for i, (items, stored) in enumerate(zip(fixed, hashes, strict=True)):
        if stored is None or None in items:
            missing += 1
            continue
        header: list[RlpItem] = list(items)
        for column in later:
            if column[i] is None:
                break
            header.append(column[i])
        computed = keccak(rlp(header))
        if computed != stored:
            failure = Failure("blocks", numbers[i], "block_hash", "0x" + stored.hex(), "0x" + computed.hex())
            report.failures.append(failure)
        proven += 1
    report.skip("blocks", "block_hash", "a header field (nonce, mix hash, ...) is not stored for these blocks",
                blocks=missing)  # fmt: skip
    report.count("blocks", blocks=proven, rows=proven)


def _row_by_row(blocks: pa.Table, report: Report, family: ChainFamily | None = None) -> None:
    """:func:`check_block_hashes` a row at a time from its dict (the reference)."""
    fixed, later = _fields(family)
    names = [n for n in (*fixed, *later, "block_hash") if n in blocks.column_names]
    missing = 0
    proven = 0
    for row in blocks.select(names).to_pylist():
        encoded = header_rlp(row, family)
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
