"""Running chunk tasks: a fixed pool of workers pulls tasks lazily, so memory is bounded by chunk size times
concurrency, never by the length of the range.

Each task: skip it if its file is already a complete chunk (checked through the file's metadata), else fetch the
answers, decode them in a worker thread (so decoding overlaps with other chunks' fetching), sort, and write the file
atomically with its metadata. Counters feed the progress bar and the run report.
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
from chainframe.engine._files import ChunkMeta, is_complete, write_chunk
from chainframe.engine._logs import SplitState, fetch_logs, logs_table, sort_table
from chainframe.engine._plan import ChunkTask

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


async def fetch_and_decode(task: ChunkTask, client: Any, *, chain_id: int, state: SplitState, decode: Any) -> pa.Table:
    """The chunk's rows, in memory: fetch answers, then decode them in a worker thread."""
    dataset = DATASETS[task.dataset]
    blocks = BlockRange(task.start, task.end)
    if task.dataset == "logs":

        async def decode_piece(logs: list[bytes], receipts: list[bytes]) -> pa.Table:
            work = partial(logs_table, logs, receipts, task.filters, chain_id=chain_id, u256=task.u256)
            return await anyio.to_thread.run_sync(work, limiter=decode)

        pieces = await fetch_logs(client, blocks, task.filters, state, decode_piece)
        table = pa.concat_tables(pieces) if pieces else dataset.empty(task.u256)
    else:
        bodies = await dataset.fetch(client, blocks, **task.filters)
        table = await anyio.to_thread.run_sync(
            lambda: dataset.transform(bodies, chain_id=chain_id, u256=task.u256), limiter=decode
        )
    return sort_table(table, dataset.sort)


def _hashes_in(table: pa.Table, task: ChunkTask) -> tuple[bytes | None, bytes | None] | None:
    """The first and last blocks' hashes when the chunk's own rows hold them (blocks always; others often)."""
    if table.num_rows == 0 or "block_hash" not in table.column_names or "block_number" not in table.column_names:
        return None
    numbers = table["block_number"]
    if numbers[0].as_py() != task.start or numbers[-1].as_py() != task.end:
        return None
    return table["block_hash"][0].as_py(), table["block_hash"][-1].as_py()


async def _edge_hashes(client: Any, task: ChunkTask, table: pa.Table) -> tuple[bytes | None, bytes | None]:
    """Hashes of the chunk's first and last blocks (for reorg checks), from its rows when they hold them."""
    known = _hashes_in(table, task)
    if known is not None:
        return known
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
            table = await fetch_and_decode(task, client, chain_id=chain_id, state=counters.split, decode=decode)
            first_hash, last_hash = await _edge_hashes(client, task, table)
            meta = ChunkMeta(
                dataset=task.dataset, chain_id=chain_id, start=task.start, end=task.end, filters=task.filters,
                u256=task.u256, first_block_hash=first_hash, last_block_hash=last_hash, rows=table.num_rows,
                endpoint=endpoint, tool_version=__version__,
            )  # fmt: skip
            await anyio.to_thread.run_sync(partial(write_chunk, table, path, meta))
            report.written += 1
            report.rows += table.num_rows
            if on_chunk:
                on_chunk(task, table.num_rows, True)

    async with anyio.create_task_group() as tg:
        for _ in range(max(1, concurrency)):
            tg.start_soon(worker)
