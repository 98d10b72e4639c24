"""erc20_transfers, erc721_transfers and erc1155_transfers: token transfers, fetched with eth_getLogs filtered by
their events' topic0 (and the ``address`` filter, if any), decoded from the logs by :mod:`chainframe.decode`, so a
folder holds the same table ``chainframe.erc20_transfers(logs)`` gives in memory. ERC-721 transfers index the token
id, so their logs have four topics and are never read as ERC-20 ones (three), and the reverse."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyarrow._compute import call_function

from chainframe import _kernels as pc
from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import BlockRange
from chainframe.datasets._inputs import ADDRESS
from chainframe.datasets._logs import LOGS, FetchedAsLogs

if TYPE_CHECKING:
    from chainframe import decode
    from chainframe.decode import Event
else:
    from chainframe._lazy import decode

# The decoder's event signatures, written here too: the datasets package must not import the decoder at import time.
ERC20_TRANSFER = "Transfer(address indexed from_address, address indexed to_address, uint256 value)"
ERC721_TRANSFER = "Transfer(address indexed from_address, address indexed to_address, uint256 indexed token_id)"
ERC1155_SINGLE_TOPIC0 = "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62"
ERC1155_BATCH_TOPIC0 = "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb"
TRANSFER_TOPIC0 = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
"""keccak256("Transfer(address,address,uint256)"), the same for ERC-20 and ERC-721 (a test checks it)."""


@lru_cache(maxsize=8)
def _event(signature: str) -> Event:
    """The event a signature declares, parsed (and hashed) once per process."""
    return decode.parse_event(signature)


class TokenTransfers(FetchedAsLogs):
    """Logs of one event, decoded: a dataset fetched like ``logs`` (split on limits) but stored as typed columns."""

    event: str
    topics: list[Any] = [TRANSFER_TOPIC0]
    inputs = (ADDRESS,)

    def log_filter(self, filters: Mapping[str, Any]) -> dict[str, Any]:
        return {**filters, "topics": self.topics}

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        return await LOGS.fetch(client, blocks, address=filters.get("address"), topics=self.topics)

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        return self.from_logs(LOGS.transform(bodies, chain_id=chain_id, u256=u256), {}, u256=u256)

    def decoded(self, logs: pa.Table, u256: U256) -> pa.Table:
        """The logs that are this event, its parameters as columns beside theirs: matched and gathered with numpy
        from the ``topics`` and ``data`` buffers (:func:`chainframe.decode.with_event_columns`), u256 amounts by the
        same rule as every decoder's. Not through Polars: its import alone (0.3 CPU-s) was more than decoding a run's
        transfers, and a frame, filter and select per piece was most of the rest."""
        event = _event(self.event)
        table = decode.with_event_columns(logs, [event], u256=u256)
        # The first column added is the first indexed parameter (an address from a topic): never null on a log that
        # is the event, null on every other.
        matched = call_function("is_valid", [table.column(logs.num_columns)])
        return table if pc.all(matched).as_py() is not False else pc.filter(table, matched)

    def from_logs(
        self, logs: pa.Table, filters: Mapping[str, Any] | None = None, *, u256: U256 = "decimal"
    ) -> pa.Table:
        """The transfers among decoded logs, as this dataset's table."""
        table = self.decoded(logs, u256)
        schema = self.schema_for(u256)
        # Logs given by hand may lack some of the log's own columns: those are null, typed.
        arrays = [table[c] if c in table.column_names else pa.nulls(table.num_rows, schema.field(c).type)
                  for c in self.columns]  # fmt: skip
        return pc.cast_table(pa.Table.from_arrays(arrays, names=list(self.columns)), schema)


class ERC20Transfers(TokenTransfers):
    name = "erc20_transfers"
    doc = "ERC-20 Transfer events, one row per transfer (mints from, burns to the zero address)."
    event = ERC20_TRANSFER
    fetched_with = "eth_getLogs filtered by the Transfer topic0 (three topics), decoded"
    columns = ("chain_id", "block_number", "block_hash", "block_time", "transaction_hash", "transaction_index",
               "log_index", "address", "from_address", "to_address", "value")  # fmt: skip
    sort = ("block_number", "log_index")


class ERC721Transfers(TokenTransfers):
    name = "erc721_transfers"
    doc = "ERC-721 Transfer events, one row per token moved (mints from, burns to the zero address)."
    event = ERC721_TRANSFER
    fetched_with = "eth_getLogs filtered by the Transfer topic0 (four topics), decoded"
    columns = ("chain_id", "block_number", "block_hash", "block_time", "transaction_hash", "transaction_index",
               "log_index", "address", "from_address", "to_address", "token_id")  # fmt: skip
    sort = ("block_number", "log_index")


class ERC1155Transfers(TokenTransfers):
    name = "erc1155_transfers"
    doc = "ERC-1155 TransferSingle and TransferBatch events, one row per token id moved (batch_index: its place)."
    topics = [[ERC1155_SINGLE_TOPIC0, ERC1155_BATCH_TOPIC0]]
    fetched_with = "eth_getLogs filtered by the TransferSingle and TransferBatch topic0s, decoded (a row per id)"
    columns = ("chain_id", "block_number", "block_hash", "block_time", "transaction_hash", "transaction_index",
               "log_index", "address", "operator", "from_address", "to_address", "token_id", "value",
               "batch_index")  # fmt: skip
    sort = ("block_number", "log_index", "batch_index")

    def decoded(self, logs: pa.Table, u256: U256) -> pa.Table:
        return decode.erc1155_transfers(logs, u256=u256)


ERC20_TRANSFERS = ERC20Transfers()
ERC721_TRANSFERS = ERC721Transfers()
ERC1155_TRANSFERS = ERC1155Transfers()
