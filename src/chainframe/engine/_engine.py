"""Running chunk tasks: a fixed pool of workers pulls tasks lazily, so memory is bounded by chunk size times
concurrency, never by the length of the range.

Each task: skip it if its file is already a complete chunk (checked through the file's metadata), else fetch the
answers, decode them in a worker thread (so decoding overlaps with other chunks' fetching), and stream the sorted rows
into the chunk's file, which is put in place atomically with its metadata once whole. Counters feed the progress
bar and the run report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pyarrow as pa

from chainframe._version import __version__
from chainframe.datasets import DATASETS, BlockRange
from chainframe.engine._files import ChunkMeta, ChunkWriter, is_complete
from chainframe.engine._logs import SplitState, fetch_logs, logs_table, plan_pieces, sort_table
from chainframe.engine._plan import ChunkTask
from chainframe.engine._sink import InOrder

PIECE_BLOCKS = 100
"""Blocks per piece for the datasets fetched block by block (all but logs, whose pieces follow the answers' size)."""
DECODE_THREADS = 2  # this machine's cores; decoding releases the GIL in Polars and Arrow


@dataclass
class DatasetReport:
    chunks: int = 0
    written: int = 0
    skipped: int = 0
    rows: int = 0
    blocks: int = 0


@dataclass
class RunCounters:
    datasets: dict[str, DatasetReport] = field(default_factory=dict)
    split: SplitState = field(default_factory=SplitState)

    def dataset(self, name: str) -> DatasetReport:
        return self.datasets.setdefault(name, DatasetReport())


async def fetch_and_decode(
    task: ChunkTask, client: Any, *, chain_id: int, state: SplitState, decode: Any, sink: InOrder
) -> None:
    """Fetch the chunk's answers, decode them in a worker thread and hand the rows, sorted, to ``sink``.

    Pieces (logs: sized by the answers; others: ``PIECE_BLOCKS`` blocks) are fetched concurrently, at most
    ``state.in_flight`` at once across chunks, and each is decoded and handed on as it arrives: memory is bounded by
    the pieces in flight, not by the chunk."""
    dataset = DATASETS[task.dataset]
    blocks = BlockRange(task.start, task.end)
    if task.dataset == "logs":

        def decode_logs(logs: list[bytes], receipts: list[bytes]) -> pa.Table:
            table = logs_table(logs, receipts, task.filters, chain_id=chain_id, u256=task.u256)
            return sort_table(table, dataset.sort)

        async def decode_piece(logs: list[bytes], receipts: list[bytes]) -> pa.Table:
            return await anyio.to_thread.run_sync(decode_logs, logs, receipts, limiter=decode)

        await fetch_logs(client, blocks, task.filters, state, decode_piece, sink.put)
    else:

        def work(bodies: list[bytes]) -> pa.Table:
            return sort_table(dataset.transform(bodies, chain_id=chain_id, u256=task.u256), dataset.sort)

        async def piece(part: BlockRange) -> None:
            try:
                bodies = await dataset.fetch(client, part, **task.filters)
                table = await anyio.to_thread.run_sync(work, bodies, limiter=decode)
                del bodies
                await sink.put(part, table)
            finally:
                state.in_flight.release()

        # In pieces, like logs: a chunk's answers are never held whole (receipts of 1,000 blocks peaked at 495 MB).
        await plan_pieces(blocks, state, lambda: PIECE_BLOCKS, piece)
    if sink.done_through != task.end:
        raise AssertionError(f"chunk {task.start}..{task.end}: rows handed on only through {sink.done_through}")


async def _edge_hashes(client: Any, task: ChunkTask, sink: InOrder) -> tuple[bytes | None, bytes | None]:
    """Hashes of the chunk's first and last blocks (for reorg checks), from its rows when they hold them."""
    if sink.first is not None and sink.last is not None and sink.first[0] == task.start and sink.last[0] == task.end:
        return sink.first[1], sink.last[1]
    first, last = await client.batch(
        [("eth_getBlockByNumber", [hex(task.start), False]), ("eth_getBlockByNumber", [hex(task.end), False])]
    )
    for block in (first, last):
        if isinstance(block, Exception):
            raise block

    def hash_of(block: Any) -> bytes | None:
        return bytes.fromhex(block["hash"][2:]) if block and block.get("hash") else None

    return hash_of(first), hash_of(last)


async def run_tasks(
    tasks: Iterator[ChunkTask],
    client: Any,
    *,
    chain_id: int,
    endpoint: str,
    overwrite: bool,
    concurrency: int,
    counters: RunCounters,
    on_chunk: Callable[[ChunkTask, int, bool], None] | None = None,
) -> None:
    """Run every task with ``concurrency`` workers; ``on_chunk(task, rows, written)`` after each."""
    decode = anyio.CapacityLimiter(DECODE_THREADS)

    async def worker() -> None:
        for task in tasks:  # a shared iterator: each task goes to exactly one worker
            report = counters.dataset(task.dataset)
            report.chunks += 1
            report.blocks += task.end - task.start + 1
            path = Path(task.path)
            done = not overwrite and await anyio.to_thread.run_sync(
                partial(
                    is_complete,
                    path,
                    dataset=task.dataset,
                    chain_id=chain_id,
                    start=task.start,
                    end=task.end,
                    filters=task.filters,
                    u256=task.u256,
                )
            )
            if done:
                report.skipped += 1
                if on_chunk:
                    on_chunk(task, 0, False)
                continue
            with ChunkWriter(path, DATASETS[task.dataset].schema_for(task.u256)) as writer:

                async def write(table: pa.Table, writer: ChunkWriter = writer) -> None:
                    await anyio.to_thread.run_sync(writer.write, table)

                sink = InOrder(task.start, write)
                await fetch_and_decode(task, client, chain_id=chain_id, state=counters.split, decode=decode, sink=sink)
                first_hash, last_hash = await _edge_hashes(client, task, sink)
                meta = ChunkMeta(
                    dataset=task.dataset, chain_id=chain_id, start=task.start, end=task.end, filters=task.filters,
                    u256=task.u256, first_block_hash=first_hash, last_block_hash=last_hash, rows=sink.rows,
                    endpoint=endpoint, tool_version=__version__,
                )  # fmt: skip
                await anyio.to_thread.run_sync(writer.commit, meta)
            report.written += 1
            report.rows += sink.rows
            if on_chunk:
                on_chunk(task, sink.rows, True)

    async with anyio.create_task_group() as tg:
        for _ in range(max(1, concurrency)):
            tg.start_soon(worker)
