"""The token-transfer frames researchers start with, as decoded events under the project's names.

ERC-20 and ERC-721 share topic0 (``Transfer(address,address,uint256)``); they differ in whether the third
parameter is indexed, so each reads only its own logs (three topics for ERC-20, four for ERC-721).
"""

from __future__ import annotations

from os import PathLike
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe._errors import DecodeError
from chainframe._u256 import U256
from chainframe.decode._events import decode_event

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

ERC20_TRANSFER = "Transfer(address indexed from_address, address indexed to_address, uint256 value)"
ERC721_TRANSFER = "Transfer(address indexed from_address, address indexed to_address, uint256 indexed token_id)"


def erc20_transfers(
    logs: pl.DataFrame | pl.LazyFrame | pa.Table | str | PathLike[str], *, u256: U256 = "decimal"
) -> Any:
    """ERC-20 transfers: identity columns, ``address`` (the token), ``from_address``, ``to_address``, ``value``."""
    return decode_event(logs, ERC20_TRANSFER, u256=u256)


def erc721_transfers(
    logs: pl.DataFrame | pl.LazyFrame | pa.Table | str | PathLike[str], *, u256: U256 = "decimal"
) -> Any:
    """ERC-721 transfers: identity columns, ``address`` (the collection), ``from_address``, ``to_address``,
    ``token_id`` (by the u256 rule: ids are often hashes wider than 1e38, so ``u256="binary"`` is the safe choice)."""
    return decode_event(logs, ERC721_TRANSFER, u256=u256)


ERC1155_SINGLE = (
    "TransferSingle(address indexed operator, address indexed from_address, address indexed to_address, "
    "uint256 token_id, uint256 value)"
)
ERC1155_BATCH = (
    "TransferBatch(address indexed operator, address indexed from_address, address indexed to_address, "
    "uint256[] token_id, uint256[] value)"
)


def erc1155_transfers(
    logs: pl.DataFrame | pl.LazyFrame | pa.Table | str | PathLike[str], *, u256: U256 = "decimal"
) -> Any:
    """ERC-1155 transfers, single and batch, one row per token id: identity columns, ``address``, ``operator``,
    ``from_address``, ``to_address``, ``token_id``, ``value``, and ``batch_index`` (the id's position in a batch;
    0 for a single transfer). Sorted by block and log, then batch position."""
    single = decode_event(logs, ERC1155_SINGLE, u256=u256)
    batch = decode_event(logs, ERC1155_BATCH, u256=u256)
    arrow = isinstance(single, pa.Table)
    schema = single.schema.append(pa.field("batch_index", pa.uint32())) if arrow else None
    single, batch = (pl.DataFrame(pl.from_arrow(t)) if arrow else t for t in (single, batch))
    lengths = batch.select(pl.col("token_id").list.len() != pl.col("value").list.len()).to_series()
    if lengths.any():
        row = batch.filter(lengths).row(0, named=True)
        where = ", ".join(f"{k} {row[k]}" for k in ("block_number", "log_index") if k in row)
        raise DecodeError(f"TransferBatch at {where}: ids and values differ in length")
    batch = batch.with_columns(batch_index=pl.int_ranges(pl.col("token_id").list.len(), dtype=pl.UInt32))
    batch = batch.explode("token_id", "value", "batch_index")
    single = single.with_columns(batch_index=pl.lit(0, pl.UInt32))
    frame = pl.concat([single, batch.select(single.columns)])
    order = [c for c in ("block_number", "log_index", "batch_index") if c in frame.columns]
    frame = frame.sort(order)
    # Polars has no fixed-size binary: an Arrow caller gets the column table's types back.
    return frame.to_arrow(compat_level=pl.CompatLevel.oldest()).cast(schema) if arrow else frame
