"""The token-transfer tables researchers start with, from logs in memory or a folder: the same decoding as the
``erc20_transfers`` and ``erc721_transfers`` datasets (:mod:`chainframe.datasets._transfers`), which ``extract``
writes to folders. ``token`` is the contract that emitted the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeAlias

import polars as pl
import pyarrow as pa

from chainframe.datasets import ERC20_TRANSFERS, ERC721_TRANSFERS, U256, TokenTransfers
from chainframe.events._abi import events_of
from chainframe.events._decode import logs_frame

ERC20_TRANSFER = ERC20_TRANSFERS.event
ERC721_TRANSFER = ERC721_TRANSFERS.event
Logs: TypeAlias = pa.Table | pl.DataFrame | pl.LazyFrame | str | Path


def erc20_transfers(logs: Logs, *, u256: U256 = "decimal") -> Any:
    """ERC-20 transfers: ``token``, ``from_address``, ``to_address``, ``value`` (mints come from the zero address)."""
    return _transfers(ERC20_TRANSFERS, logs, u256)


def erc721_transfers(logs: Logs) -> Any:
    """ERC-721 transfers: ``token``, ``from_address``, ``to_address``, ``token_id`` (a 32-byte word)."""
    return _transfers(ERC721_TRANSFERS, logs, "binary")


def _transfers(dataset: TokenTransfers, logs: Logs, u256: U256) -> Any:
    frame = logs_frame(logs, events_of(dataset.event))
    table = dataset.from_logs(frame.to_arrow(), u256=u256)
    return pl.from_arrow(table) if isinstance(logs, pl.DataFrame | pl.LazyFrame) else table
