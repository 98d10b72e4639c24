"""Account and storage proofs (eth_getProof): one account row per (block, address), one storage row per key.

The two tables come from the same answers; they are two datasets so that each is one table, with one schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe.datasets._columns import U256
from chainframe.datasets._context import fetch_with_context, read_context
from chainframe.datasets._dataset import BlockRange, build, read_fields
from chainframe.datasets._inputs import ADDRESSES, STORAGE_KEYS
from chainframe.datasets._objects import ObjectDataset
from chainframe.datasets._proof import Proof
from chainframe.rpc import params

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

_ACCOUNT = {
    "address": "address",
    "balance": "balance",
    "nonce": "nonce",
    "code_hash": "codeHash",
    "storage_hash": "storageHash",
    "account_proof": "accountProof",
}
_STORAGE = {"storage_key": "key", "storage_value": "value", "storage_proof": "proof"}


async def _fetch_proofs(client: Any, blocks: BlockRange, filters: dict[str, Any]) -> list[bytes]:
    addresses = filters.get("addresses")
    if not addresses:
        raise ValueError("proofs need addresses=[...] (and optionally storage_keys=[...])")
    accounts = [params.address(a, f"addresses[{i}]") for i, a in enumerate(addresses)]
    keys = params.storage_keys(filters.get("storage_keys", ()))
    calls = [("eth_getProof", [a, keys, hex(n)]) for n in blocks for a in accounts]
    return [await fetch_with_context(client, calls, [{"block": n} for n in blocks for _ in accounts])]


class _ProofAnswers(ObjectDataset):
    """eth_getProof at each block for each of ``--addresses`` (with ``--storage-key``'s slots)."""

    method = "eth_getProof"
    reads_state = True
    chunk_size = 100
    inputs = (ADDRESSES, STORAGE_KEYS)
    needs = frozenset({"addresses"})
    per_block = "addresses"

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        return await _fetch_proofs(client, blocks, filters)


class AccountProofs(_ProofAnswers):
    name = "account_proofs"
    doc = "eth_getProof accounts: balance, nonce, code and storage roots, and the Merkle proof, per block and address."
    sources = _ACCOUNT
    columns = ("chain_id", "block_number", "address", "balance", "nonce", "code_hash", "storage_hash", "account_proof")
    sort = ("block_number", "address")
    fetched_with = "eth_getProof, per block and address"
    proof = Proof.ACCOUNTS

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        tables = []
        for body in bodies:
            frame = read_context(body, {"block": pl.UInt64()}, pl.Struct(self.fields))
            extra = {"block_number": frame["block"].to_arrow()}
            tables.append(
                build(frame.unnest("result"), self.sources, self.columns, chain_id=chain_id, u256=u256, extra=extra)
            )
        return self.concat(tables, u256)


class StorageProofs(_ProofAnswers):
    name = "storage_proofs"
    doc = "eth_getProof storage slots: value and Merkle proof, per block, address and key (in the order asked)."
    sources = _STORAGE
    columns = ("chain_id", "block_number", "address", "storage_key", "storage_value", "storage_proof")
    sort = ("block_number", "address", "storage_key")
    fetched_with = "eth_getProof, per block, address and storage key"
    proof = Proof.SLOTS

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        result = pl.Struct({"address": pl.String(), "storageProof": pl.List(pl.Struct(read_fields(self.sources)))})
        tables = []
        for body in bodies:
            frame = (
                read_context(body, {"block": pl.UInt64()}, result)
                .unnest("result")
                .explode("storageProof")
                .drop_nulls("storageProof")
                .unnest("storageProof")
            )
            sources = {**self.sources, "address": "address"}
            extra = {"block_number": frame["block"].to_arrow()}
            tables.append(build(frame, sources, self.columns, chain_id=chain_id, u256=u256, extra=extra))
        return self.concat(tables, u256)


ACCOUNT_PROOFS = AccountProofs()
STORAGE_PROOFS = StorageProofs()
