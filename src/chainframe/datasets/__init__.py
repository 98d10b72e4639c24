"""Typed columnar datasets: one module per dataset, all sharing one table of column names and types
(:mod:`chainframe.datasets._columns`), each with a pure, vectorized ``transform`` from answer bytes to Arrow.

Every dataset is declared whole by its class (:class:`Dataset`) and listed by one line of the catalogue
(:mod:`chainframe.datasets._registry`). Names load on first use, so reading the catalogue costs no pyarrow import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainframe._lazy import names_from
from chainframe.datasets._registry import datasets as _catalogue
from chainframe.datasets._registry import register, unregister

if TYPE_CHECKING:
    from chainframe.datasets._blocks import BLOCKS, TRANSACTIONS
    from chainframe.datasets._columns import COLUMNS, U256, Column
    from chainframe.datasets._convert import DecodeError, ValueOutOfRange
    from chainframe.datasets._dataset import BlockRange, Dataset, Fetch, RowChecks, build_arrow, spread_blocks
    from chainframe.datasets._ether import wei_to_ether
    from chainframe.datasets._hex_view import hex_view, register_duckdb
    from chainframe.datasets._inputs import Input
    from chainframe.datasets._logs import LOGS, matches_filter, with_block_timestamps
    from chainframe.datasets._native import null_result
    from chainframe.datasets._proof import Offline, Proof
    from chainframe.datasets._proofs import ACCOUNT_PROOFS, STORAGE_PROOFS
    from chainframe.datasets._receipts import RECEIPTS
    from chainframe.datasets._traces import CALL_TRACES, PRESTATE_ACCOUNTS, PRESTATE_STORAGE
    from chainframe.datasets._transfers import ERC20_TRANSFERS, ERC721_TRANSFERS, ERC1155_TRANSFERS, TokenTransfers
    from chainframe.datasets._uncles import UNCLES

    DATASETS: dict[str, Dataset]
    """Every dataset by name: the catalogue's, in its order, then any added with :func:`register`."""

_WHERE = {
    "BLOCKS": "_blocks",
    "TRANSACTIONS": "_blocks",
    "COLUMNS": "_columns",
    "U256": "_columns",
    "Column": "_columns",
    "DecodeError": "_convert",
    "ValueOutOfRange": "_convert",
    "BlockRange": "_dataset",
    "Dataset": "_dataset",
    "null_result": "_native",
    "build_arrow": "_dataset",
    "Fetch": "_dataset",
    "Offline": "_proof",
    "Proof": "_proof",
    "RowChecks": "_dataset",
    "spread_blocks": "_dataset",
    "Input": "_inputs",
    "wei_to_ether": "_ether",
    "hex_view": "_hex_view",
    "register_duckdb": "_hex_view",
    "LOGS": "_logs",
    "with_block_timestamps": "_logs",
    "matches_filter": "_logs",
    "ACCOUNT_PROOFS": "_proofs",
    "STORAGE_PROOFS": "_proofs",
    "RECEIPTS": "_receipts",
    "CALL_TRACES": "_traces",
    "PRESTATE_ACCOUNTS": "_traces",
    "PRESTATE_STORAGE": "_traces",
    "ERC20_TRANSFERS": "_transfers",
    "ERC721_TRANSFERS": "_transfers",
    "ERC1155_TRANSFERS": "_transfers",
    "TokenTransfers": "_transfers",
    "UNCLES": "_uncles",
}
_named = names_from(__name__, _WHERE)


def __getattr__(name: str) -> Any:
    if name == "DATASETS":  # not kept: register() and unregister() change it
        return _catalogue()
    return _named(name)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ACCOUNT_PROOFS",
    "BLOCKS",
    "BlockRange",
    "CALL_TRACES",
    "COLUMNS",
    "Column",
    "DATASETS",
    "Dataset",
    "DecodeError",
    "ERC1155_TRANSFERS",
    "ERC20_TRANSFERS",
    "ERC721_TRANSFERS",
    "Fetch",
    "Input",
    "LOGS",
    "Offline",
    "PRESTATE_ACCOUNTS",
    "PRESTATE_STORAGE",
    "Proof",
    "RECEIPTS",
    "RowChecks",
    "STORAGE_PROOFS",
    "TRANSACTIONS",
    "TokenTransfers",
    "U256",
    "UNCLES",
    "ValueOutOfRange",
    "build_arrow",
    "hex_view",
    "matches_filter",
    "null_result",
    "register",
    "register_duckdb",
    "spread_blocks",
    "unregister",
    "wei_to_ether",
    "with_block_timestamps",
]
