"""The four block datasets over the whole devnet chain, fetched and transformed as the pipeline does (chunks of 40
blocks over HTTP), checked against the plan's ground truth and, row by row and column by column, against the client's
typed objects for the same items."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import anyio
import pyarrow as pa
import pytest

from chainframe.datasets import BLOCKS, COLUMNS, LOGS, RECEIPTS, TRANSACTIONS, BlockRange
from chainframe.datasets._objects import ObjectDataset
from chainframe.devnet import Devnet, GatewaySettings
from chainframe.families import FAMILIES
from chainframe.rpc import AsyncClient, Block, Log, Receipt, Transaction
from tests.datasets.encode import LISTS, STRUCTS

pytestmark = pytest.mark.anyio
CHUNK = 40  # blocks per fetch; 40 blocks of this chain hold far fewer logs than the gateway's 10,000 cap
DATASETS: tuple[ObjectDataset, ...] = (BLOCKS, TRANSACTIONS, RECEIPTS, LOGS)
KEYS: dict[str, tuple[str, ...]] = {
    "blocks": ("block_number",),
    "transactions": ("transaction_hash",),
    "receipts": ("transaction_hash",),
    "logs": ("block_number", "log_index"),
}


@dataclass
class Chain:
    """Everything read from the devnet once, for all tests of this module."""

    devnet: Devnet
    chunks: list[BlockRange]
    bodies: dict[str, list[list[bytes]]] = field(default_factory=dict)  # dataset -> per chunk, fetch's answers
    tables: dict[str, pa.Table] = field(default_factory=dict)  # dataset -> the whole chain
    blocks: dict[int, Block] = field(default_factory=dict)  # transactions as hashes
    full_blocks: dict[int, Block] = field(default_factory=dict)  # transactions as objects
    receipts: dict[int, tuple[Receipt, ...]] = field(default_factory=dict)
    logs: list[Log] = field(default_factory=list)


async def _gather(items: Sequence[Any], get: Callable[[Any], Any], limit: int = 16) -> list[Any]:
    """``await get(item)`` for every item, at most ``limit`` at once; results in item order."""
    results: list[Any] = [None] * len(items)
    limiter = anyio.CapacityLimiter(limit)

    async def one(i: int) -> None:
        async with limiter:
            results[i] = await get(items[i])

    async with anyio.create_task_group() as tg:
        for i in range(len(items)):
            tg.start_soon(one, i)
    return results


@pytest.fixture(scope="module")
async def chain(devnet_session: Devnet) -> Chain:
    devnet = devnet_session
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings())
    head = devnet.truth.head
    out = Chain(devnet, [BlockRange(a, min(a + CHUNK - 1, head)) for a in range(0, head + 1, CHUNK)])
    chain_id = devnet.truth.chain_id
    numbers = list(range(head + 1))
    # Straight to the node: the gateway in front of it (a process of its own) is not what this module tests, and
    # relaying the chain's thousand answers cost it as much CPU as the node.
    async with AsyncClient(devnet.node.url, transport="http") as client:
        for dataset in DATASETS:
            out.bodies[dataset.name] = await _gather(out.chunks, lambda r, d=dataset: d.fetch(client, r), limit=4)
            out.tables[dataset.name] = pa.concat_tables(
                [dataset.transform(b, chain_id=chain_id) for b in out.bodies[dataset.name]]
            )
        blocks = await _gather(numbers, lambda n: client.get_block(n))
        full = await _gather(numbers, lambda n: client.get_block(n, full_transactions=True))
        receipts = await _gather(numbers, lambda n: client.get_block_receipts(n))
        logs = await _gather(out.chunks, lambda r: client.get_logs(from_block=r.start, to_block=r.end), limit=4)
    out.blocks = dict(zip(numbers, blocks, strict=True))
    out.full_blocks = dict(zip(numbers, full, strict=True))
    out.receipts = dict(zip(numbers, receipts, strict=True))
    out.logs = [log for chunk in logs for log in chunk]
    return out


# --- (a) counts and keys against the ground truth -----------------------------------------------------------------


async def test_row_counts_match_the_ground_truth(chain: Chain) -> None:
    truth = chain.devnet.truth
    assert chain.tables["blocks"].num_rows == truth.head + 1
    assert chain.tables["transactions"].num_rows == len(truth.txs)
    assert chain.tables["receipts"].num_rows == len(truth.txs)
    assert chain.tables["logs"].num_rows == truth.log_count
    blocks = chain.tables["blocks"].to_pydict()
    assert blocks["block_number"] == list(range(truth.head + 1))
    assert blocks["transaction_count"] == truth.txs_per_block()
    receipts = chain.tables["receipts"].to_pydict()
    per_block = [0] * (truth.head + 1)
    for number, count in zip(receipts["block_number"], receipts["log_count"], strict=True):
        per_block[number] += count
    assert per_block == truth.logs_per_block()


@pytest.mark.parametrize("name", KEYS)
async def test_no_duplicate_keys(chain: Chain, name: str) -> None:
    table = chain.tables[name]
    keys = list(zip(*(table.column(k).to_pylist() for k in KEYS[name]), strict=True))
    assert len(set(keys)) == len(keys) == table.num_rows


async def test_transactions_are_the_planned_ones(chain: Chain) -> None:
    truth = chain.devnet.truth
    txs = chain.tables["transactions"].to_pydict()
    planned = {bytes.fromhex(t.hash[2:]): t for t in truth.txs}
    assert set(txs["transaction_hash"]) == set(planned)
    for tx_hash, number, index, tx_type, to in zip(
        txs["transaction_hash"],
        txs["block_number"],
        txs["transaction_index"],
        txs["transaction_type"],
        txs["to_address"],
        strict=True,
    ):
        plan = planned[tx_hash]
        assert (number, index, tx_type) == (plan.block, plan.index, plan.tx_type)
        assert to == (None if plan.to is None else bytes.fromhex(plan.to[2:]))
    assert set(txs["transaction_type"]) == {0, 1, 2, 4}
    (authorizations,) = [a for a in txs["authorization_list"] if a]
    assert authorizations[0]["address"] == bytes.fromhex(truth.contracts["Store"][2:])
    receipts = chain.tables["receipts"].to_pydict()
    status = dict(zip(receipts["transaction_hash"], receipts["status"], strict=True))
    assert status == {h: t.status for h, t in planned.items()}
    assert set(receipts["transaction_type"]) == {0, 1, 2, 4}


# --- (b) every row equals the typed object, column by column ------------------------------------------------------


def _attr(key: str) -> str:
    """The typed attribute of a JSON key: snake_case, ``from`` -> ``from_``."""
    if key == "from":
        return "from_"
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def _same(kind: str, value: Any, typed: Any) -> bool:
    """A column value equals the typed client's value, exactly (types included)."""
    if value is None or typed is None:
        return value is None and typed is None
    if kind in ("u64", "u8"):
        return type(value) is int and type(typed) is int and value == typed
    if kind == "wei":
        return isinstance(value, Decimal) and value == value.to_integral_value() and int(value) == typed
    if kind == "word":
        return type(value) is bytes and len(value) == 32 and int.from_bytes(value, "big") == typed
    if kind in ("address", "hash", "bytes8", "bloom", "data"):
        return type(value) is bytes and type(typed) is bytes and value == typed
    if kind == "bool":
        return value is typed
    if kind in LISTS:
        return len(value) == len(typed) and all(_same(LISTS[kind], v, t) for v, t in zip(value, typed, strict=True))
    if kind in STRUCTS:
        fields = STRUCTS[kind]
        return len(value) == len(typed) and all(
            set(v) == set(fields) and all(_same(sub, v[name], getattr(t, name)) for name, (_, sub) in fields.items())
            for v, t in zip(value, typed, strict=True)
        )
    raise AssertionError(f"no comparison for kind {kind!r}")


FAMILY_COLUMNS = {name: {c for f in FAMILIES for c in f.columns.get(name, {})} for name in ("blocks", "transactions",
                                                                                         "receipts")}  # fmt: skip
"""Columns other chain families than Ethereum have (issue 43): the typed Ethereum objects have no such field."""


def _check_rows(dataset: ObjectDataset, table: pa.Table, typed: Sequence[Any]) -> None:
    """Row ``i`` of the table against typed object ``i``, through the dataset's sources; every key the node sent is
    read by a column (a receipt's logs are the logs dataset)."""
    assert table.num_rows == len(typed)
    covered = set(dataset.sources.values()) | ({"logs"} if dataset is RECEIPTS else set())
    for i, (row, obj) in enumerate(zip(table.to_pylist(), typed, strict=True)):
        assert set(obj.to_json()) <= covered, f"{dataset.name} row {i}: keys no column reads"
        for column, key in dataset.sources.items():
            if column in FAMILY_COLUMNS.get(dataset.name, {}) and not hasattr(obj, _attr(key)):
                assert row[column] is None, f"{dataset.name} row {i}: {column} of another chain family"
                continue
            expected = getattr(obj, _attr(key))
            assert _same(COLUMNS[column].kind, row[column], expected), (
                f"{dataset.name} row {i}: {column} = {row[column]!r}, typed {type(obj).__name__}.{_attr(key)} = "
                f"{expected!r}"
            )
        seconds = row.get("block_timestamp", row.get("timestamp"))
        assert row["block_time"] == (None if seconds is None else datetime.fromtimestamp(seconds, UTC))
        assert row["chain_id"] == 31337


async def test_blocks_equal_typed_blocks(chain: Chain) -> None:
    typed = [chain.blocks[n] for n in sorted(chain.blocks)]
    table = chain.tables["blocks"]
    _check_rows(BLOCKS, table, typed)
    assert table.column("transaction_count").to_pylist() == [len(b.transactions) for b in typed]


async def test_transactions_equal_typed_transactions(chain: Chain) -> None:
    blocks = [chain.full_blocks[n] for n in sorted(chain.full_blocks)]
    typed = [tx for block in blocks for tx in block.transactions]
    assert all(isinstance(tx, Transaction) for tx in typed)
    _check_rows(TRANSACTIONS, chain.tables["transactions"], typed)
    # anvil sends each transaction's blockTimestamp; it must agree with its block's.
    timestamps = {b.number: b.timestamp for b in blocks}
    assert all(tx.block_timestamp == timestamps[tx.block_number] for tx in typed)


async def test_receipts_equal_typed_receipts(chain: Chain) -> None:
    typed = [r for n in sorted(chain.receipts) for r in chain.receipts[n]]
    table = chain.tables["receipts"]
    _check_rows(RECEIPTS, table, typed)
    assert table.column("log_count").to_pylist() == [len(r.logs) for r in typed]


async def test_logs_equal_typed_logs(chain: Chain) -> None:
    _check_rows(LOGS, chain.tables["logs"], chain.logs)


async def test_receipt_logs_equal_typed_logs(chain: Chain) -> None:
    """The logs inside the receipts are the same logs as eth_getLogs' (typed side of check (c))."""
    in_receipts = [log for n in sorted(chain.receipts) for r in chain.receipts[n] for log in r.logs]
    assert in_receipts == chain.logs


# --- (c) to (e): logs two ways, purity, schemas -------------------------------------------------------------------


async def test_logs_from_receipts_equal_logs_from_get_logs(chain: Chain) -> None:
    chain_id = chain.devnet.truth.chain_id
    for i, blocks in enumerate(chain.chunks):
        from_receipts = LOGS.from_receipts(chain.bodies["receipts"][i], chain_id=chain_id)
        from_get_logs = LOGS.transform(chain.bodies["logs"][i], chain_id=chain_id)
        assert from_receipts.num_rows > 0, blocks
        assert from_receipts.equals(from_get_logs), blocks


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda d: d.name)
async def test_transform_is_pure(chain: Chain, dataset: ObjectDataset) -> None:
    chain_id = chain.devnet.truth.chain_id
    bodies = [body for chunk in chain.bodies[dataset.name] for body in chunk]
    snapshot = [bytes(b) for b in bodies]
    first = dataset.transform(bodies, chain_id=chain_id)
    second = dataset.transform(bodies, chain_id=chain_id)
    assert first.equals(second)
    assert first.equals(chain.tables[dataset.name])  # all chunks at once == chunk by chunk, concatenated
    assert bodies == snapshot  # the input is left as it was


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda d: d.name)
async def test_schema_is_the_datasets(chain: Chain, dataset: ObjectDataset) -> None:
    assert chain.tables[dataset.name].schema == dataset.schema
    for chunk in chain.bodies[dataset.name]:
        assert dataset.transform(chunk, chain_id=1).schema == dataset.schema
