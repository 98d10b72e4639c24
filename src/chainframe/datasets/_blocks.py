"""blocks (eth_getBlockByNumber, transaction hashes only) and transactions (the same method with full objects)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyarrow._compute import call_function

from chainframe import _kernels as pc
from chainframe.datasets import _native
from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import BlockRange, RowChecks, build
from chainframe.datasets._envelope import batch_rows
from chainframe.datasets._function_calls import FUNCTION, DecodesCalls
from chainframe.datasets._native import BATCH
from chainframe.datasets._objects import ObjectDataset
from chainframe.datasets._outside_roots import mark_outside_roots
from chainframe.datasets._proof import Proof

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

BLOCK_SOURCES: dict[str, str] = {
    "block_number": "number",
    "block_hash": "hash",
    "parent_hash": "parentHash",
    "block_nonce": "nonce",
    "sha3_uncles": "sha3Uncles",
    "logs_bloom": "logsBloom",
    "transactions_root": "transactionsRoot",
    "state_root": "stateRoot",
    "receipts_root": "receiptsRoot",
    "miner": "miner",
    "difficulty": "difficulty",
    "total_difficulty": "totalDifficulty",
    "extra_data": "extraData",
    "size": "size",
    "gas_limit": "gasLimit",
    "gas_used": "gasUsed",
    "timestamp": "timestamp",
    "uncles": "uncles",
    "transaction_hashes": "transactions",
    "mix_hash": "mixHash",
    "base_fee_per_gas": "baseFeePerGas",
    "withdrawals": "withdrawals",
    "withdrawals_root": "withdrawalsRoot",
    "blob_gas_used": "blobGasUsed",
    "excess_blob_gas": "excessBlobGas",
    "parent_beacon_block_root": "parentBeaconBlockRoot",
    "requests_hash": "requestsHash",
}
BLOCK_COLUMNS = (
    "chain_id", "block_number", "block_hash", "parent_hash", "timestamp", "block_time", "miner", "gas_used",
    "gas_limit", "base_fee_per_gas", "transaction_count", "transaction_hashes", "size", "difficulty",
    "total_difficulty", "extra_data", "block_nonce", "mix_hash", "sha3_uncles", "uncles", "logs_bloom",
    "transactions_root", "state_root", "receipts_root", "withdrawals", "withdrawals_root", "blob_gas_used",
    "excess_blob_gas", "parent_beacon_block_root", "requests_hash",
)  # fmt: skip

ARBITRUM_HEADER = {"send_root": "sendRoot", "send_count": "sendCount", "l1_block_number": "l1BlockNumber"}
"""What an Arbitrum node adds to a header's answer, from its extra data and mix hash (null on other chains)."""
AVALANCHE_HEADER = {
    "ext_data_hash": "extDataHash", "ext_data_gas_used": "extDataGasUsed", "block_gas_cost": "blockGasCost",
    "block_extra_data": "blockExtraData", "timestamp_milliseconds": "timestampMilliseconds",
    "min_delay_excess": "minDelayExcess",
}  # fmt: skip
"""What Avalanche's C-Chain adds to a header's answer: its own header fields, and the atomic transactions their hash
commits to (null on other chains)."""
ARBITRUM_TRANSACTION = {
    "request_id": "requestId", "ticket_id": "ticketId", "refund_to": "refundTo", "max_refund": "maxRefund",
    "submission_fee_refund": "submissionFeeRefund", "l1_base_fee": "l1BaseFee", "deposit_value": "depositValue",
    "retry_to": "retryTo", "retry_value": "retryValue", "retry_data": "retryData", "beneficiary": "beneficiary",
    "max_submission_fee": "maxSubmissionFee",
}  # fmt: skip
"""The fields Nitro's own transaction types add to a transaction's answer (its go-ethereum fork's txJSON)."""


def block_calls(blocks: BlockRange, *, full: bool) -> list[tuple[str, list[Any]]]:
    return [("eth_getBlockByNumber", [hex(n), full]) for n in blocks]


class Blocks(ObjectDataset):
    name = "blocks"
    doc = "Block headers, one row per block, with the hashes of its transactions."
    unprovable = {
        "size": "the node's count of the whole block's encoded bytes: no header field commits to it",
        "total_difficulty": "the sum of every earlier block's difficulty: in no header (left out since the merge)",
    }
    sources = {**BLOCK_SOURCES, **ARBITRUM_HEADER, **AVALANCHE_HEADER}
    columns = (*BLOCK_COLUMNS, *ARBITRUM_HEADER, "arbos_version", *AVALANCHE_HEADER)
    sort = ("block_number",)
    answers = BATCH
    fetched_with = "eth_getBlockByNumber (transaction hashes), batched"
    method = "eth_getBlockByNumber"
    block_params = (False,)
    null_checked = True
    row_checks = RowChecks(keys=("block_number", "block_hash", "parent_hash"), one_per_block=True)
    row_hashed = True
    proof = Proof.HEADERS

    def scan_answers(
        self, bodies: Sequence[bytes], kinds: dict[str, tuple[str, Any]]
    ) -> tuple[int, dict[str, pa.Array]] | None:
        scanned = super().scan_answers(bodies, kinds)
        if scanned is None:
            return None
        n, out = scanned
        out["transaction_count"] = pc.cast(pc.list_value_length(out["transaction_hashes"]), pa.uint64())
        return n, out

    def rows(self, frame: pl.DataFrame, *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        counts = frame["transactions"].list.len().cast(pl.UInt64).to_arrow()
        table = build(
            frame, self.sources, self.columns, chain_id=chain_id, u256=u256, extra={"transaction_count": counts}
        )
        return with_header_columns(table, chain_id)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        return list(await client.batch_bytes(block_calls(blocks, full=False)))

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        table = self.scanned(bodies, chain_id=chain_id, u256=u256)
        if table is not None:
            return with_header_columns(table, chain_id)
        return self.rows(self.stack([batch_rows(b, self.fields) for b in bodies]), chain_id=chain_id, u256=u256)


def with_header_columns(table: pa.Table, chain_id: int) -> pa.Table:
    """``table`` of headers with the columns the chain's family reads out of its hashed fields and no node sends as
    a key of its own (Arbitrum's ArbOS version, in the mix hash); a family without such columns costs a lookup."""
    from chainframe.families import family_of  # deferred: the families load when rows are built, not with the catalogue

    family = family_of(chain_id)
    derived = [c for c in family.columns.get("blocks", {}) if c not in Blocks.sources and c in table.column_names]
    if not derived or not table.num_rows:
        return table
    held = [
        family.header_columns(extra, mix) if extra is not None and mix is not None else {}
        for extra, mix in zip(table["extra_data"].to_pylist(), table["mix_hash"].to_pylist(), strict=True)
    ]
    for column in derived:
        at = table.schema.get_field_index(column)
        values = pa.array([row.get(column) for row in held], type=table.schema.field(column).type)
        table = table.set_column(at, table.schema.field(column), values)
    return table


class Transactions(DecodesCalls, ObjectDataset):
    name = "transactions"
    aliases = ("txs",)  # cryo's name
    doc = "Transactions, one row per transaction, as eth_getBlockByNumber returns them with details."
    sources = {
        "block_number": "blockNumber",
        "block_hash": "blockHash",
        "block_timestamp": "blockTimestamp",
        "transaction_index": "transactionIndex",
        "transaction_hash": "hash",
        "nonce": "nonce",
        "from_address": "from",
        "to_address": "to",
        "value": "value",
        "gas": "gas",
        "gas_price": "gasPrice",
        "max_fee_per_gas": "maxFeePerGas",
        "max_priority_fee_per_gas": "maxPriorityFeePerGas",
        "max_fee_per_blob_gas": "maxFeePerBlobGas",
        "input": "input",
        "transaction_type": "type",
        "transaction_chain_id": "chainId",
        "v": "v",
        "r": "r",
        "s": "s",
        "y_parity": "yParity",
        "access_list": "accessList",
        "blob_versioned_hashes": "blobVersionedHashes",
        "authorization_list": "authorizationList",
        "source_hash": "sourceHash",
        "mint": "mint",
        "is_system_tx": "isSystemTx",
        **ARBITRUM_TRANSACTION,
        "queue_index": "queueIndex",
        "eth_value": "ethValue",
        "eth_tx_value": "ethTxValue",
    }
    columns = (
        "chain_id", "block_number", "block_hash", "block_timestamp", "block_time", "transaction_index",
        "transaction_hash", "transaction_type", "from_address", "to_address", "value", "nonce", "gas", "gas_price",
        "max_fee_per_gas", "max_priority_fee_per_gas", "max_fee_per_blob_gas", "input", "transaction_chain_id", "v",
        "r", "s", "y_parity", "access_list", "blob_versioned_hashes", "authorization_list", "source_hash", "mint",
        "is_system_tx", *ARBITRUM_TRANSACTION, "is_state_sync", "queue_index",
        "eth_value", "eth_tx_value",
    )  # fmt: skip
    sort = ("block_number", "transaction_index")
    answers = BATCH  # of blocks: the rows are their transaction objects (see scan_answers)
    fetched_with = "eth_getBlockByNumber (full transaction objects), batched"
    method = "eth_getBlockByNumber"
    block_params = (True,)
    null_checked = True
    row_checks = RowChecks(
        keys=("block_number", "block_hash", "transaction_index", "transaction_hash"), index="transaction_index"
    )
    row_hashed = True
    proof = Proof.TRANSACTIONS
    inputs = (FUNCTION,)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        return list(await client.batch_bytes(block_calls(blocks, full=True)))

    def scan_answers(
        self, bodies: Sequence[bytes], kinds: dict[str, tuple[str, Any]]
    ) -> tuple[int, dict[str, pa.Array]] | None:
        """The transaction objects inside block answers, each taking its block's timestamp where it has none."""
        block = {"timestamp": ("timestamp", "u64"), "transactions": ("transactions", kinds)}
        scanned = _native.scan(bodies, block, BATCH)
        if scanned is None:
            return None
        _, blocks = scanned
        lists = blocks["transactions"]
        txs = pc.list_flatten(lists)
        out = dict(zip(kinds, txs.flatten(), strict=True))
        block_time = pc.take(blocks["timestamp"], pc.list_parent_indices(lists))
        out["block_timestamp"] = pc.coalesce(out["block_timestamp"], block_time)
        return len(txs), out

    def scanned(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table | None:
        table = super().scanned(bodies, chain_id=chain_id, u256=u256)
        return None if table is None else mark_outside_roots(legacy_chain_ids(table), chain_id)

    def rows(self, frame: pl.DataFrame, *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        return mark_outside_roots(legacy_chain_ids(super().rows(frame, chain_id=chain_id, u256=u256)), chain_id)

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        table = self.scanned(bodies, chain_id=chain_id, u256=u256)
        if table is not None:
            return table
        # The block's own timestamp is authoritative for its transactions (older nodes send no blockTimestamp).
        block = {"timestamp": pl.String(), "transactions": pl.List(pl.Struct(self.fields))}
        txs = (
            pl.concat([batch_rows(body, block) for body in bodies], how="vertical")
            .explode("transactions")
            .drop_nulls("transactions")
            .select(pl.col("transactions").struct.unnest(), pl.col("timestamp").alias("_block_timestamp"))
            .with_columns(pl.col("blockTimestamp").fill_null(pl.col("_block_timestamp")))
            .drop("_block_timestamp")
        )
        return self.rows(txs, chain_id=chain_id, u256=u256)


def legacy_chain_ids(table: pa.Table) -> pa.Table:
    """``table`` with the chain id an EIP-155 legacy transaction signs, ``(v - 35) // 2``, where the node sends no
    ``chainId`` (Hardhat, Ganache; geth sends it): the signature commits to it, so it is the transaction's own value,
    as verify derives it. A legacy ``v`` of 27 or 28 signs no chain id: null stays null. Typed transactions always
    carry theirs."""
    if table.num_rows == 0 or not table["transaction_chain_id"].null_count:
        return table
    chain, v, kind = (table[c].combine_chunks() for c in ("transaction_chain_id", "v", "transaction_type"))
    n = table.num_rows
    legacy = pc.and_(
        pc.equal(pc.coalesce(kind, pc.constant(0, n, kind.type)), pc.constant(0, n, kind.type)),
        pc.greater_equal(v, pc.constant(35, n, v.type)),
    )
    signed = call_function("divide", [pc.subtract(v, pc.constant(35, n, v.type)), pc.constant(2, n, v.type)])
    derived = pc.if_else(legacy, pc.cast(signed, chain.type), pa.nulls(n, chain.type))
    at = table.schema.get_field_index("transaction_chain_id")
    return table.set_column(at, table.schema.field(at), pc.coalesce(chain, derived))


BLOCKS = Blocks()
TRANSACTIONS = Transactions()
