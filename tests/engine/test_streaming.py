"""Rows streamed into chunk files: pieces handed on in block order, sorted cheaply, sized by the newest answers,
one chunk planned at a time (so memory does not grow with the chunk concurrency or the range)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pyarrow as pa
import pytest

from chainframe import InputError, collect
from chainframe.datasets import LOGS, BlockRange
from chainframe.devnet import Devnet
from chainframe.engine._context import ChunkContext
from chainframe.engine._engine import RunCounters, run_tasks
from chainframe.engine._logs import sort_table
from chainframe.engine._plan import Wanted, plan
from chainframe.engine._sink import InOrder
from chainframe.rpc import AsyncClient
from chainframe.store import Publisher, load_series

pytestmark = pytest.mark.anyio


def _rows(*blocks: int) -> pa.Table:
    n = len(blocks)
    return pa.table(
        {
            "block_number": pa.array(blocks, pa.uint64()),
            "block_hash": pa.array([bytes([b % 256]) * 32 for b in blocks], pa.binary(32)),
            "log_index": pa.array(range(n), pa.uint64()),
        }
    )


async def test_pieces_are_handed_on_in_block_order_whatever_order_they_finish() -> None:
    written: list[list[int]] = []

    async def write(table: pa.Table) -> None:
        await anyio.lowlevel.checkpoint()  # another piece may arrive meanwhile
        written.append(table["block_number"].to_pylist())

    sink = InOrder(10, write)
    await sink.put(BlockRange(15, 19), _rows(15, 19))
    await sink.put(BlockRange(13, 14), pa.table({"block_number": pa.array([], pa.uint64())}))
    assert written == []  # nothing may pass before blocks 10..12
    assert sink.done_through == 9
    await sink.put(BlockRange(10, 12), _rows(10, 11, 12))
    assert written == [[10, 11, 12], [15, 19]]  # the empty piece is skipped, not written
    assert sink.done_through == 19
    assert sink.rows == 5
    with pytest.raises(ValueError, match="overlap"):
        await sink.put(BlockRange(18, 25), _rows(18))


async def test_sort_table_leaves_sorted_rows_uncopied_and_sorts_the_rest() -> None:
    ordered = _rows(1, 1, 2, 5)
    assert sort_table(ordered, ("block_number", "log_index")) is ordered
    shuffled = ordered.take([2, 0, 3, 1])
    assert sort_table(shuffled, ("block_number", "log_index")).equals(ordered)


async def test_logs_are_fetched_one_chunk_at_a_time_in_pieces_sized_by_answers(devnet: Devnet, tmp_path: Path) -> None:
    """Straight to the node (no limits, so no splits): every eth_getLogs starts at a later block than the one
    before it, even with 4 chunks running at once, and at most 8 pieces are in flight."""
    starts: list[tuple[int, int]] = []
    in_flight = peak = 0

    class Recording(AsyncClient):
        @property
        def cheap_calls(self) -> bool:
            return False  # one call per piece, so calls in flight are pieces in flight (several: test_logs_calls)

        async def request_bytes(self, method: str, params: Any = ()) -> bytes:
            nonlocal in_flight, peak
            starts.append((int(params[0]["fromBlock"], 16), int(params[0]["toBlock"], 16)))
            in_flight += 1
            peak = max(peak, in_flight)
            try:
                return await super().request_bytes(method, params)
            finally:
                in_flight -= 1

    head = devnet.truth.head
    want = Wanted(dataset="logs", filters={}, u256="decimal", chunk_size=60)
    tasks, _ = plan(want, BlockRange(0, head), series=load_series(tmp_path / "logs"), chain_id=devnet.truth.chain_id,
                    head=head)  # fmt: skip
    counters = RunCounters()
    async with Recording(devnet.node.url) as client:
        # finalized=head: no witness reads around pieces, which would let requests of pieces in flight swap places.
        shared = ChunkContext(client, devnet.truth.chain_id, "node", head, counters.split, anyio.CapacityLimiter(2))
        await run_tasks(iter(tasks), shared, concurrency=4, counters=counters,
                        publish=Publisher(tmp_path, "parquet").publish)  # fmt: skip
    assert [a for a, _ in starts] == sorted(a for a, _ in starts)
    assert starts[0] == (0, 9)  # the first piece is small: nothing was known yet
    covered = sorted(b for a, z in starts for b in range(a, z + 1))
    assert covered == list(range(head + 1))  # every block exactly once
    assert len({z - a for a, z in starts}) > 2  # spans followed the answers' sizes
    assert 1 < peak <= 8
    assert counters.datasets["logs"].rows == sum(devnet.truth.logs_per_block())


def test_pandas_output_without_pandas_fails_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pandas" else real(name, *a))
    with pytest.raises(InputError, match="pip install pandas"):
        # Nothing listens on port 1: a request would fail with a connection error instead.
        collect("logs", blocks="0:10", rpc="http://127.0.0.1:1", output="pandas")


def test_collect_hands_back_every_log_of_the_range(devnet: Devnet) -> None:
    table = collect("logs", blocks="0:100", rpc=devnet.node.url, chunk_size=30)
    assert table.num_rows == sum(devnet.truth.logs_per_block()[:101])
    assert table.schema == LOGS.schema
    assert sort_table(table, LOGS.sort) is table  # already in order
