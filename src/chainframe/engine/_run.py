"""One extraction round over an output folder: find what the chain took back, plan, fetch, write, check again.

A round (what ``extract`` runs once and ``follow`` runs every poll):

1. reads the node's head and finalized block, and every series folder's footers;
2. finds stored chunks that are no longer on the chain, in *every* series of the folder (not only the ones asked
   for): one header per linked segment when nothing moved (:func:`chainframe.engine._canonical.find_stale`);
3. plans the asked slots and the repairs together (:func:`chainframe.engine._plan.plan`): stored slots are skipped, a
   tip is extended, a repaired slot keeps its rows below the fork block;
4. runs the tasks; each file replaces its slot's file atomically once its rows are checked against the headers;
5. checks again (the head read in the batch of the segments' top headers:
   :func:`chainframe.engine._canonical.head_and_stale`), and repairs what moved during the round, so a completed round
   leaves every series on the chain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from itertools import chain, pairwise
from typing import Any, NamedTuple

import anyio

from chainframe._errors import InputError
from chainframe.datasets import DATASETS, BlockRange
from chainframe.engine._canonical import ChainUnstable, Repair, find_stale, head_and_stale
from chainframe.engine._context import ChunkContext
from chainframe.engine._engine import DECODE_THREADS
from chainframe.engine._plan import ChunkTask, Wanted, plan
from chainframe.engine._runcontext import RunContext
from chainframe.engine._state_window import check_state_served
from chainframe.store import (
    Layout,
    Location,
    Planned,
    Series,
    load_series,
    location,
    series_name,
    series_of_file,
    stored_series,
)

CHECK_ROUNDS = 3
"""Times a round re-checks and repairs what moved while it ran, before it gives up as :class:`ChainUnstable`."""


class Asked(NamedTuple):
    """A folder's series and those a round is asked to cover, as :func:`asked_series` reads them."""

    every: Mapping[str, Series]
    """Every series in the folder, by name."""
    asked: Mapping[str, Wanted]
    """The asked ones, by series name."""
    sizes: Mapping[str, int]
    """Their chunk sizes (the series' own; a new series' asked or its dataset's)."""


@dataclass
class Reorg:
    """A reorganization a round found and repaired in one series."""

    series: str
    """Its folder's name (an older chainframe's name for a folder it made: :func:`chainframe.store.legacy_name`)."""
    fork_block: int
    """The first stored block that was no longer the node's."""
    depth: int
    """Stored blocks replaced: from the fork block to the series' tip before the repair."""
    chunks_rewritten: int

    def to_json(self) -> dict[str, Any]:
        return {"series": self.series, "fork_block": self.fork_block, "depth": self.depth,
                "chunks_rewritten": self.chunks_rewritten}  # fmt: skip


@dataclass
class RoundResult:
    head: int
    finalized: int
    blocks: list[BlockRange] | None
    reorgs: list[Reorg] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    between: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """Per dataset, blocks not asked for but fetched because two asked runs share a chunk (a file holds one run)."""


def check_series(folder: Location, series: Series, chain_id: int) -> None:
    """Refuse to write into a folder that is not one table: foreign files, mixed chunks, another chain."""
    if series.mixed:
        raise InputError(f"{series.folder} is not one table ({'; '.join(series.mixed)}); extract into another --out")
    if series.foreign:
        path, why = series.foreign[0]
        raise InputError(
            f"{path} is in the series folder {series.folder} but is not one of its chunks ({why}); a glob over the "
            f"folder would read it: move it away, or extract into another --out"
        )
    meta = series.meta
    if meta is not None and meta.chain_id != chain_id:
        raise InputError(
            f"{folder} holds chain {meta.chain_id} ({series.folder.name}) but the endpoint serves chain {chain_id}; "
            "an output folder holds one chain: extract into another --out"
        )


async def extract_round(
    run: RunContext,
    *,
    wanted: list[Wanted],
    blocks: list[BlockRange] | None,
    head: int,
    finalized: int,
    overwrite: bool,
) -> RoundResult:
    """Bring ``wanted`` series over ``blocks`` up to date in ``run.folder`` and repair every series there.
    ``run.runner`` runs the chunk tasks (here, or on a Dask cluster); everything else stays in this process."""
    client, folder, chain_id, publisher = run.client, run.folder, run.chain_id, run.publisher
    result = RoundResult(head=head, finalized=finalized, blocks=blocks)
    found = await asked_series(folder, wanted, chain_id)
    every = found.every
    repairs = await find_stale(client, list(every.values()), head)
    tasks = _plan_round(found, repairs, blocks, result, chain_id=chain_id, overwrite=overwrite, head=head,
                        layout=publisher.layout, delete=publisher.delete)  # fmt: skip
    await check_state_served(client, tasks, head)  # state older than the node keeps: refused before any work
    # Take over every table this round may write before any work: an older run's commit there is refused from now.
    schemas = {_series_of(t).name: t.schema() for t in tasks}
    await anyio.to_thread.run_sync(
        publisher.claim, [s.folder for s in every.values() if s.layout == "delta" or s.name in schemas], schemas
    )
    for rounds in range(CHECK_ROUNDS + 1):
        if run.verify:
            family = run.family.name if run.family is not None else None
            tasks = [replace(task, verify=True, family=family) for task in tasks]
        if run.on_tasks is not None:
            run.on_tasks(tasks)
        publisher.expect([Planned(series=str(_series_of(t)), slot=t.start - t.start % t.chunk_size,
                                  repair=t.reason == "repair") for t in tasks])  # fmt: skip
        try:
            shared = ChunkContext(client, chain_id, run.endpoint, finalized, run.counters.split,
                                  anyio.CapacityLimiter(DECODE_THREADS))  # fmt: skip
            await run.runner(iter(tasks), shared, concurrency=run.concurrency, counters=run.counters,
                             publish=publisher.publish, on_chunk=run.on_chunk)  # fmt: skip
            await anyio.to_thread.run_sync(publisher.flush)  # every file of the round committed, or its error
        except BaseException:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(publisher.abandon)
            raise
        if not tasks:  # nothing written since the check above: a second check would only repeat it
            return result
        every = await _every_series(folder)
        # A reorganization during the round may have moved the head either way: read with the tops' headers.
        head, repairs = await head_and_stale(client, list(every.values()))
        if not repairs:
            return result
        if rounds == CHECK_ROUNDS:
            break
        tasks = _plan_round(Asked(every, {}, {}), repairs, None, result, chain_id=chain_id, overwrite=False, head=head,
                            layout=publisher.layout, delete=publisher.delete)  # fmt: skip
    raise ChainUnstable(
        f"the chain kept reorganizing while {folder} was brought up to date ({CHECK_ROUNDS} repairs); "
        "try again later, or stop further from the head (--confirmations)"
    )


async def asked_series(folder: Location, wanted: list[Wanted], chain_id: int) -> Asked:
    """Every series in ``folder`` (checked to be one table of ``chain_id``), the asked ones by series name, and
    their chunk sizes (the series' own; a size asked that differs is refused)."""
    asked: dict[str, Wanted] = {}
    for want in wanted:
        asked[series_name(want.dataset, want.filters, want.u256)] = want
    every = await _every_series(folder, list(asked))
    for series in every.values():
        await anyio.to_thread.run_sync(check_series, folder, series, chain_id)
    sizes: dict[str, int] = {}
    for name, want in asked.items():
        meta = every[name].meta
        size = want.chunk_size or (meta.chunk_size if meta else DATASETS[want.dataset].chunk_size_for(want.filters))
        if meta is not None and size != meta.chunk_size:
            raise InputError(
                f"{every[name].folder} is in chunks of {meta.chunk_size:,} blocks, not {size:,}: drop --chunk-size "
                "(or give it that value), or extract into another --out"
            )
        sizes[name] = size
    return Asked(every, asked, sizes)


def plan_asked(
    found: Asked, blocks: list[BlockRange] | None, *, chain_id: int, overwrite: bool, head: int, layout: Layout
) -> tuple[list[ChunkTask], RoundResult]:
    """The tasks a round would start with before checking the chain (what ``--dry`` shows), and the slots skipped:
    the same planning as :func:`extract_round`'s, writing nothing."""
    result = RoundResult(head=head, finalized=head, blocks=blocks)
    tasks = _plan_round(found, [], blocks, result, chain_id=chain_id, overwrite=overwrite, head=head, layout=layout,
                        delete=lambda _: None)  # fmt: skip
    return tasks, result


async def _every_series(folder: Location, asked: list[str] | None = None) -> dict[str, Series]:
    """Every series in ``folder`` (and the asked ones, which may not exist yet), from their footers. Read in a worker
    thread (in a bucket it is a listing and a GET per file), abandoned at once if the run is cancelled: reading
    changes nothing, so Ctrl-C need not wait for it."""

    def read() -> dict[str, Series]:
        every = stored_series(folder)  # by series name: a folder an older chainframe named is found under it
        for name in asked or ():
            if name not in every:  # not found there yet: loaded as empty (setdefault would load every one again)
                every[name] = load_series(folder / name)
        return every

    return await anyio.to_thread.run_sync(read, abandon_on_cancel=True)


def _plan_round(
    found: Asked,
    repairs: list[Repair],
    blocks: list[BlockRange] | None,
    result: RoundResult,
    *,
    chain_id: int,
    overwrite: bool,
    head: int,
    layout: Layout,
    delete: Callable[[list[str]], None],
) -> list[ChunkTask]:
    every, asked, sizes = found.every, found.asked, found.sizes
    by_series: dict[str, dict[int, int | None]] = {}
    for repair in repairs:
        name = repair.chunk.series
        by_series.setdefault(name, {})[repair.chunk.meta.slot[0]] = repair.keep_through
    for name, slots in by_series.items():
        series = every[name]
        fork = min(r.fork_block for r in repairs if r.chunk.series == name)
        tip = series.chunks[-1].meta.end
        result.reorgs.append(
            Reorg(series=series.folder.name, fork_block=fork, depth=tip - fork + 1, chunks_rewritten=len(slots))
        )
    tasks: list[list[ChunkTask]] = []
    for name in sorted(set(asked) | set(by_series)):
        series = every[name]
        want = asked.get(name)
        meta = series.meta
        if want is not None:
            dataset, size = want.dataset, sizes[name]
            of = want._replace(chunk_size=size)
        else:
            assert meta is not None
            dataset, size = meta.dataset, meta.chunk_size
            of = Wanted(dataset=dataset, filters=meta.filters, u256=meta.u256, chunk_size=size,
                        decoded_with=meta.decoded_with)  # fmt: skip
        planned, deletions = plan(
            of, blocks if want is not None else None, series=series, chain_id=chain_id, overwrite=overwrite,
            repairs=by_series.get(name), head=head, layout=layout,
        )  # fmt: skip
        delete(deletions)  # slots wholly above a head that moved back: their blocks are gone
        if want is not None and blocks is not None:
            asked_slots = {s for r in blocks for s in range(r.start // size, r.end // size + 1)}
            untouched = asked_slots - {t.start // size for t in planned}
            gaps = [(a.end + 1, b.start - 1) for a, b in pairwise(blocks)
                    if a.end // size == b.start // size]  # fmt: skip
            if gaps:
                result.between[dataset] = gaps
            result.skipped[dataset] = result.skipped.get(dataset, 0) + len(untouched)
        tasks.append(planned)
    # Slot by slot across the series: the datasets of a run read the same blocks at about the same time, so what one
    # reads is still kept when another proves its rows with it (engine._shared), and a run stopped early has every
    # series through about the same block.
    return sorted(chain.from_iterable(tasks), key=lambda t: t.start)


def _series_of(task: ChunkTask) -> Location:
    """The series folder a task writes into (a Delta table's files are in its ``data/``)."""
    return series_of_file(location(task.path), task.layout)
