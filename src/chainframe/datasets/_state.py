"""State reads at blocks: the balance, nonce, code or storage slots of given accounts (eth_getBalance,
eth_getTransactionCount, eth_getCode, eth_getStorageAt), one row per block, account (and slot).

Rows are read at every block of the range, or with ``every=N`` at the blocks that are multiples of N: block numbers,
not counted from where a range starts, so a chunk, an extension and a repair of the same blocks read the same ones
whatever range a run was given. A block off the step has no row.

One call per block, account (and slot), batched (:meth:`AsyncClient.batch_bytes`: the answers as received); the
balances of a block's accounts are read by one eth_call (:class:`Balances`). The fetch step writes what it asked first
(blocks, accounts, slots, in call order): ``transform`` stays a pure function of the bytes it is given, each result
matched to its call by the batch ids.

Proof (:attr:`Proof.STATE`): eth_getProof of the same accounts (and slots) at the same blocks, fetched for the proof,
proves balance, nonce, code hash and slot values against the header's state root; a code against its code hash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.datasets._columns import U256
from chainframe.datasets._context import fetch_with_context
from chainframe.datasets._convert import DecodeError
from chainframe.datasets._dataset import BlockRange, Dataset, RowChecks, build
from chainframe.datasets._envelope import batch_results
from chainframe.datasets._inputs import ADDRESSES, EVERY, STORAGE_KEYS, Input
from chainframe.datasets._proof import Proof

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


def asked(blocks: BlockRange, filters: Mapping[str, Any]) -> dict[str, list[Any]]:
    """What a piece reads, in call order: its blocks on the step, the accounts (each once), the slots."""
    every = int(filters.get("every", 1))
    first = -(-blocks.start // every) * every
    return {
        "blocks": list(range(first, blocks.end + 1, every)),
        "addresses": list(dict.fromkeys(filters.get("addresses") or ())),
        "keys": list(dict.fromkeys(filters.get("storage_keys") or ())),
    }


class StateRead(Dataset):
    """One JSON-RPC state read per block and account (and slot, for ``keyed`` ones)."""

    result: ClassVar[str]
    """The column the call's result goes to."""
    keyed: ClassVar[bool] = False
    """One call per storage slot too (eth_getStorageAt)."""
    reads_state = True
    chunk_size = 1000
    inputs: ClassVar[tuple[Input, ...]] = (ADDRESSES, EVERY)
    needs = frozenset({"addresses"})
    per_block = "addresses"
    row_checks = RowChecks(keys=("block_number", "address"))
    proof = Proof.STATE

    def calls(self, blocks: int, filters: Mapping[str, Any]) -> int | None:
        on_step = -(-blocks // int(filters.get("every", 1)))
        return on_step * len(filters["addresses"]) * max(1, len(filters.get("storage_keys") or ()) * self.keyed)

    def _calls(self, plan: Mapping[str, list[Any]]) -> list[tuple[str, list[Any]]]:
        if self.keyed:
            return [
                (self.method, [a, k, hex(n)]) for n in plan["blocks"] for a in plan["addresses"] for k in plan["keys"]
            ]
        return [(self.method, [a, hex(n)]) for n in plan["blocks"] for a in plan["addresses"]]

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        plan = asked(blocks, filters)
        calls = self._calls(plan)
        return [json.dumps(plan).encode(), *(await client.batch_bytes(calls) if calls else [])]

    async def proof_answers(self, client: Any, blocks: BlockRange, filters: Mapping[str, Any]) -> list[bytes]:
        plan = asked(blocks, filters)
        keys = plan["keys"] if self.keyed else []
        calls = [("eth_getProof", [a, keys, hex(n)]) for n in plan["blocks"] for a in plan["addresses"]]
        return [
            await fetch_with_context(client, calls, [{"block": n} for n in plan["blocks"] for _ in plan["addresses"]])
        ]

    def frame(self, bodies: Sequence[bytes]) -> pl.DataFrame:
        """One row per block, account (and key) as asked, with its ``result`` as text."""
        plan = json.loads(bodies[0])
        frame = pl.DataFrame({"block": pl.Series(plan["blocks"], dtype=pl.UInt64())})
        frame = frame.join(pl.DataFrame({"address": pl.Series(plan["addresses"], dtype=pl.String())}), how="cross")
        if self.keyed:
            frame = frame.join(pl.DataFrame({"key": pl.Series(plan["keys"], dtype=pl.String())}), how="cross")
        results = self.results(plan, [batch_results(body, pl.String()) for body in bodies[1:]])
        if results.len() != frame.height:
            raise DecodeError(f"{self.method}: {results.len()} results for {frame.height} rows")
        return frame.with_columns(results.alias("result"))

    def results(self, plan: Mapping[str, list[Any]], answers: list[pl.Series]) -> pl.Series:
        """The rows' results, in row order, from the calls' results (one a row here)."""
        results = pl.concat(answers) if answers else pl.Series(dtype=pl.String())
        if results.null_count():
            raise DecodeError(f"{self.method}: a null result (the node answered nothing for a block it has)")
        return results

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        frame = self.frame(bodies)
        sources = {"address": "address", self.result: "result", **({"storage_key": "key"} if self.keyed else {})}
        extra = {"block_number": frame["block"].to_arrow()}
        return build(frame, sources, self.columns, chain_id=chain_id, u256=u256, extra=extra)


ACCOUNTS_PER_CALL = 256
"""Accounts whose balances one eth_call reads. Its code is 25 bytes an account and its answer 32, kept as the created
account's code (200 gas a byte): about 9,400 gas an account, 2.5M for 256, far below a block's gas limit and EIP-7825's
cap of 2^24 a transaction, and the code below EIP-3860's 49,152 bytes."""


def balance_reader(addresses: Sequence[str]) -> dict[str, str]:
    """An eth_call that returns the balance of each of ``addresses`` as a 32-byte word, in order: creation code
    (no ``to``) doing, for each, PUSH20 address, BALANCE, PUSH2 offset, MSTORE; then RETURN of the words. BALANCE is
    what eth_getBalance reads. The gas price is 0, so no node charges the sender's balance for the call (one of the
    accounts may be its sender: the zero address)."""
    code = bytearray()
    for i, address in enumerate(addresses):
        code += b"\x73" + bytes.fromhex(address[2:]) + b"\x31\x61" + (32 * i).to_bytes(2, "big") + b"\x52"
    code += b"\x61" + (32 * len(addresses)).to_bytes(2, "big") + b"\x60\x00\xf3"
    return {"data": "0x" + code.hex(), "gas": hex(60_000 + 10_000 * len(addresses)), "gasPrice": "0x0"}


class Balances(StateRead):
    """Balances are read a block at a time: one eth_call whose code asks BALANCE of every account (up to
    :data:`ACCOUNTS_PER_CALL`) instead of an eth_getBalance per account. A node pays most of a state read in finding
    the block's state, once a call: on the benchmark chain's anvil, blocks 1500-2000 and 8 accounts, the call took
    1.9 CPU-s of anvil where eth_getBalance took 10.3-12.2 (the values equal), and a provider bills one call, not 8."""

    name = "balances"
    doc = "Account balances (wei) at blocks: BALANCE of each address, one eth_call per block."
    columns = ("chain_id", "block_number", "address", "balance")
    sort = ("block_number", "address")
    fetched_with = (
        f"eth_call per block (or every N-th) of code that reads BALANCE of up to {ACCOUNTS_PER_CALL} addresses, batched"
    )
    method = "eth_call"
    result = "balance"

    def calls(self, blocks: int, filters: Mapping[str, Any]) -> int | None:
        on_step = -(-blocks // int(filters.get("every", 1)))
        return on_step * -(-len(filters["addresses"]) // ACCOUNTS_PER_CALL)

    def _calls(self, plan: Mapping[str, list[Any]]) -> list[tuple[str, list[Any]]]:
        readers = [balance_reader(group) for group in _groups(plan["addresses"])]
        return [(self.method, [reader, hex(n)]) for n in plan["blocks"] for reader in readers]

    def results(self, plan: Mapping[str, list[Any]], answers: list[pl.Series]) -> pl.Series:
        """Each call's answer split into its accounts' words, as quantities (``0x`` and no leading zero)."""
        calls = pl.concat(answers) if answers else pl.Series(dtype=pl.String())
        sizes = pl.Series([len(group) for group in _groups(plan["addresses"])] * len(plan["blocks"]), dtype=pl.UInt32())
        if calls.len() != sizes.len():
            raise DecodeError(f"{self.method}: {calls.len()} results for {sizes.len()} calls")
        if calls.null_count() or not (calls.str.len_bytes() == sizes * 64 + 2).all():
            raise DecodeError(f"{self.method}: a result is not a 32-byte word for each account its call read")
        words = calls.str.slice(2).str.extract_all("[0-9a-fA-F]{64}")
        if not (words.list.len() == sizes).all():
            raise DecodeError(f"{self.method}: a result is not hex")
        digits = words.explode().str.to_lowercase().str.strip_chars_start("0")
        return pl.select(pl.when(digits == "").then(pl.lit("0x0")).otherwise("0x" + digits)).to_series()


def _groups(addresses: Sequence[str]) -> list[Sequence[str]]:
    return [addresses[i : i + ACCOUNTS_PER_CALL] for i in range(0, len(addresses), ACCOUNTS_PER_CALL)]


class Nonces(StateRead):
    name = "nonces"
    doc = "Account nonces (transactions sent, or contracts created by a contract) at blocks: eth_getTransactionCount."
    columns = ("chain_id", "block_number", "address", "nonce")
    sort = ("block_number", "address")
    fetched_with = "eth_getTransactionCount, per block (or every N-th) and address, batched"
    method = "eth_getTransactionCount"
    result = "nonce"


class Codes(StateRead):
    name = "codes"
    doc = "Account code and its keccak hash at blocks: eth_getCode, per block and address (empty for an EOA)."
    columns = ("chain_id", "block_number", "address", "code_hash", "code")
    sort = ("block_number", "address")
    fetched_with = "eth_getCode, per block (or every N-th) and address, batched"
    method = "eth_getCode"
    result = "code"

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        from chainframe._keccak import keccak256  # deferred: the keccak extension loads when keys are hashed

        table = super().transform(bodies, chain_id=chain_id, u256=u256)
        # An account's code is the same at most of the blocks read: each distinct one is hashed once.
        codes = pl.Series("code", table["code"].combine_chunks(), dtype=pl.Binary())
        distinct = codes.unique()
        hashes = pl.Series([keccak256(c) for c in distinct.to_list()], dtype=pl.Binary())
        code_hash = pc.cast(codes.replace_strict(distinct, hashes, return_dtype=pl.Binary()).to_arrow(), pa.binary(32))
        return table.set_column(table.column_names.index("code_hash"), "code_hash", code_hash)


class Slots(StateRead):
    name = "slots"
    doc = "Storage slot values at blocks: eth_getStorageAt, per block, address and key (32-byte words)."
    columns = ("chain_id", "block_number", "address", "storage_key", "storage_value")
    sort = ("block_number", "address", "storage_key")
    fetched_with = "eth_getStorageAt, per block (or every N-th), address and storage key, batched"
    method = "eth_getStorageAt"
    result = "storage_value"
    keyed = True
    inputs = (ADDRESSES, STORAGE_KEYS, EVERY)
    needs = frozenset({"addresses", "storage_keys"})
    row_checks = RowChecks(keys=("block_number", "address", "storage_key"))


BALANCES = Balances()
NONCES = Nonces()
CODES = Codes()
SLOTS = Slots()
