"""address_appearances and four_byte_counts: rows computed from a block's transactions (and receipts, with their logs).

Each is fetched as the datasets it is made of are fetched (their own ``fetch``: full blocks batched, and
eth_getBlockReceipts with its per-transaction fallback; only those it needs, ``derived_fetched``: address_appearances
reads the receipts alone), decoded by their own transforms, and then derived column-wise in Polars. Its answers are
those datasets' answers behind one leading line saying where the transactions' end, so ``transform`` stays a pure
function of the bytes. It is proven by proving those inputs (the transactions root and the senders' signatures, the
receipts root with the logs; what its fetch did not read, its proof reads) and computing the rows again from them.

Block traces are not read (yet): internal calls' addresses and selectors are not counted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import anyio
import pyarrow as pa
from pyarrow._compute import call_function

from chainframe import _kernels as pc
from chainframe.datasets._blocks import TRANSACTIONS
from chainframe.datasets._columns import U256
from chainframe.datasets._convert import DecodeError
from chainframe.datasets._dataset import BlockRange, Dataset, RowChecks, build_arrow
from chainframe.datasets._logs import LOGS
from chainframe.datasets._proof import Proof
from chainframe.datasets._receipts import RECEIPTS

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

Relationship = Literal["sender", "recipient", "created_contract", "log_emitter", "log_topic"]
"""How an address appears in a transaction (``relationship``)."""

_HEAD = b'{"chainframe_derived":{"transaction_answers":%d}}'
_KEYS = ("block_number", "block_hash", "transaction_index", "transaction_hash")
_LOG_LIST = "__logs"
"""The scanned receipts' column of their logs (a list of objects), not a receipts column."""
_PADDING = bytes(12)
"""A 32-byte word holding an address starts with 12 zero bytes."""


class Derived(Dataset):
    """Rows computed from the transactions of each block (and its receipts, where ``derived_from`` says so)."""

    method = "eth_getBlockByNumber"
    proof = Proof.DERIVED
    null_checked = True
    row_hashed = True
    derived_from: ClassVar[tuple[Dataset, ...]] = (TRANSACTIONS,)

    @property
    def _receipts(self) -> bool:
        return RECEIPTS in self.derived_from

    def other_calls(self, blocks: int, filters: Any) -> dict[str, int]:
        return {"eth_getBlockReceipts": blocks} if self._receipts and TRANSACTIONS in self.fetched_from else {}

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        answers: dict[str, list[bytes]] = {}

        async def one(name: str, dataset: Dataset) -> None:
            if dataset is RECEIPTS:  # the receipts' block_timestamp is read only where a column holds it
                answers[name] = await RECEIPTS.fetch(client, blocks, stamps="block_timestamp" in self.columns)
            else:
                answers[name] = await dataset.fetch(client, blocks)

        async with anyio.create_task_group() as tg:
            if TRANSACTIONS in self.fetched_from:
                tg.start_soon(one, "transactions", TRANSACTIONS)
            if RECEIPTS in self.fetched_from:
                tg.start_soon(one, "receipts", RECEIPTS)
        transactions = answers.get("transactions", [])
        return [_HEAD % len(transactions), *transactions, *answers.get("receipts", [])]

    def inputs_of(self, bodies: Sequence[bytes]) -> tuple[list[bytes], list[bytes]]:
        try:
            n = json.loads(bodies[0])["chainframe_derived"]["transaction_answers"]
        except (IndexError, ValueError, KeyError, TypeError):
            raise DecodeError(f"{self.name}: its answers do not start with the line saying which are whose") from None
        return list(bodies[1 : 1 + n]), list(bodies[1 + n :])

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        transactions, receipts = self.inputs_of(bodies)
        if not self._receipts:
            return self.derive(TRANSACTIONS.transform(transactions, chain_id=chain_id, u256=u256), None, None,
                               chain_id=chain_id)  # fmt: skip
        scanned = None if transactions else self._scanned(receipts, chain_id=chain_id)
        if scanned is not None:
            return self.derive(scanned[0], scanned[0], scanned[1], chain_id=chain_id)
        made = RECEIPTS.transform(receipts, chain_id=chain_id, u256=u256)
        # Without the transactions' answers, the receipts stand in for them: a receipt repeats its transaction's
        # keys, sender and recipient (what derive reads of them), and its proof checks them against the
        # transactions it reads itself.
        txs = TRANSACTIONS.transform(transactions, chain_id=chain_id, u256=u256) if transactions else made
        return self.derive(txs, made, LOGS.from_receipts(receipts, chain_id=chain_id, u256=u256), chain_id=chain_id)

    def _scanned(self, receipts: Sequence[bytes], *, chain_id: int) -> tuple[pa.Table, pa.Table] | None:
        """The receipts' and their logs' columns that ``derive`` reads, in one pass of the native scanner (as
        verify's receipts_and_logs reads them); None where it is off or declines an answer. Reading the logs through
        Polars' JSON reader (:meth:`Logs.from_receipts`) took 0.9-1.0 CPU-s per 1,000 benchmark blocks (156k logs),
        three quarters of the transform."""
        from chainframe.datasets import _native

        if not _native.available():
            return None
        wanted = (*_KEYS, "from_address", "to_address", "contract_address", "address", "topics", "log_index")
        kinds = {c: k for c, k in RECEIPTS.native_kinds("binary").items() if c in wanted}
        log_kinds = {c: k for c, k in LOGS.native_kinds("binary").items() if c in wanted}
        kinds[_LOG_LIST] = ("logs", log_kinds)
        scanned = RECEIPTS.scan_answers(receipts, kinds)
        if scanned is None:
            return None
        n, out = scanned
        lists = out.pop(_LOG_LIST)
        made = build_arrow(out, RECEIPTS.columns, n, chain_id=chain_id, u256="binary")
        items = pc.list_flatten(lists)
        logs = build_arrow(dict(zip(log_kinds, items.flatten(), strict=True)), LOGS.columns, len(items),
                           chain_id=chain_id, u256="binary")  # fmt: skip
        if logs["log_index"].null_count:  # as the pure path reads them: an item without a log index is no log
            logs = pc.filter(logs, call_function("is_valid", [logs["log_index"]]))
        return made, logs

    def _table(self, frame: pl.DataFrame, *, chain_id: int) -> pa.Table:
        arrow = frame.to_arrow()
        return build_arrow(dict(zip(arrow.column_names, arrow.columns, strict=True)), self.columns, frame.height,
                           chain_id=chain_id)  # fmt: skip


def _frame(table: pa.Table, columns: Sequence[str]) -> pl.DataFrame:
    return pl.DataFrame(pl.from_arrow(table.select(list(columns))))


class AddressAppearances(Derived):
    name = "address_appearances"
    doc = (
        "Each address seen in a transaction and how, one row per block, transaction, address and relationship: the "
        "sender, the recipient, the contract a transaction created (its receipt's contractAddress), a log's emitter, "
        "and a log topic holding an address (a 32-byte topic whose first 12 bytes are zero: a heuristic, so small "
        "numbers indexed as topics appear too, and an address in a log's data does not). Top-level only: addresses "
        "reached by internal calls (traces) are not read yet. Read from the blocks' receipts alone (a receipt "
        "repeats its transaction's sender and recipient); --verify reads the transactions too, to prove them."
    )
    columns = (
        "chain_id", "block_number", "block_hash", "transaction_index", "transaction_hash", "address", "relationship",
    )  # fmt: skip
    sort = ("block_number", "transaction_index", "address", "relationship")
    fetched_with = (
        "eth_getBlockReceipts, batched (eth_getTransactionReceipt per transaction where a node lacks it): the "
        "receipts' own fetch; the transactions (eth_getBlockByNumber with full transactions) only to prove the rows"
    )
    method = RECEIPTS.method
    routes = RECEIPTS.routes
    chunk_size = 1000
    derived_from = (TRANSACTIONS, RECEIPTS)
    derived_fetched = (RECEIPTS,)
    """Full blocks cost the node more than anything else this dataset reads (anvil, 200 blocks of the benchmark
    chain: 1.05 server CPU-s against 0.75 for their receipts), and the receipts say all it needs."""
    row_checks = RowChecks(keys=(*_KEYS, "address", "relationship"))

    def derive(
        self, transactions: pa.Table, receipts: pa.Table | None, logs: pa.Table | None, *, chain_id: int
    ) -> pa.Table:
        assert receipts is not None
        assert logs is not None
        keys = list(_KEYS)
        txs = _frame(transactions, [*keys, "from_address", "to_address"])
        made = _frame(receipts, [*keys, "contract_address"])
        emitted = _frame(logs, [*keys, "address", "topics"])

        def seen(frame: pl.DataFrame, column: str | pl.Expr, relationship: Relationship) -> pl.DataFrame:
            address = pl.col(column) if isinstance(column, str) else column
            return frame.select(*keys, address.alias("address"), pl.lit(relationship).alias("relationship"))

        topics = emitted.select(*keys, "topics").explode("topics", keep_nulls=False)
        topics = topics.filter(pl.col("topics").bin.head(len(_PADDING)) == pl.lit(_PADDING))
        rows = pl.concat([
            seen(txs, "from_address", "sender"),
            seen(txs, "to_address", "recipient"),
            seen(made, "contract_address", "created_contract"),
            seen(emitted, "address", "log_emitter"),
            seen(topics, pl.col("topics").bin.slice(len(_PADDING)), "log_topic"),
        ])  # fmt: skip
        rows = rows.drop_nulls("address").unique(maintain_order=True)
        return self._table(rows, chain_id=chain_id)


class FourByteCounts(Derived):
    name = "four_byte_counts"
    doc = (
        "Function selectors called per block: one row per block, selector and arguments size, with the number of "
        "transactions calling it. Counted: top-level calls only (a transaction with a recipient and an input of 4 "
        "bytes or more, failed ones included; contract creations are not calls); calls made by contracts need "
        "traces and are not counted yet. Keyed like geth's 4byteTracer (selector and size): sum call_count over "
        "arguments_size for a selector's count."
    )
    columns = ("chain_id", "block_number", "block_hash", "selector", "arguments_size", "call_count")
    sort = ("block_number", "selector", "arguments_size")
    fetched_with = "eth_getBlockByNumber (full transactions), batched: the transactions' own fetch"
    chunk_size = 1000
    row_checks = RowChecks(keys=("block_number", "block_hash", "selector", "arguments_size", "call_count"))

    def derive(
        self, transactions: pa.Table, receipts: pa.Table | None, logs: pa.Table | None, *, chain_id: int
    ) -> pa.Table:
        txs = _frame(transactions, ["block_number", "block_hash", "to_address", "input"])
        calls = txs.filter(pl.col("to_address").is_not_null() & (pl.col("input").bin.size() >= 4))
        rows = (
            calls.group_by(
                "block_number",
                "block_hash",
                pl.col("input").bin.head(4).alias("selector"),
                (pl.col("input").bin.size() - 4).cast(pl.UInt64).alias("arguments_size"),
                maintain_order=True,
            )
            .len(name="call_count")
            .with_columns(pl.col("call_count").cast(pl.UInt64))
        )
        return self._table(rows, chain_id=chain_id)


ADDRESS_APPEARANCES = AddressAppearances()
FOUR_BYTE_COUNTS = FourByteCounts()
