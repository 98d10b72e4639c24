"""The Python API: ``extract`` (files), ``follow`` (files kept up to date as the chain grows) and ``collect`` (in
memory) as thin layers over one engine; async variants; and opening an output folder in DuckDB (one view per series)
or Polars (lazy scan).

Everything the user gives is checked before any request: datasets, filters, the block range's syntax, the output
folder and the endpoint. The blocking functions run the async ones on a portal thread, so they work in Jupyter.
"""

from __future__ import annotations

import functools
import importlib.util
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

import anyio
import pyarrow as pa

from chainframe._errors import InputError
from chainframe._twins import carry_over
from chainframe.datasets import DATASETS, U256, BlockRange
from chainframe.engine._canonical import ChainUnstable, ChunkCheck, head_and_stale, on_one_fork
from chainframe.engine._client import RPC, endpoint_of, endpoints_of, make_client
from chainframe.engine._engine import (
    ATTEMPTS,
    DECODE_THREADS,
    RunCounters,
    TaskRunner,
    chain_for,
    fetch_and_decode,
    run_tasks,
)
from chainframe.engine._executor import checked_executor, runner_for
from chainframe.engine._exports import check_columns, check_export, export_series
from chainframe.engine._folder import check_out, prepare_out
from chainframe.engine._logs import SplitState
from chainframe.engine._options import check_chunk_size, chunk_size_of, dataset_inputs, whole
from chainframe.engine._plan import ChunkTask, slots
from chainframe.engine._portal import blocking, typed_errors
from chainframe.engine._probe import preflight
from chainframe.engine._ranges import (
    DEFAULT_CONFIRMATIONS,
    BlocksArg,
    BlockSpec,
    chain_state,
    parse_blocks,
    resolve_blocks,
)
from chainframe.engine._report import Progress, RunReport, now
from chainframe.engine._run import Wanted, asked_series, extract_round, plan_asked
from chainframe.engine._sink import InOrder
from chainframe.rpc import AsyncClient, Endpoint
from chainframe.store import (
    ExportFormat,
    Layout,
    Location,
    Publisher,
    choose_layout,
    folder_lock,
    load_series,
    location,
    series_folders,
    series_name,
    while_held,
)

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

Output = Literal["arrow", "polars", "pandas"]
Blocks = BlocksArg


@typed_errors
async def aextract(
    datasets: str | Sequence[str],
    *,
    blocks: Blocks,
    out: str | Location,
    rpc: RPC | None = None,
    network: str | None = None,
    key: str | None = None,
    chunk_size: int | None = None,
    overwrite: bool = False,
    align: bool = False,
    concurrency: int = 4,
    executor: Any = None,
    u256: U256 = "decimal",
    confirmations: int = DEFAULT_CONFIRMATIONS,
    progress: bool | None = None,
    report: str | Location | None = None,
    verify: bool = False,
    table: Layout | None = None,
    client_options: Mapping[str, Any] | None = None,
    format: ExportFormat = "parquet",
    hex: bool = False,
    columns: Sequence[str] | None = None,
    exclude_columns: Sequence[str] | None = None,
    include_columns: Sequence[str] | None = None,
    compression: str | None = None,
    **filters: Any,
) -> RunReport:
    """Extract datasets over a block range into the series folders under ``out``; return the run report.

    ``blocks``: ``"A:B"`` (B included), ``"A:+N"``, ``"-N:"``, ``"A:"``, tags, k/M suffixes (see
    :mod:`chainframe.engine._ranges`). Filters: logs ``address``, ``topics``, ``event``; proofs ``addresses``,
    ``storage_keys``; traces ``calls`` (and ``only_top_call``, ``diff_mode``). Stored slots are skipped and a tip
    file is extended; ``overwrite`` refetches every asked slot; ``align`` stores whole chunks only. Every series in
    ``out`` is checked against the chain first and repaired where a reorganization took stored blocks back.
    ``verify``: every piece's rows are proven against its blocks' headers (and receipts, for logs) before they are
    kept; the report counts the blocks and rows verified and names the checks that could not run.

    ``executor``: where the chunk tasks run: this process (None), ``"local:N"`` (N worker processes here), a Dask
    scheduler address or a ``distributed.Client`` (see :mod:`chainframe.engine._dask`); ``concurrency`` is then
    chunks at once per worker. ``rpc`` may list several endpoints (keys or providers).

    ``table``: ``"parquet"`` (a folder of slot files per series, the default on a local disk) or ``"delta"`` (a
    Delta Lake table per series: fenced commits, snapshot reads, time travel; the default for ``s3://``). A folder
    keeps the layout it was started with.

    Exports (cryo's ``--csv``, ``--json``, ``--hex``, ``--columns``): ``format="csv"`` or ``"json"`` (one object per
    line), ``hex=True`` (binary columns as ``0x`` text; always so in CSV and JSON) or ``columns=[...]`` also write
    the asked blocks of each series as one file ``OUT/<series>__<first>_to_<last>.<ext>``, with those columns in
    that order (or every one but ``exclude_columns``), compressed with ``compression`` (``"zstd:3"`` with a level;
    Parquet: zstd, lz4, snappy, gzip, brotli; text: gzip, zstd). ``include_columns``, cryo's "add to the defaults",
    only checks the columns exist: every column is in by default. The series itself stays whole and binary: it is
    what resumes, is repaired and verified. ``report.exports`` lists the files.
    """
    exporting = check_export(out, format, hex, [*(columns or ()), *(exclude_columns or ())], compression)
    executor = checked_executor(executor)
    run = _Run.make(datasets, blocks=blocks, out=out, chunk_size=chunk_size, u256=u256, filters=filters,
                    concurrency=concurrency, takes=aextract, verify=verify, table=table,
                    distributed=executor is not None)  # fmt: skip
    picked = check_columns(run.wanted, columns, exclude_columns, include_columns)
    first, *more = endpoints = endpoints_of(rpc, network, key)
    async with (
        make_client(first, client_options, rpc, more) as client,
        runner_for(executor, endpoints, client_options, rpc, concurrency) as runner,
    ):
        result = await run.once(
            client, endpoint=first, overwrite=overwrite, align=align, confirmations=confirmations,
            progress=progress, runner=runner,
        )  # fmt: skip
    if exporting:
        await anyio.to_thread.run_sync(
            functools.partial(export_series, run.folder, run.wanted, result, format=format, hex=hex, columns=picked,
                              compression=compression)
        )  # fmt: skip
    result.save(report if report is not None else result.default_path())
    return result


@typed_errors
async def afollow(
    datasets: str | Sequence[str],
    *,
    blocks: Blocks = ":",
    out: str | Location,
    rpc: RPC | None = None,
    network: str | None = None,
    key: str | None = None,
    poll: float = 12.0,
    rounds: int | None = None,
    on_round: Callable[[RunReport], None] | None = None,
    chunk_size: int | None = None,
    concurrency: int = 4,
    executor: Any = None,
    u256: U256 = "decimal",
    confirmations: int = DEFAULT_CONFIRMATIONS,
    verify: bool = False,
    table: Layout | None = None,
    client_options: Mapping[str, Any] | None = None,
    **filters: Any,
) -> RunReport | None:
    """Keep datasets in ``out`` up to date as the chain grows: a round like :func:`aextract` every ``poll`` seconds
    (each extends the series to the range's end, repairing reorganizations first), ``rounds`` times (None: until
    cancelled; Ctrl-C or SIGTERM in the CLI). The range's end is resolved again every round: the default (no end)
    follows the safe end (finalized, else latest minus ``confirmations``); ``"A:latest"`` follows the tip and
    relies on reorg repair. ``on_round(report)`` gets each round's report. Returns the last round's report.

    Cancelling between two rounds leaves every series as the last round left it; cancelling during a round leaves
    each slot's file as it was or as it became (never half-written), and the next round finishes the job."""
    executor = checked_executor(executor)
    run = _Run.make(datasets, blocks=blocks, out=out, chunk_size=chunk_size, u256=u256, filters=filters,
                    concurrency=concurrency, takes=afollow, verify=verify, table=table,
                    distributed=executor is not None)  # fmt: skip
    if not isinstance(poll, int | float) or isinstance(poll, bool) or poll <= 0:
        raise InputError(f"poll must be a positive number of seconds; got {poll!r}")
    if rounds is not None:
        whole("rounds", rounds)
    first, *more = endpoints = endpoints_of(rpc, network, key)
    last: RunReport | None = None
    rolling: Location | None = None  # one report per follow, rewritten every round (not one file per round)
    done = 0
    async with (
        make_client(first, client_options, rpc, more) as client,
        runner_for(executor, endpoints, client_options, rpc, concurrency) as runner,
    ):
        while rounds is None or done < rounds:
            if done:
                await anyio.sleep(poll)
            last = await run.once(
                client,
                endpoint=first,
                overwrite=False,
                align=False,
                confirmations=confirmations,
                progress=False,
                runner=runner,
            )
            rolling = rolling or last.follow_path()
            last.save(rolling)
            done += 1
            if on_round is not None:
                on_round(last)
    return last


@typed_errors
async def arepair(
    out: str | Location,
    *,
    rpc: str | Endpoint | None = None,
    network: str | None = None,
    key: str | None = None,
    concurrency: int = 4,
    client_options: Mapping[str, Any] | None = None,
) -> RunReport:
    """Check every series in ``out`` against the chain and rewrite what a reorganization took back (rows below each
    fork block are kept); nothing else is fetched. Every ``extract`` into ``out`` does the same first."""
    folder = location(out)
    if not series_folders(folder):
        raise InputError(f"{folder} holds no dataset folders with chunk files; nothing to repair")
    run = _Run([], parse_blocks(":"), folder, concurrency, layout=choose_layout(folder, None))
    endpoint = endpoint_of(rpc, network, key)
    async with make_client(endpoint, client_options, rpc) as client:
        result = await run.once(
            client, endpoint=endpoint, overwrite=False, align=False, confirmations=DEFAULT_CONFIRMATIONS,
            progress=False, repair_only=True,
        )  # fmt: skip
    result.save(result.default_path())
    return result


@typed_errors
async def aoff_chain(
    out: str | Location, *, rpc: str | Endpoint | None = None, network: str | None = None, key: str | None = None
) -> list[dict[str, Any]]:
    """The stored chunks under ``out`` that are no longer on the node's chain (nothing is written): series, file,
    fork block, and the stored blocks from there on that ``repair`` would rewrite."""
    folder = location(out)
    every = [load_series(p) for p in series_folders(folder)]
    async with AsyncClient(endpoint_of(rpc, network, key)) as client:
        _, stale = await head_and_stale(client, every)
    return [
        {"series": r.chunk.series, "file": r.chunk.path.name, "fork_block": r.fork_block,
         "blocks": [r.fork_block, r.chunk.meta.end]}
        for r in stale
    ]  # fmt: skip


@dataclass(frozen=True)
class SeriesPlan:
    """What a run would do to one series: its tasks (new, extend, overwrite), and how many asked slots it skips."""

    dataset: str
    series: str
    filters: Mapping[str, Any]
    tasks: list[ChunkTask]
    skipped: int


@dataclass(frozen=True)
class RunPlan:
    """What :func:`aextract` would do (:func:`aplan`): the blocks as it would resolve them, and each series' plan."""

    blocks: BlockRange | None
    """From the first block asked to the last; None: no whole chunk below the end (``align``)."""
    ranges: list[BlockRange]
    """The runs of blocks asked (one, unless several ranges or a step were)."""
    head: int
    chain_id: int
    out: Location
    series: list[SeriesPlan]


@typed_errors
async def aplan(
    datasets: str | Sequence[str],
    *,
    blocks: Blocks,
    out: str | Location,
    rpc: RPC | None = None,
    network: str | None = None,
    key: str | None = None,
    chunk_size: int | None = None,
    u256: U256 = "decimal",
    overwrite: bool = False,
    align: bool = False,
    confirmations: int = DEFAULT_CONFIRMATIONS,
    table: Layout | None = None,
    client_options: Mapping[str, Any] | None = None,
    **filters: Any,
) -> RunPlan:
    """The plan :func:`aextract` with the same arguments would start with, fetching and writing nothing: the range
    resolved as the run resolves it (one batch: chain id, head, safe and finalized blocks), the series folders read
    and planned by the run's own code. A run also checks the stored series against the chain first, and repairs
    what a reorganization took back: those tasks are not in the plan."""
    run = _Run.make(datasets, blocks=blocks, out=out, chunk_size=chunk_size, u256=u256, filters=filters,
                    concurrency=1, takes=aplan, table=table)  # fmt: skip
    first, *more = endpoints_of(rpc, network, key)
    async with make_client(first, client_options, rpc, more) as client:
        state = await chain_state(client, confirmations)
        resolved = await resolve_blocks(run.spec, client, confirmations=confirmations, head=state.head,
                                        safe=state.safe)  # fmt: skip
    run.check_step(resolved)
    planned = _aligned(resolved, run.wanted) if align else resolved
    every, asked, sizes = await asked_series(run.folder, run.wanted, state.chain_id)
    tasks, _ = plan_asked(every, asked, sizes, planned or None, chain_id=state.chain_id, overwrite=overwrite,
                               head=state.head, layout=run.publisher.layout)  # fmt: skip
    plans = []
    for name, want in asked.items():
        mine = [t for t in tasks if series_name(t.dataset, t.filters, t.u256) == name]
        size = sizes[name]
        slots_asked = {s.start // size for r in planned for s in slots(r, size)}
        skipped = len(slots_asked - {t.start // size for t in mine})
        plans.append(SeriesPlan(dataset=want.dataset, series=name, filters=want.filters, tasks=mine, skipped=skipped))
    hull = BlockRange(planned[0].start, planned[-1].end) if planned else None
    return RunPlan(blocks=hull, ranges=planned, head=state.head, chain_id=state.chain_id, out=run.folder, series=plans)


class _Run:
    """The checked inputs of an extraction, and one round of it over an output folder."""

    def __init__(
        self, wanted: list[Wanted], spec: BlockSpec, folder: Location, concurrency: int, verify: bool = False, *,
        layout: Layout,
    ) -> None:  # fmt: skip
        self.wanted, self.spec, self.folder, self.concurrency = wanted, spec, folder, concurrency
        self.verify = verify
        self.publisher = Publisher(folder, layout)
        """One for the whole run (every round of a follow): it holds the run's claim on each Delta table."""
        self.routes_picked = False
        """Each dataset's route was picked from the node's answers (:func:`~chainframe.engine._probe.preflight`):
        once a run, before its first round's work."""

    @classmethod
    def make(
        cls, datasets: str | Sequence[str], *, blocks: Blocks, out: str | Location, chunk_size: int | None, u256: U256,
        filters: Mapping[str, Any], concurrency: int, takes: Callable[..., Any], verify: bool = False,
        table: Layout | None = None, distributed: bool = False,
    ) -> _Run:  # fmt: skip
        per_dataset = dataset_inputs(datasets, filters, takes)
        size = check_chunk_size(chunk_size)
        spec = parse_blocks(blocks)
        folder = location(out)
        check_out(folder)
        if u256 not in ("decimal", "binary"):
            raise InputError(f"u256 must be 'decimal' or 'binary'; got {u256!r}")
        whole("concurrency", concurrency)
        wanted = [Wanted(dataset=n, filters=f, u256=u256, chunk_size=size) for n, f in per_dataset.items()]
        if not isinstance(verify, bool):
            raise InputError(f"verify must be True or False; got {verify!r}")
        layout = choose_layout(folder, table, distributed=distributed)
        return cls(wanted, spec, folder, concurrency, verify, layout=layout)

    async def once(
        self, client: Any, *, endpoint: Endpoint, overwrite: bool, align: bool, confirmations: int,
        progress: bool | None, repair_only: bool = False, runner: TaskRunner = run_tasks,
    ) -> RunReport:  # fmt: skip
        started, clock = now(), time.monotonic()
        state = await chain_state(client, confirmations)
        chain_id, head, finalized, why = state.chain_id, state.head, state.safe, state.why
        if not self.routes_picked:
            await preflight(client, [DATASETS[w.dataset] for w in self.wanted], head)
            self.routes_picked = True
        resolved: list[BlockRange] | None = None
        if not repair_only:
            resolved = await resolve_blocks(self.spec, client, confirmations=confirmations, head=head, safe=finalized)
            self.check_step(resolved)
        if align and resolved is not None:
            resolved = _aligned(resolved, self.wanted)
        counters = RunCounters()
        bar = Progress(0, enabled=progress, client=client, counters=counters)
        try:
            with folder_lock(self.folder) as lock:
                await anyio.to_thread.run_sync(prepare_out, self.folder)
                result = await while_held(lock, lambda: extract_round(
                    client, folder=self.folder, wanted=self.wanted, blocks=resolved or None, head=head,
                    finalized=finalized,
                    chain_id=chain_id, endpoint=endpoint.display,
                    overwrite=overwrite, concurrency=self.concurrency, counters=counters,
                    on_tasks=bar.add_tasks, on_chunk=bar.chunk, verify=self.verify, runner=runner,
                    publisher=self.publisher,
                ))  # fmt: skip
        finally:
            bar.close()
        for dataset, skipped in result.skipped.items():
            counters.dataset(dataset).skipped += skipped
        if repair_only:
            stop = f"checked against the chain at head {head}"
        elif not resolved:
            stop = "nothing to store: no whole chunk below the end (--align)"
        elif self.spec.open_end:
            safe = (
                f"finalized {finalized}" if why == "finalized" else f"head {head} minus {confirmations} confirmations"
            )
            stop = f"stopped at {safe}" + (f" (head {head})" if why == "finalized" else f" = {finalized}")
            # cryo's 'A:' means latest; ours the safe end: say how to reach the tip where the reader will look.
            stop += f"; write {_to_latest(self.spec)} for the tip" if head > finalized else ""
        else:
            stop = f"stopped at {resolved[-1].end} as asked (head {head}, {state.safe_text})"
        for dataset, gaps in result.between.items():
            shown = ", ".join(f"{a}..{b}" for a, b in gaps[:3]) + (" ..." if len(gaps) > 3 else "")
            stop += f"; {dataset}: blocks {shown} fetched too (a chunk file holds one run of blocks; see --chunk-size)"
        runs = [(r.start, r.end) for r in resolved or ()]
        return RunReport.make(
            started=started, seconds=time.monotonic() - clock, endpoint=endpoint.display, chain_id=chain_id,
            blocks=(runs[0][0], runs[-1][1]) if runs else None, text=self.spec.text, out=self.folder,
            counters=counters, client=client, head=head, finalized=finalized, stop=stop,
            reorgs=[r.to_json() for r in result.reorgs], ranges=runs if len(runs) > 1 else None,
        )  # fmt: skip

    def check_step(self, resolved: list[BlockRange]) -> None:
        """A step asks for its blocks only; a chunk file holds one run of blocks, so two asked blocks in one chunk
        would have the blocks between them fetched too: refused, saying what to change."""
        if not self.spec.sampled:
            return
        for want in self.wanted:
            size = want.chunk_size or DATASETS[want.dataset].chunk_size
            slots_hit = [r.start // size for r in resolved]
            if len(set(slots_hit)) < len(slots_hit):
                raise InputError(
                    f"blocks {self.spec.text!r}: the step puts several blocks in one chunk of {size:,} "
                    f"({want.dataset}); a chunk file holds one run of blocks, so the blocks between would be fetched "
                    f"too: give a step of "
                    f"at least {size:,}, or --chunk-size at most the step"
                )


def _to_latest(spec: BlockSpec) -> str:
    """The same ranges, ending at the tip: what to write instead of an open end."""
    return " ".join(p.text + "latest" if p.open_end and p.text.endswith(":") else p.text for p in spec.parts)


def _aligned(blocks: list[BlockRange], wanted: list[Wanted]) -> list[BlockRange]:
    """``blocks`` cut back to whole chunks (the smallest chunk size asked; series keep their own sizes): the last
    run ends where the last whole chunk does."""
    size = min(w.chunk_size or DATASETS[w.dataset].chunk_size for w in wanted)
    end = (blocks[-1].end + 1) // size * size - 1
    return [BlockRange(r.start, min(r.end, end)) for r in blocks if r.start <= end]


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
        tables: list[pa.Table] = [task.schema().empty_table() for task in tasks]
        state, decode, chunks = SplitState(), anyio.CapacityLimiter(DECODE_THREADS), anyio.CapacityLimiter(4)

        bar = Progress(0, enabled=progress, client=client, counters=RunCounters(), desc="collect")
        bar.add_tasks(tasks)

        async def one(i: int, task: ChunkTask) -> None:
            async with chunks:
                tables[i] = await _collect_chunk(task, client, chain_id, finalized, state, decode)
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


async def _collect_chunk(
    task: ChunkTask, client: Any, chain_id: int, finalized: int, state: SplitState, decode: Any
) -> pa.Table:
    """One chunk's rows in memory, checked against the chain like a file's (fetched again if they mix forks)."""
    for _ in range(ATTEMPTS):
        pieces: list[pa.Table] = []

        async def keep(table: pa.Table, pieces: list[pa.Table] = pieces) -> None:
            pieces.append(table)

        async def read(keep: Any = keep) -> None:
            check = ChunkCheck(task.dataset, finalized)
            await fetch_and_decode(
                task, client, chain_id=chain_id, state=state, decode=decode, sink=InOrder(task.start, keep), check=check
            )
            check.confirm(await chain_for(client, task, finalized), blocks=f"{task.start}..{task.end}")

        done, _ = await on_one_fork(read)
        if done:
            return pa.concat_tables(pieces) if pieces else task.schema().empty_table()
    raise ChainUnstable(f"{task.dataset} blocks {task.start}..{task.end}: the chain kept reorganizing under it")


def extract(datasets: str | Sequence[str], **options: Any) -> RunReport:
    """Blocking :func:`aextract` (works inside Jupyter's running event loop)."""
    result: RunReport = blocking(aextract, datasets, **options)
    return result


def plan(datasets: str | Sequence[str], **options: Any) -> RunPlan:
    """Blocking :func:`aplan` (works inside Jupyter's running event loop)."""
    result: RunPlan = blocking(aplan, datasets, **options)
    return result


@overload
def collect(dataset: str, *, output: Literal["arrow"] = "arrow", **options: Any) -> pa.Table: ...
@overload
def collect(dataset: str, *, output: Literal["polars"], **options: Any) -> pl.DataFrame: ...
@overload
def collect(dataset: str, *, output: Literal["pandas"], **options: Any) -> Any: ...  # pandas ships no types
def collect(dataset: str, **options: Any) -> Any:
    """Blocking :func:`acollect` (works inside Jupyter's running event loop)."""
    return blocking(acollect, dataset, **options)


def off_chain(out: str | Location, **options: Any) -> list[dict[str, Any]]:
    """Blocking :func:`aoff_chain`."""
    result: list[dict[str, Any]] = blocking(aoff_chain, out, **options)
    return result


def repair(out: str | Location, **options: Any) -> RunReport:
    """Blocking :func:`arepair`."""
    result: RunReport = blocking(arepair, out, **options)
    return result


def follow(datasets: str | Sequence[str], **options: Any) -> RunReport | None:
    """Blocking :func:`afollow` (works inside Jupyter's running event loop; interrupt the kernel to stop)."""
    result: RunReport | None = blocking(afollow, datasets, **options)
    return result


@typed_errors
async def averify_stored(
    out: str | Location,
    *,
    rpc: str | Endpoint | None = None,
    network: str | None = None,
    key: str | None = None,
    client_options: Mapping[str, Any] | None = None,
) -> Any:
    """Prove every series stored under ``out`` against the node's headers (and receipts, for logs): a
    :class:`chainframe.verify.Report` (nothing is written)."""
    from chainframe.engine._stored import averify_stored as prove_folder

    folder = location(out)
    if not series_folders(folder):
        raise InputError(f"{folder} holds no dataset folders with chunk files; nothing to verify")
    async with make_client(endpoint_of(rpc, network, key), client_options, rpc) as client:
        return await prove_folder(folder, client)


def verify_stored(out: str | Location, **options: Any) -> Any:
    return blocking(averify_stored, out, **options)


# help(), IPython's ``?`` and editors inspecting live objects show the options and the whole docstring.
for _twin, _coroutine in ((extract, aextract), (collect, acollect), (follow, afollow), (repair, arepair),
                                   (off_chain, aoff_chain), (verify_stored, averify_stored),
                                   (plan, aplan)):  # fmt: skip
    carry_over(_twin, _coroutine)
