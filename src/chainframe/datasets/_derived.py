"""address_appearances and four_byte_counts: rows computed from a block's transactions (and receipts, with their logs).

Each is fetched as the datasets it is made of are fetched (their own ``fetch``: full blocks batched, and
eth_getBlockReceipts with its per-transaction fallback; only those it needs, ``derived_fetched``: address_appearances
reads the receipts alone), decoded by their own transforms, and then derived column-wise (four_byte_counts in Polars,
address_appearances with numpy on the columns' buffers). Its answers are
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
from chainframe.datasets import _native
from chainframe.datasets._blocks import TRANSACTIONS
from chainframe.datasets._columns import U256
from chainframe.datasets._convert import DecodeError
from chainframe.datasets._dataset import BlockRange, Dataset, RowChecks, build_arrow
from chainframe.datasets._logs import LOGS
from chainframe.datasets._proof import Proof
from chainframe.datasets._receipts import RECEIPTS

if TYPE_CHECKING:
    import polars as pl

    from chainframe.rpc import Pacing
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

    def other_calls(self, blocks: int, filters: Any, pacing: Pacing | None = None) -> dict[str, int]:
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
        """Every (transaction, address, relationship) seen, once: each source's addresses gathered with numpy from
        the columns' buffers, sorted by the dataset's order with its key columns (np.lexsort), repeats dropped. Not
        through Polars: its import (0.24 CPU-s) and its frames cost as much as scanning the receipts did."""
        import numpy as np

        assert receipts is not None
        assert logs is not None
        # The key columns of every row that may be seen, one table: a candidate is a row of it, an address and a
        # relationship (its code: its place in _RELATIONSHIPS).
        tables = (transactions, receipts, logs)
        types = self.schema_for("binary")
        keys = {k: pa.concat_arrays([pc.cast(_flat(t[k]), types.field(k).type) for t in tables]) for k in _KEYS}
        tx, rc, lg = np.cumsum([0, *(t.num_rows for t in tables)])[:3]
        parent, words = _list_words(_flat(logs["topics"]))
        padded = ~words[:, : len(_PADDING)].any(axis=1)
        sources = [
            (tx, *_fixed(transactions["from_address"], 20), "sender"),
            (tx, *_fixed(transactions["to_address"], 20), "recipient"),
            (rc, *_fixed(receipts["contract_address"], 20), "created_contract"),
            (lg, *_fixed(logs["address"], 20), "log_emitter"),
        ]
        rows, addresses, codes = [], [], []
        for base, address, valid, relationship in sources:
            kept = np.flatnonzero(valid)
            rows.append(base + kept)
            addresses.append(address[kept])
            codes.append(np.full(len(kept), _RELATIONSHIPS.index(relationship), np.uint8))
        rows.append(lg + parent[padded])
        addresses.append(words[padded, len(_PADDING) :])
        codes.append(np.full(int(padded.sum()), _RELATIONSHIPS.index("log_topic"), np.uint8))
        row, address, code = np.concatenate(rows), np.concatenate(addresses), np.concatenate(codes)
        # Sorted by the dataset's order: block, transaction index, address (three big-endian integers, its last four
        # bytes beside the relationship's code); the most significant key last.
        packed = np.zeros((len(row), 24), np.uint8)
        packed[:, :20], packed[:, 23] = address, code
        wide = packed.view(">u8")
        number, index = _ints(keys["block_number"])[row], _ints(keys["transaction_index"])[row]
        by = [wide[:, 2], wide[:, 1], wide[:, 0], index, number]
        # The same row has the same hashes too: ids of the distinct hashes, one per key table's row.
        ids = [_ids(keys["block_hash"])[row], _ids(keys["transaction_hash"])[row]]
        order = np.lexsort(by)
        same = _same_as_before(order, by)
        hashes = _same_as_before(order, ids)
        if not (hashes | ~same).all():  # two transactions under one (block, index): the hashes sort too
            order = np.lexsort([*ids, *by])
            same = _same_as_before(order, by)
            hashes = _same_as_before(order, ids)
        chosen = order[~(same & hashes)]
        out = {k: pc.take(v, _int64s(row[chosen])) for k, v in keys.items()}
        out["address"] = _fixed_array(address[chosen], 20)
        out["relationship"] = pc.take(_relationship_names(), _int64s(code[chosen]))
        return build_arrow(out, self.columns, len(chosen), chain_id=chain_id)


def _same_as_before(order: Any, keys: Sequence[Any]) -> Any:
    """Whether each row, in ``order``, has the same ``keys`` as the row before it (the first: False)."""
    import numpy as np

    same = np.zeros(len(order), bool)
    if len(order) > 1:
        same[1:] = True
        for key in keys:
            ordered = key[order]
            same[1:] &= ordered[1:] == ordered[:-1]
    return same


_RELATIONSHIPS: tuple[Relationship, ...] = ("created_contract", "log_emitter", "log_topic", "recipient", "sender")
"""The relationships in their text's order (the dataset sorts by it): a row's code is its place here."""


def _relationship_names() -> pa.Array:
    """_RELATIONSHIPS as an Arrow string array, built from buffers (a Python list made an Arrow array makes pyarrow
    import pandas where it is installed: 0.3 s)."""
    import numpy as np

    data = "".join(_RELATIONSHIPS).encode()
    ends = np.cumsum([0, *(len(r) for r in _RELATIONSHIPS)]).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), len(_RELATIONSHIPS), [None, pa.py_buffer(ends), pa.py_buffer(data)])


def _flat(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if not isinstance(column, pa.ChunkedArray):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _fixed(column: pa.Array | pa.ChunkedArray, width: int) -> tuple[Any, Any]:
    """A fixed-size binary column as an (n, width) byte matrix, and which of its rows are not null."""
    import numpy as np

    array = _flat(column)
    buffer = array.buffers()[1]
    raw = np.frombuffer(buffer, np.uint8) if buffer is not None else np.zeros(0, np.uint8)
    matrix = raw[width * array.offset : width * (array.offset + len(array))].reshape(-1, width)
    return matrix, pc.valid_rows(array)


def _list_words(topics: pa.Array) -> tuple[Any, Any]:
    """Every non-null 32-byte item of a list column (a list's null items and a null list's are left out), with the
    row each is in."""
    import numpy as np

    n = len(topics)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros((0, 32), np.uint8)
    offsets = topics.offsets
    starts = np.frombuffer(offsets.buffers()[1], np.int32)[offsets.offset : offsets.offset + n + 1].astype(np.int64)
    words, valid = _fixed(topics.values, 32)
    span = slice(int(starts[0]), int(starts[-1])) if n else slice(0, 0)
    parent = np.repeat(np.arange(n), np.diff(starts))
    keep = valid[span] & pc.valid_rows(topics)[parent]
    return parent[keep], words[span][keep]


def _take_rows(table: pa.Table, rows: Any) -> dict[str, pa.Array]:
    index = _int64s(rows)
    return {k: pc.take(_flat(table[k]), index) for k in _KEYS}


def _int64s(values: Any) -> pa.Array:
    import numpy as np

    values = np.ascontiguousarray(values, np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _ints(array: pa.Array) -> Any:
    """A uint64 column's values (a null's is whatever its slot holds: the row checks refuse null keys)."""
    import numpy as np

    return np.frombuffer(array.buffers()[1], np.uint64)[array.offset : array.offset + len(array)]


def _ids(array: pa.Array) -> Any:
    """Each value's id among the column's distinct values (equal values, equal ids), by Arrow's hashing."""
    import numpy as np

    if len(array) == 0:
        return np.zeros(0, np.int32)
    encoded = call_function("dictionary_encode", [array])
    return np.frombuffer(encoded.indices.buffers()[1], np.int32)[: len(array)]


def _fixed_array(matrix: Any, width: int) -> pa.Array:
    import numpy as np

    data = np.ascontiguousarray(matrix)
    return pa.Array.from_buffers(pa.binary(width), len(data), [None, pa.py_buffer(data.tobytes())])


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
