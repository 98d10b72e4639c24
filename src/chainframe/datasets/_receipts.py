"""receipts: eth_getBlockReceipts per block (batched); per-transaction receipts where a node lacks the method."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import BlockRange, RowChecks, build
from chainframe.datasets._envelope import batch_rows
from chainframe.datasets._logs import with_block_timestamps
from chainframe.datasets._native import BATCH_LISTS, Count
from chainframe.datasets._objects import ObjectDataset
from chainframe.datasets._outside_roots import mark_outside_roots
from chainframe.datasets._proof import Proof
from chainframe.families import L1_FEE_COLUMNS
from chainframe.rpc import MethodNotFound

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


LOG_KEYS = ("logIndex",)
"""What the pure path reads of a receipt's logs, to count them (the native scanner checks these keys alike)."""


class Receipts(ObjectDataset):
    name = "receipts"
    doc = "Transaction receipts, one row per transaction; their logs are the logs dataset."
    unprovable = {
        "blob_gas_price": "the blob base fee follows from the header's excess_blob_gas by the fork's update fraction "
        "(changed by Prague and by each blob-parameter fork), which no header field names",
        **dict.fromkeys(
            L1_FEE_COLUMNS,
            "OP Stack, Scroll, Mantle: the node's arithmetic over the block's L1 fee parameters, in no root",
        ),
        "token_ratio": "Mantle: the MNT/ETH ratio the node converted the L1 fee with; the receipt's encoding leaves it "
        "out",
        "gas_used_for_l1": "Arbitrum: ArbOS's share of gas_used for L1 posting; the receipt's encoding leaves it out",
        "l1_block_number": "Arbitrum: its block's, in that header's mix hash; the receipt's encoding leaves it out",
        **dict.fromkeys(
            ("operator_fee_scalar", "operator_fee_constant", "da_footprint_gas_scalar"),
            "OP Stack: the fee parameters of the block's L1 attributes transaction, as the node read them; the "
            "receipt's encoding leaves them out",
        ),
    }
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
        "deposit_nonce": "depositNonce",
        "deposit_receipt_version": "depositReceiptVersion",
        "l1_fee": "l1Fee",
        "l1_gas_price": "l1GasPrice",
        "l1_gas_used": "l1GasUsed",
        "l1_fee_scalar": "l1FeeScalar",
        "l1_base_fee_scalar": "l1BaseFeeScalar",
        "l1_blob_base_fee": "l1BlobBaseFee",
        "l1_blob_base_fee_scalar": "l1BlobBaseFeeScalar",
        "gas_used_for_l1": "gasUsedForL1",
        "l1_block_number": "l1BlockNumber",
        "operator_fee_scalar": "operatorFeeScalar",
        "operator_fee_constant": "operatorFeeConstant",
        "da_footprint_gas_scalar": "daFootprintGasScalar",
        "token_ratio": "tokenRatio",
    }
    columns = (
        "chain_id", "block_number", "block_hash", "block_timestamp", "block_time", "transaction_index",
        "transaction_hash", "transaction_type", "from_address", "to_address", "contract_address", "status", "root",
        "gas_used", "cumulative_gas_used", "effective_gas_price", "blob_gas_used", "blob_gas_price", "log_count",
        "logs_bloom", "deposit_nonce", "deposit_receipt_version", "l1_fee", "l1_gas_price", "l1_gas_used",
        "l1_fee_scalar", "l1_base_fee_scalar", "l1_blob_base_fee", "l1_blob_base_fee_scalar", "gas_used_for_l1",
        "l1_block_number", "operator_fee_scalar", "operator_fee_constant", "da_footprint_gas_scalar", "is_state_sync",
        "token_ratio",
    )  # fmt: skip
    sort = ("block_number", "transaction_index")
    answers = BATCH_LISTS
    fetched_with = "eth_getBlockReceipts, batched; eth_getTransactionReceipt per transaction where a node lacks it"
    method = "eth_getBlockReceipts"
    block_params = ()
    routes = (("eth_getBlockReceipts",), ("eth_getBlockByNumber", "eth_getTransactionReceipt"))
    null_checked = True
    row_checks = RowChecks(
        keys=("block_number", "block_hash", "transaction_index", "transaction_hash"),
        index="transaction_index",
        status=True,
    )
    row_hashed = True
    proof = Proof.RECEIPTS

    def native_kinds(self, u256: U256) -> dict[str, tuple[str, Any]]:
        return {**super().native_kinds(u256), "log_count": ("logs", Count(text=LOG_KEYS))}

    @property
    def fields(self) -> dict[str, pl.DataType]:
        # Only the number of logs is read from each receipt's list (the logs themselves are the logs dataset).
        return {**super().fields, "logs": pl.List(pl.Struct(dict.fromkeys(LOG_KEYS, pl.String())))}

    def rows(self, frame: pl.DataFrame, *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        counts = frame["logs"].list.len().cast(pl.UInt64).fill_null(0).to_arrow() if "logs" in frame.columns else None
        extra = {"log_count": counts} if counts is not None else {}
        return build(frame, self.sources, self.columns, chain_id=chain_id, u256=u256, extra=extra)

    async def fetch(self, client: Any, blocks: BlockRange, *, stamps: bool = True, **filters: Any) -> list[bytes]:
        """eth_getBlockReceipts, batched; where the node lacks it (known from an earlier answer, or this one),
        eth_getTransactionReceipt per transaction. Receipts without ``blockTimestamp`` take their block's, unless
        ``stamps`` is False (a reader without a block_timestamp column: looking for receipts that lack it scans every
        answer's text: about 0.08 CPU-s for the 194 MB of the benchmark's 2,000 blocks, in C)."""
        if _BLOCK_RECEIPTS not in getattr(client, "missing_methods", ()):
            try:
                bodies = list(await client.batch_bytes([(_BLOCK_RECEIPTS, [hex(n)]) for n in blocks]))
            except MethodNotFound:
                pass  # the client remembers it: the run's other pieces go by transaction at once
            else:
                return await with_block_timestamps(client, bodies) if stamps else bodies
        return [await self._per_transaction(client, blocks)]

    @staticmethod
    async def _per_transaction(client: Any, blocks: BlockRange) -> bytes:
        """eth_getTransactionReceipt for every transaction, shaped like eth_getBlockReceipts answers (a block the
        node does not have answers null, as eth_getBlockReceipts would)."""
        headers = await client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in blocks])
        for header in headers:
            if isinstance(header, Exception):
                raise header
        hashes = [
            (n, h) for n, block in zip(blocks, headers, strict=True) for h in (block or {}).get("transactions", [])
        ]
        receipts = await client.batch([("eth_getTransactionReceipt", [h]) for _, h in hashes]) if hashes else []
        by_block: dict[int, list[Any] | None] = {
            n: None if block is None else [] for n, block in zip(blocks, headers, strict=True)
        }
        stamps = {n: block["timestamp"] for n, block in zip(blocks, headers, strict=True) if block}
        for (n, _), receipt in zip(hashes, receipts, strict=True):
            if isinstance(receipt, Exception):
                raise receipt
            if isinstance(receipt, dict) and n in stamps:  # the receipt's and its logs' (the logs dataset reads them)
                for item in (receipt, *(receipt.get("logs") or ())):
                    if isinstance(item, dict) and item.get("blockTimestamp") is None:
                        item["blockTimestamp"] = stamps[n]
            listed = by_block[n]
            assert listed is not None
            listed.append(receipt)
        for listed in by_block.values():
            if listed and _per_transaction_log_indexes(listed):
                notes = getattr(client, "notes", None)
                if isinstance(notes, dict):
                    notes["logIndex"] = _RENUMBERED
        return json.dumps([{"jsonrpc": "2.0", "id": n, "result": r} for n, r in by_block.items()]).encode()

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        table = self.scanned(bodies, chain_id=chain_id, u256=u256)
        if table is None:
            frames = [batch_rows(b, self.fields, each="list") for b in bodies]
            table = self.rows(self.stack(frames), chain_id=chain_id, u256=u256)
        return mark_outside_roots(table, chain_id)


_BLOCK_RECEIPTS = "eth_getBlockReceipts"
_RENUMBERED = (
    "the node numbers its receipts' logs per transaction (logIndex 0, 1, ... in each, as Ganache does), not per block "
    "as the spec and its own eth_getLogs do: logs read from its receipts take their position in the block"
)


def _per_transaction_log_indexes(receipts: list[Any]) -> bool:
    """Where a block's receipts (read one by one) number their logs 0, 1, ... per transaction instead of per block,
    renumber them by their position in the block, which is what eth_getBlockReceipts and eth_getLogs say and what the
    receipts root commits to (the order; a log's index is its place in it). True: renumbered. Any other numbering is
    left as the node sent it, for the engine's checks to name."""
    logs = [[log for log in (r.get("logs") or []) if isinstance(log, dict)] for r in receipts if isinstance(r, dict)]
    try:
        sent = [[int(log["logIndex"], 16) for log in each] for each in logs]
    except (KeyError, TypeError, ValueError):
        return False
    if not all(each == list(range(len(each))) for each in sent):
        return False
    flat = [i for each in sent for i in each]
    if flat == list(range(len(flat))):
        return False  # per block already (or one transaction with logs: the two numberings agree)
    position = 0
    for each in logs:
        for log in each:
            log["logIndex"] = hex(position)
            position += 1
    return True


RECEIPTS = Receipts()
