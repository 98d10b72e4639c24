"""Typed columnar datasets: one module per dataset, all sharing one table of column names and types
(:mod:`chainframe.datasets._columns`), each with a pure, vectorized ``transform`` from answer bytes to Arrow."""

from chainframe.datasets._blocks import BLOCKS, TRANSACTIONS
from chainframe.datasets._columns import COLUMNS, U256, Column
from chainframe.datasets._convert import DecodeError, ValueOutOfRange
from chainframe.datasets._dataset import BlockRange, Dataset
from chainframe.datasets._ether import wei_to_ether
from chainframe.datasets._hex_view import hex_view, register_duckdb
from chainframe.datasets._logs import LOGS
from chainframe.datasets._proofs import ACCOUNT_PROOFS, STORAGE_PROOFS
from chainframe.datasets._receipts import RECEIPTS
from chainframe.datasets._traces import CALL_TRACES, PRESTATE_ACCOUNTS, PRESTATE_STORAGE
from chainframe.datasets._transfers import ERC20_TRANSFERS, ERC721_TRANSFERS, ERC1155_TRANSFERS, TokenTransfers
from chainframe.datasets._uncles import UNCLES

DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        BLOCKS,
        TRANSACTIONS,
        RECEIPTS,
        LOGS,
        UNCLES,
        ACCOUNT_PROOFS,
        STORAGE_PROOFS,
        CALL_TRACES,
        PRESTATE_ACCOUNTS,
        PRESTATE_STORAGE,
        ERC20_TRANSFERS,
        ERC721_TRANSFERS,
        ERC1155_TRANSFERS,
    )
}
"""Every dataset by name: the one place they are registered."""

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
    "LOGS",
    "PRESTATE_ACCOUNTS",
    "PRESTATE_STORAGE",
    "RECEIPTS",
    "STORAGE_PROOFS",
    "TRANSACTIONS",
    "TokenTransfers",
    "U256",
    "UNCLES",
    "ValueOutOfRange",
    "hex_view",
    "register_duckdb",
    "wei_to_ether",
]
