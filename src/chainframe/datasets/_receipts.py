"""receipts: eth_getBlockReceipts per block (batched); per-transaction receipts where a node lacks the method."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import BlockRange, build
from chainframe.datasets._envelope import batch_rows
from chainframe.datasets._native import BATCH_LISTS
from chainframe.datasets._objects import ObjectDataset

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


LOG_KEYS = ("logIndex",)
"""What the pure path reads of a receipt's logs, to count them (the native scanner checks these keys alike)."""


class Receipts(ObjectDataset):
    name = "receipts"
    doc = "Transaction receipts, one row per transaction; their logs are the logs dataset."
    sources = {
        "block_number": "blockNumber",
        "block_hash": "blockHash",
        "block_timestamp": "blockTimestamp",
        "transaction_index": "transactionIndex",
        "transaction_hash": "transactionHash",
        "from_address": "from",
        "to_address": "to",
        "contract_address": "contractAddress",
        "cumulative_gas_used": "cumulativeGasUsed",
        "gas_used": "gasUsed",
        "effective_gas_price": "effectiveGasPrice",
        "logs_bloom": "logsBloom",
        "status": "status",
        "root": "root",
        "transaction_type": "type",
        "blob_gas_used": "blobGasUsed",
        "blob_gas_price": "blobGasPrice",
    }
    columns = (
        "chain_id", "block_number", "block_hash", "block_timestamp", "block_time", "transaction_index",
        "transaction_hash", "transaction_type", "from_address", "to_address", "contract_address", "status", "root",
        "gas_used", "cumulative_gas_used", "effective_gas_price", "blob_gas_used", "blob_gas_price", "log_count",
        "logs_bloom",
    )  # fmt: skip
    sort = ("block_number", "transaction_index")
    answers = BATCH_LISTS

    def native_kinds(self, u256: U256) -> dict[str, tuple[str, Any]]:
        from chainframe.datasets._native import Count

        return {**super().native_kinds(u256), "log_count": ("logs", Count(text=LOG_KEYS))}

    @property
    def fields(self) -> dict[str, pl.DataType]:
        # Only the number of logs is read from each receipt's list (the logs themselves are the logs dataset).
        return {**super().fields, "logs": pl.List(pl.Struct(dict.fromkeys(LOG_KEYS, pl.String())))}

    def rows(self, frame: pl.DataFrame, *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        counts = frame["logs"].list.len().cast(pl.UInt64).fill_null(0).to_arrow() if "logs" in frame.columns else None
        extra = {"log_count": counts} if counts is not None else {}
        return build(frame, self.sources, self.columns, chain_id=chain_id, u256=u256, extra=extra)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        from chainframe.rpc import MethodNotFound

        try:
            return list(await client.batch_bytes([("eth_getBlockReceipts", [hex(n)]) for n in blocks]))
        except MethodNotFound:
            return [await self._per_transaction(client, blocks)]

    @staticmethod
    async def _per_transaction(client: Any, blocks: BlockRange) -> bytes:
        """eth_getTransactionReceipt for every transaction, shaped like eth_getBlockReceipts answers."""
        headers = await client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in blocks])
        hashes = [
            (n, h) for n, block in zip(blocks, headers, strict=True) for h in (block or {}).get("transactions", [])
        ]
        receipts = await client.batch([("eth_getTransactionReceipt", [h]) for _, h in hashes])
        by_block: dict[int, list[Any]] = {n: [] for n in blocks}
        for (n, _), receipt in zip(hashes, receipts, strict=True):
            if isinstance(receipt, Exception):
                raise receipt
            by_block[n].append(receipt)
        return json.dumps([{"jsonrpc": "2.0", "id": n, "result": r} for n, r in by_block.items()]).encode()

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        table = self.scanned(bodies, chain_id=chain_id, u256=u256)
        if table is not None:
            return table
        frames = [batch_rows(b, self.fields, each="list") for b in bodies]
        return self.rows(self.stack(frames), chain_id=chain_id, u256=u256)


RECEIPTS = Receipts()
