"""The token-transfer tables researchers start with, decoded from logs: ERC-20 and ERC-721 ``Transfer`` events (the
same topic0; ERC-721 indexes the token id, so its logs have four topics and are never read as ERC-20 ones).
``token`` is the contract that emitted the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from chainframe.datasets import U256
from chainframe.events._decode import decode_events

ERC20_TRANSFER = "Transfer(address indexed from_address, address indexed to_address, uint256 value)"
ERC721_TRANSFER = "Transfer(address indexed from_address, address indexed to_address, uint256 indexed token_id)"


def _with_token(table: Any) -> Any:
    if isinstance(table, pl.DataFrame):
        return table.rename({"address": "token"})
    return table.rename_columns(["token" if c == "address" else c for c in table.column_names])


def erc20_transfers(logs: pa.Table | pl.DataFrame | pl.LazyFrame | str | Path, *, u256: U256 = "decimal") -> Any:
    """ERC-20 transfers: ``token``, ``from_address``, ``to_address``, ``value`` (mints come from the zero address)."""
    return _with_token(decode_events(logs, ERC20_TRANSFER, u256=u256))


def erc721_transfers(logs: pa.Table | pl.DataFrame | pl.LazyFrame | str | Path, *, u256: U256 = "decimal") -> Any:
    """ERC-721 transfers: ``token``, ``from_address``, ``to_address``, ``token_id``."""
    return _with_token(decode_events(logs, ERC721_TRANSFER, u256=u256))
