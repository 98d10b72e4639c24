"""The token-transfer frames researchers start with, as decoded ``Transfer`` events under the project's names.

ERC-20 and ERC-721 share topic0 (``Transfer(address,address,uint256)``); they differ in whether the third
parameter is indexed, so each reads only its own logs (three topics for ERC-20, four for ERC-721).
"""

from __future__ import annotations

from os import PathLike
from typing import Any

import polars as pl
import pyarrow as pa

from chainframe.datasets import U256
from chainframe.decode._events import decode_event

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
