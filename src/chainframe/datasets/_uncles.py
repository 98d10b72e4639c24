"""uncles: eth_getUncleByBlockNumberAndIndex for each uncle index of each block."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe.datasets._blocks import BLOCK_SOURCES
from chainframe.datasets._columns import U256
from chainframe.datasets._context import fetch_with_context, read_context
from chainframe.datasets._dataset import BlockRange, build
from chainframe.datasets._objects import ObjectDataset
from chainframe.datasets._proof import Proof

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


class Uncles(ObjectDataset):
    name = "uncles"
    doc = "Uncle (ommer) headers, one row per uncle, with the block that included it."
    unprovable = {
        "size": "the node's count of the whole block's encoded bytes: no header field commits to it",
        "total_difficulty": "the sum of every earlier block's difficulty: in no header (left out since the merge)",
        "uncles": "the uncle's own uncles: its sha3_uncles commits to their headers, which are not fetched",
    }
    sources = {k: v for k, v in BLOCK_SOURCES.items() if k != "transaction_hashes"}
    columns = (
        "chain_id", "nephew_number", "uncle_index", "block_number", "block_hash", "parent_hash", "timestamp",
        "block_time", "miner", "gas_used", "gas_limit", "base_fee_per_gas", "size", "difficulty", "total_difficulty",
        "extra_data", "block_nonce", "mix_hash", "sha3_uncles", "uncles", "logs_bloom", "transactions_root",
        "state_root", "receipts_root", "withdrawals", "withdrawals_root", "blob_gas_used", "excess_blob_gas",
        "parent_beacon_block_root", "requests_hash",
    )  # fmt: skip
    sort = ("nephew_number", "uncle_index")
    fetched_with = (
        "eth_getUncleByBlockNumberAndIndex for each uncle index its block lists; where a node lacks it (Hardhat), "
        "blocks listing none (every block since the merge) are read all the same and one with uncles fails naming it"
    )
    method = "eth_getUncleByBlockNumberAndIndex"
    routes = (("eth_getBlockByNumber", "eth_getUncleByBlockNumberAndIndex"), ("eth_getBlockByNumber",))
    null_checked = True
    block_column = "nephew_number"
    proof = Proof.UNCLES

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        headers = await client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in blocks])
        wanted = [(n, i) for n, h in zip(blocks, headers, strict=True) for i in range(len((h or {}).get("uncles", [])))]
        calls = [("eth_getUncleByBlockNumberAndIndex", [hex(n), hex(i)]) for n, i in wanted]
        return [await fetch_with_context(client, calls, [{"nephew": n, "index": i} for n, i in wanted])]

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        tables = []
        for body in bodies:
            frame = read_context(body, {"nephew": pl.UInt64(), "index": pl.UInt64()}, pl.Struct(self.fields))
            extra = {"nephew_number": frame["nephew"].to_arrow(), "uncle_index": frame["index"].to_arrow()}
            tables.append(
                build(frame.unnest("result"), self.sources, self.columns, chain_id=chain_id, u256=u256, extra=extra)
            )
        return self.concat(tables, u256)


UNCLES = Uncles()
