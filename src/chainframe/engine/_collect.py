"""``collect``: one dataset over a block range in memory, each chunk checked against the chain as a file's is."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

import anyio
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import InputError
from chainframe._twins import carry_over
from chainframe.datasets import U256
from chainframe.engine._canonical import ChainUnstable, ChunkCheck, on_one_fork
from chainframe.engine._client import endpoint_of, make_client
from chainframe.engine._context import ChunkContext
from chainframe.engine._engine import ATTEMPTS, DECODE_THREADS, RunCounters, chain_for, fetch_and_decode
from chainframe.engine._logs import SplitState
from chainframe.engine._options import chunk_size_of, dataset_inputs
from chainframe.engine._plan import ChunkTask, slots
from chainframe.engine._portal import blocking, typed_errors
from chainframe.engine._ranges import DEFAULT_CONFIRMATIONS, chain_state, parse_blocks, resolve_blocks
from chainframe.engine._ranges import BlocksArg as Blocks
from chainframe.engine._report import Progress
from chainframe.engine._sink import InOrder
from chainframe.rpc import Endpoint

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

Output = Literal["arrow", "polars", "pandas"]


@typed_errors
async def acollect(
    dataset: str,
    *,
    blocks: Blocks,
    rpc: str | Endpoint | None = None,
    network: str | None = None,
    key: str | None = None,
    output: Output = "arrow",
    chunk_size: int | None = None,
    u256: U256 = "decimal",
    confirmations: int = DEFAULT_CONFIRMATIONS,
    progress: bool | None = None,
    client_options: Mapping[str, Any] | None = None,
    **filters: Any,
) -> Any:
    """One dataset over a block range, in memory: a pyarrow Table, or a Polars / pandas frame (``output``).
    ``progress``: a bar (None: where someone watches, a terminal or a notebook)."""
    if "abi_dir" in filters:  # a table of one series, where abi_dir makes one per event and function
        raise InputError(
            "collect gives one table; abi_dir decodes into a series per event and function: extract(..., abi_dir=) "
            "into a folder and read each series with chainframe.scan or open_duckdb, or collect with "
            "event=/function= the ABI's entries"
        )
    ((dataset, flt),) = dataset_inputs(dataset, filters, acollect).items()
    size = chunk_size_of(dataset, chunk_size)
    spec = parse_blocks(blocks)
    if output not in ("arrow", "polars", "pandas"):
        raise InputError(f"output must be 'arrow', 'polars' or 'pandas'; got {output!r}")
    if output == "pandas" and importlib.util.find_spec("pandas") is None:
        raise InputError("output='pandas' needs pandas: pip install 'chainframe[notebook]' (or pip install pandas)")
    endpoint = endpoint_of(rpc, network, key)
    async with make_client(endpoint, client_options, rpc) as client:
        chain = await chain_state(client, confirmations)
        chain_id, finalized = chain.chain_id, chain.safe
        resolved = await resolve_blocks(spec, client, confirmations=confirmations, head=chain.head, safe=finalized)
        tasks = [
            ChunkTask(dataset=dataset, start=part.start, end=part.end, filters=flt, u256=u256, chunk_size=size, path="")
            for run in resolved
            for part in slots(run, size)
        ]
        tables: list[pa.Table] = [pc.empty_table(task.schema()) for task in tasks]
        decode, chunks = anyio.CapacityLimiter(DECODE_THREADS), anyio.CapacityLimiter(4)
        run = ChunkContext(client, chain_id, endpoint.display, finalized, SplitState(), decode)

        bar = Progress(0, enabled=progress, client=client, counters=RunCounters(), desc="collect")
        bar.add_tasks(tasks)

        async def one(i: int, task: ChunkTask) -> None:
            async with chunks:
                tables[i] = await _collect_chunk(task, run)
            bar.chunk(task, tables[i].num_rows, written=False)

        try:
            async with anyio.create_task_group() as tg:
                for i, task in enumerate(tasks):
                    tg.start_soon(one, i, task)
        finally:
            bar.close()
    table = pa.concat_tables(tables)
    if output == "polars":
        return pl.from_arrow(table)
    if output == "pandas":  # through Polars: pyarrow cannot give pandas a list of fixed-size binaries
        return pl.from_arrow(table).to_pandas()
    return table


async def _collect_chunk(task: ChunkTask, run: ChunkContext) -> pa.Table:
    """One chunk's rows in memory, checked against the chain like a file's (fetched again if they mix forks)."""
    for _ in range(ATTEMPTS):
        pieces: list[pa.Table] = []

        async def keep(table: pa.Table, pieces: list[pa.Table] = pieces) -> None:
            pieces.append(table)

        async def read(keep: Any = keep) -> None:
            check = ChunkCheck(task.dataset, run.finalized)
            await fetch_and_decode(task, run, sink=InOrder(task.start, keep), check=check)
            check.confirm(await chain_for(run.client, task, run.finalized), blocks=f"{task.start}..{task.end}")

        done, _ = await on_one_fork(read)
        if done:
            return pa.concat_tables(pieces) if pieces else pc.empty_table(task.schema())
    raise ChainUnstable(f"{task.dataset} blocks {task.start}..{task.end}: the chain kept reorganizing under it")


@overload
def collect(dataset: str, *, output: Literal["arrow"] = "arrow", **options: Any) -> pa.Table: ...
@overload
def collect(dataset: str, *, output: Literal["polars"], **options: Any) -> pl.DataFrame: ...
@overload
def collect(dataset: str, *, output: Literal["pandas"], **options: Any) -> Any: ...  # pandas ships no types
def collect(dataset: str, **options: Any) -> Any:
    """Blocking :func:`acollect` (works inside Jupyter's running event loop)."""
    return blocking(acollect, dataset, **options)


carry_over(collect, acollect)  # help() and editors show acollect's options and docstring
