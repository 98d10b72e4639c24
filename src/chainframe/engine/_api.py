"""The Python API: ``extract`` (files) and ``collect`` (in memory) as two thin layers over one engine; async
variants; and opening a dataset folder in DuckDB (one view per dataset) or Polars (lazy scan).

Everything the user gives is checked before any request: datasets, filters, the block range's syntax, the output
folder and the endpoint. The blocking functions run the async ones on a portal thread, so they work in Jupyter.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Literal

import anyio
import polars as pl
import pyarrow as pa
from anyio.from_thread import start_blocking_portal

from chainframe._errors import InputError
from chainframe.datasets import DATASETS, U256, register_duckdb
from chainframe.engine._engine import DECODE_THREADS, RunCounters, fetch_and_decode, run_tasks
from chainframe.engine._files import clean_temporaries
from chainframe.engine._logs import SplitState
from chainframe.engine._plan import DEFAULT_CHUNK_SIZE, FILTERS, ChunkTask, check_datasets, check_filters, plan
from chainframe.engine._ranges import DEFAULT_CONFIRMATIONS, parse_range, resolve
from chainframe.engine._report import Progress, RunReport, now
from chainframe.engine._sink import InOrder
from chainframe.rpc import AsyncClient, Endpoint

Output = Literal["arrow", "polars", "pandas"]
Blocks = str | int | tuple[int, int]


def endpoint_of(rpc: str | Endpoint | None, network: str | None, key: str | None) -> Endpoint:
    if (rpc is None) == (network is None):
        raise InputError("say where to read from: rpc='https://host/v3/KEY' (any JSON-RPC URL) or network='mainnet'")
    if network is not None:
        return Endpoint.infura(network, key)
    return rpc if isinstance(rpc, Endpoint) else Endpoint.from_url(str(rpc))


def _chunk_size(dataset: str, chunk_size: int | None) -> int:
    size = DEFAULT_CHUNK_SIZE[dataset] if chunk_size is None else chunk_size
    if size < 1:
        raise InputError(f"chunk_size must be at least 1; got {size}")
    return size


def _inputs(datasets: str | Sequence[str], filters: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    names = check_datasets([datasets] if isinstance(datasets, str) else datasets)
    per_dataset: dict[str, dict[str, Any]] = {}
    for name in names:
        relevant = {k: v for k, v in filters.items() if k in _filter_names(name) or len(names) == 1}
        per_dataset[name] = check_filters(name, relevant)
    unused = set(filters) - {k for n in names for k in _filter_names(n)}
    if unused:
        raise InputError(f"no chosen dataset takes {', '.join(sorted(unused))} (datasets: {', '.join(names)})")
    return per_dataset


def _check_out(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise InputError(f"out={folder} is a file; give a folder for the datasets")


def _prepare_out(folder: Path, datasets: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in datasets:
        clean_temporaries(folder / name)  # left by killed runs


def _filter_names(dataset: str) -> frozenset[str]:
    return FILTERS.get(dataset, frozenset())


async def aextract(
    datasets: str | Sequence[str],
    *,
    blocks: Blocks,
    out: str | Path,
    rpc: str | Endpoint | None = None,
    network: str | None = None,
    key: str | None = None,
    chunk_size: int | None = None,
    overwrite: bool = False,
    concurrency: int = 4,
    u256: U256 = "decimal",
    confirmations: int = DEFAULT_CONFIRMATIONS,
    progress: bool | None = None,
    report: str | Path | None = None,
    client_options: Mapping[str, Any] | None = None,
    **filters: Any,
) -> RunReport:
    """Extract datasets over a block range into Parquet files under ``out/<dataset>/``; return the run report.

    ``blocks``: ``"A:B"`` (B included), ``"A:+N"``, ``"-N:"``, ``"A:"``, tags, k/M suffixes (see
    :mod:`chainframe.engine._ranges`). Filters: logs ``address``, ``topics``; proofs ``addresses``,
    ``storage_keys``; traces ``calls`` (and ``only_top_call``, ``diff_mode``). Complete chunks are skipped (checked
    through their metadata) unless ``overwrite``.
    """
    per_dataset = _inputs(datasets, filters)
    sizes = {name: _chunk_size(name, chunk_size) for name in per_dataset}
    spec = parse_range(blocks)
    folder = Path(out)
    await anyio.to_thread.run_sync(_check_out, folder)
    if u256 not in ("decimal", "binary"):
        raise InputError(f"u256 must be 'decimal' or 'binary'; got {u256!r}")
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1; got {concurrency}")
    endpoint = endpoint_of(rpc, network, key)
    started, clock = now(), time.monotonic()
    async with AsyncClient(endpoint, **dict(client_options or {})) as client:
        chain_id = await client.chain_id()
        resolved = await resolve(spec, client, confirmations=confirmations)
        await anyio.to_thread.run_sync(_prepare_out, folder, list(per_dataset))
        tasks = chain.from_iterable(
            plan(name, resolved, out=folder, chain_id=chain_id, chunk_size=sizes[name], filters=flt, u256=u256)
            for name, flt in per_dataset.items()
        )
        counters = RunCounters()
        bar = Progress(len(resolved) * len(per_dataset), enabled=progress, client=client, counters=counters)
        try:
            await run_tasks(
                tasks, client, chain_id=chain_id, endpoint=endpoint.display, overwrite=overwrite,
                concurrency=concurrency, counters=counters, on_chunk=bar.chunk,
            )  # fmt: skip
        finally:
            bar.close()
        result = RunReport.make(
            started=started, seconds=time.monotonic() - clock, endpoint=endpoint.display, chain_id=chain_id,
            blocks=(resolved.start, resolved.end), text=spec.text, out=folder, counters=counters, client=client,
        )  # fmt: skip
    result.save(Path(report) if report is not None else result.default_path())
    return result


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
    client_options: Mapping[str, Any] | None = None,
    **filters: Any,
) -> Any:
    """One dataset over a block range, in memory: a pyarrow Table, or a Polars / pandas frame (``output``)."""
    flt = _inputs(dataset, filters)[dataset]
    size = _chunk_size(dataset, chunk_size)
    spec = parse_range(blocks)
    if output not in ("arrow", "polars", "pandas"):
        raise InputError(f"output must be 'arrow', 'polars' or 'pandas'; got {output!r}")
    if output == "pandas" and importlib.util.find_spec("pandas") is None:
        raise InputError("output='pandas' needs pandas, which chainframe does not install: pip install pandas")
    endpoint = endpoint_of(rpc, network, key)
    async with AsyncClient(endpoint, **dict(client_options or {})) as client:
        chain_id = await client.chain_id()
        resolved = await resolve(spec, client, confirmations=confirmations)
        tasks = list(plan(dataset, resolved, out=Path("."), chain_id=chain_id, chunk_size=size, filters=flt, u256=u256))
        tables: list[pa.Table] = [DATASETS[dataset].empty(u256)] * len(tasks)
        state, decode, chunks = SplitState(), anyio.CapacityLimiter(DECODE_THREADS), anyio.CapacityLimiter(4)

        async def one(i: int, task: ChunkTask) -> None:
            pieces: list[pa.Table] = []

            async def keep(table: pa.Table) -> None:
                pieces.append(table)

            async with chunks:
                sink = InOrder(task.start, keep)
                await fetch_and_decode(task, client, chain_id=chain_id, state=state, decode=decode, sink=sink)
            if pieces:
                tables[i] = pa.concat_tables(pieces)

        async with anyio.create_task_group() as tg:
            for i, task in enumerate(tasks):
                tg.start_soon(one, i, task)
    table = pa.concat_tables(tables)
    if output == "polars":
        return pl.from_arrow(table)
    if output == "pandas":
        return table.to_pandas()
    return table


def _blocking(function: Any, *args: Any, **kwargs: Any) -> Any:
    with start_blocking_portal() as portal:
        return portal.call(lambda: function(*args, **kwargs))


def extract(datasets: str | Sequence[str], **options: Any) -> RunReport:
    """Blocking :func:`aextract` (works inside Jupyter's running event loop)."""
    result: RunReport = _blocking(aextract, datasets, **options)
    return result


def collect(dataset: str, **options: Any) -> Any:
    """Blocking :func:`acollect` (works inside Jupyter's running event loop)."""
    return _blocking(acollect, dataset, **options)


def scan(folder: str | Path, dataset: str) -> pl.LazyFrame:
    """A lazy Polars scan of one dataset's chunk files."""
    path = Path(folder) / dataset
    if not any(path.glob("*.parquet")):
        raise InputError(f"{path} holds no chunk files; extract {dataset!r} into {folder} first")
    return pl.scan_parquet(str(path / "*.parquet"))


def open_duckdb(folder: str | Path, connection: Any = None) -> Any:
    """A DuckDB connection with one view per dataset folder under ``folder`` and the ``hex0x`` macros."""
    import duckdb

    con = connection or duckdb.connect()
    register_duckdb(con)
    root = Path(folder)
    found = [p for p in sorted(root.iterdir()) if p.is_dir() and any(p.glob("*.parquet"))] if root.is_dir() else []
    if not found:
        raise InputError(f"{root} holds no dataset folders with chunk files")
    for path in found:
        glob = str(path / "*.parquet").replace("'", "''")
        con.execute(f"CREATE OR REPLACE VIEW \"{path.name}\" AS SELECT * FROM read_parquet('{glob}')")  # noqa: S608
    return con
