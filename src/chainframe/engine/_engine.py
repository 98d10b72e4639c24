"""Running chunk tasks: handed out in order as places free (at most ``concurrency`` fetching, twice that begun), so
memory is bounded by chunk size times concurrency, never by the length of the range.

Each task: copy the rows it keeps from the slot's file, fetch the answers for the rest, decode them in a worker thread
(so decoding overlaps with other chunks' fetching), and stream the sorted rows into a temporary; check them against
the chain's headers (:mod:`chainframe.engine._canonical`), then put the file in place over the slot's name, atomically,
with its metadata. A chunk that turns out to mix forks is fetched again. Counters feed the progress bar and the report.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import anyio
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._kernels import constant
from chainframe._version import __version__
from chainframe.datasets import DATASETS, BlockRange, Fetch
from chainframe.engine._answers import check_bodies, check_rows, checked
from chainframe.engine._canonical import (
    ChainUnstable,
    ChunkCheck,
    Header,
    StaleChunk,
    block_hash,
    check_links,
    headers,
    on_one_fork,
)
from chainframe.engine._context import ChunkContext
from chainframe.engine._joint import Group, Joint, Unproven
from chainframe.engine._logs import Answers, SplitState, fetch_logs, logs_table, plan_pieces, sort_table
from chainframe.engine._pieces import PieceTables, asker
from chainframe.engine._plan import ChunkTask
from chainframe.engine._shared import Received, SharedAnswers, asking, reads, receiving, witnessing
from chainframe.engine._sink import InOrder
from chainframe.engine._verified import Material, Proven, material, verify_piece, verify_reads
from chainframe.store import ChunkMeta, ChunkWriter, Written, read_batches, read_meta

DECODE_THREADS = 2  # this machine's cores; decoding releases the GIL in Polars and Arrow


ATTEMPTS = 4
"""Times a chunk is fetched before a chain that keeps reorganizing under it becomes :class:`ChainUnstable`."""


@dataclass
class DatasetReport:
    chunks: int = 0
    """Chunks this run had to write (new, extended, repaired); stored ones are ``skipped``."""
    written: int = 0
    skipped: int = 0
    rows: int = 0
    """Rows written by this run (kept rows of extended files not counted)."""
    blocks: int = 0
    """Blocks fetched (kept rows of extended files not counted)."""
    refetched: int = 0
    """Chunks fetched again because the chain moved under them."""
    verified_blocks: int = 0
    """With ``verify``: blocks whose rows were proven against their headers (kept rows of extended files not
    counted)."""
    verified_rows: int = 0
    decode_errors: int = 0
    """Rows written with a ``decode_error`` (calls kept whose arguments do not decode with their function)."""
    unverified: dict[str, str] = field(default_factory=dict)
    """With ``verify``: the checks that could not run, and why (never counted as passed)."""
    series: int = 1
    """The dataset's series the run wrote (a function's calls each its own): the counts above are their sum, a block
    verified for each."""


@dataclass
class RunCounters:
    datasets: dict[str, DatasetReport] = field(default_factory=dict)
    split: SplitState = field(default_factory=SplitState)
    lost_workers: set[str] = field(default_factory=set)
    """Dask workers that left the cluster while they held chunks of the run."""
    reassigned: list[str] = field(default_factory=list)
    """Chunks (``logs blocks 0..999``) that Dask ran again on another worker after losing the first."""

    def dataset(self, name: str) -> DatasetReport:
        return self.datasets.setdefault(name, DatasetReport())


class Place:
    """A task's place among the round's fetching tasks (at most its concurrency): taken to fetch, given back while the
    task waits for its group's proof (:mod:`chainframe.engine._joint`) so that another task fetches meanwhile."""

    def __init__(self, places: anyio.Semaphore) -> None:
        self._places = places
        self._held = False

    async def take(self) -> None:
        if not self._held:
            await self._places.acquire()
            self._held = True

    def give_back(self) -> None:
        if self._held:
            self._held = False
            self._places.release()


async def fetch_and_decode(
    task: ChunkTask,
    run: ChunkContext,
    *,
    sink: InOrder,
    check: ChunkCheck | None = None,
    proven: Proven | None = None,
    group: Group | None = None,
) -> None:
    """Fetch the chunk's answers, decode them in a worker thread and hand the rows, sorted, to ``sink``.

    Pieces (sized so an answer holds about ``state.target_bytes``) are fetched concurrently, at most
    ``state.in_flight`` at once across chunks, and each is decoded and handed on as it arrives: memory is bounded by
    the pieces in flight, not by the chunk. With ``check``, pieces reaching above its finalized block carry
    witnesses and their rows' hashes are kept, for :meth:`ChunkCheck.confirm` at commit. With ``proven`` (the task
    asks ``verify``), each piece's rows are proven against its blocks' headers first and counted there; with
    ``group`` instead, they are given to the group the task is proven in (:mod:`chainframe.engine._joint`)."""
    client, chain_id, state, decode = run.client, run.chain_id, run.state, run.decode
    dataset = DATASETS[task.dataset]
    blocks = BlockRange(task.fetch_start, task.end)

    async def put(part: BlockRange, table: pa.Table, extra: dict[str, pa.Table] | None = None) -> None:
        if "removed" in table.column_names and pc.any(table["removed"]).as_py():
            raise StaleChunk(f"{task.dataset} {part.start}..{part.end}: the node flagged logs as removed (a reorg)")
        if check is not None and check.watches(part.end):
            check.see_rows(table)
        await sink.put(part, table)
        if group is not None:
            group.give(dataset.name, part, {dataset.name: table, **(extra or {})})

    def witnessed(run: Any) -> Any:
        async def piece(part: BlockRange) -> None:
            if check is None or not check.watches(part.end):
                await run(part)
                return
            before = await block_hash(client, part.end)
            await run(part)
            check.witnesses.append((part.end, before, await block_hash(client, part.end)))

        return piece

    if dataset.fetched is Fetch.LOGS:
        # Logs, and datasets made of logs (token transfers: logs of one event): fetched, split and checked as logs,
        # then made into the dataset's rows.
        log_filters = dataset.log_filter(task.filters)

        def answered(asked: BlockRange, logs: list[bytes], receipts: list[bytes]) -> pa.Table:
            """The rows of answers for ``asked``, checked against it."""
            check_bodies(logs)
            check_bodies(receipts)
            table = logs_table(logs, receipts, log_filters, chain_id=chain_id, u256=task.u256)
            check_rows(dataset.row_checks, table, asked, log_filters)
            return table

        def decode_logs(
            part: BlockRange, logs: Answers, receipts: list[bytes], proof: Material | None, received: Received
        ) -> pa.Table:
            # Each eth_getLogs answer is checked against the blocks its own call asked for (a piece may take several).
            tables = [answered(asked, [body], []) for asked, body in logs]
            if receipts:
                tables.append(answered(part, [], receipts))
            table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
            if table.num_rows and pc.any(table["removed"]).as_py():
                raise StaleChunk(f"{task.dataset} {part.start}..{part.end}: the node flagged logs as removed (a reorg)")
            if proven is not None:
                proven.add(verify_piece(dataset, table, part, proof, chain_id=chain_id, filters=log_filters,
                                        received=received, family=task.chain_family))  # fmt: skip
            return sort_table(dataset.from_logs(table, task.filters, u256=task.u256), dataset.sort)

        async def decode_piece(part: BlockRange, logs: Answers, receipts: list[bytes]) -> pa.Table:
            with receiving() as received:
                proof = await material(client, dataset, part) if proven is not None else None
            return await anyio.to_thread.run_sync(decode_logs, part, logs, receipts, proof, received, limiter=decode)

        await fetch_logs(client, blocks, log_filters, state, decode_piece, put, wrap=witnessed)
    else:
        kin = run.pieces.kin(task) if run.pieces is not None and group is None else None
        member = run.pieces.member(task) if kin is not None else 0
        read: dict[BlockRange, tuple[pa.Table, list[pa.Table], Proven | None]] = {}

        def work(
            bodies: list[bytes], part: BlockRange, proof: Material | None, received: Received, each: bool = False
        ) -> tuple[pa.Table, dict[str, pa.Table]]:
            if dataset.null_checked:
                check_bodies(bodies)
            table = dataset.transform(bodies, chain_id=chain_id, u256=task.u256)
            check_rows(dataset.row_checks, table, part)
            piece_proven = None
            if proven is not None:
                piece_proven = verify_piece(dataset, table, part, proof, chain_id=chain_id, filters=task.filters,
                                            bodies=bodies, received=received, family=task.chain_family)  # fmt: skip
                if not each:  # a kin's first read counts it once its rows are handed on (first_read)
                    proven.add(piece_proven)
            table = sort_table(table, dataset.sort)
            if each:  # the kin's first read: every kin task's rows in one pass (engine._pieces)
                read[part] = (table, dataset.kept_rows_each(table, run.pieces.members(kin), u256=task.u256),
                              piece_proven)  # fmt: skip
                kept = read[part][1][member]
            else:
                kept = dataset.kept_rows(table, task.filters, u256=task.u256)  # function=: the calls, decoded
            if group is None:
                return kept, {}
            return kept, {**group.beside(dataset.name, bodies), **({} if kept is table else {dataset.name: table})}

        async def piece(part: BlockRange) -> None:
            try:
                if kin is None:
                    await own(part)
                    return
                given, first = await run.pieces.take(kin, part)  # read once for the kin (engine._pieces)
                if given is not None:
                    table, each, witnesses, piece_proven, received = given
                    if check is not None:
                        check.read(received)
                        if check.watches(part.end):  # what its reader saw, checked at commit
                            check.witnesses.extend(witnesses)
                            check.see_rows(table)
                    if proven is not None:  # the raw rows its rows are kept from, proven by the reader
                        assert piece_proven is not None  # verifying tasks are kin only of each other
                        proven.add(piece_proven)
                    await put(part, each[member])
                    return
                try:
                    await (first_read(part) if first else witnessed(own)(part))
                finally:
                    if first:  # failed before it gave its rows: the others read the piece alone
                        read.pop(part, None)
                        run.pieces.give(kin, part, None)
            finally:
                state.in_flight.release()

        async def first_read(part: BlockRange) -> None:
            """The kin's first read of ``part``: its rows handed on with the witnesses of the chain it read."""
            seen: list[tuple[int, bytes | None, bytes | None]] = []
            watched = check is not None and check.watches(part.end)
            before = await block_hash(client, part.end) if watched else None
            with witnessing(seen):  # the block hashes of answers other series read, this piece's own
                result = await checked(answer_of(part, each=True), method=dataset.method, blocks=part, client=client)
            received = time.monotonic()
            if check is not None:
                check.read(received)
            if watched:
                assert check is not None
                seen.append((part.end, before, await block_hash(client, part.end)))
                check.witnesses.extend(seen)
            table, each, piece_proven = read.pop(part)
            if proven is not None:
                assert piece_proven is not None
                proven.add(piece_proven)
            run.pieces.give(kin, part, (table, each, seen, piece_proven, received))
            await put(part, *result)

        async def own(part: BlockRange) -> None:
            result = await checked(answer_of(part), method=dataset.method, blocks=part, client=client)
            if check is not None:
                check.read(time.monotonic())
            await put(part, *result)

        def answer_of(
            part: BlockRange, each: bool = False
        ) -> Callable[[], Awaitable[tuple[pa.Table, dict[str, pa.Table]]]]:
            async def answer() -> tuple[pa.Table, dict[str, pa.Table]]:
                with receiving() as received:  # the shared answers among them, for what was proven of them
                    bodies = await dataset.fetch(client, part, **task.filters)
                    state.observe_pieces(task.dataset, len(part), sum(map(len, bodies)))
                    proof = (
                        None
                        if proven is None
                        else await material(client, dataset, part, filters=task.filters, answers=bodies)
                    )
                return await anyio.to_thread.run_sync(work, bodies, part, proof, received, each, limiter=decode)

            return answer

        # In pieces sized by the answers, like logs: a chunk's answers are never held whole (receipts of 1,000 blocks
        # peaked at 495 MB). A kin's series plan the pieces the first of them planned (engine._pieces).
        def span(start: int) -> int:
            size = state.piece_span(task.dataset)
            return size if kin is None else run.pieces.span(kin, start, size)

        await plan_pieces(blocks, state, span, piece if kin is not None else witnessed(piece))
    if sink.done_through != task.end:
        raise AssertionError(f"chunk {task.start}..{task.end}: rows handed on only through {sink.done_through}")


async def chain_for(client: Any, task: ChunkTask, finalized: int) -> dict[int, Header | None]:
    """The headers a chunk's commit needs: its first fetched block (and the chunk's first, for its parent hash), its
    last, and every block above ``finalized``, read in one batch and checked to link."""
    recent = list(range(max(task.fetch_start, finalized + 1), task.end + 1))
    chain = await headers(client, {task.start, task.fetch_start, task.end, *recent})
    check_links(chain, sorted({task.fetch_start, *recent}), blocks=f"{task.start}..{task.end}")
    for number, header in chain.items():
        if header is None:
            raise StaleChunk(f"{task.dataset} {task.start}..{task.end}: the node no longer has block {number}")
    return chain


def kept_meta(task: ChunkTask) -> ChunkMeta | None:
    """The metadata of the file whose rows ``task`` keeps, if it still holds them."""
    if task.keep_through is None:
        return None
    meta = read_meta(task.kept_from)
    if meta is None or meta.start != task.start or meta.end < task.keep_through:
        return None
    return meta


def copy_kept(task: ChunkTask, writer: ChunkWriter) -> int:
    """Stream the rows of blocks ``start..keep_through`` from the slot's file into ``writer``; return how many."""
    assert task.keep_through is not None
    rows = 0
    try:
        for batch in read_batches(task.kept_from, batch_size=100_000):
            table = pc.cast_table(pa.Table.from_batches([batch]), writer.schema)
            numbers = table["block_number"].combine_chunks()
            table = pc.filter(table, pc.less_equal(numbers, constant(task.keep_through, len(numbers), numbers.type)))
            rows += table.num_rows
            writer.write(table)
    except (OSError, pa.ArrowException) as exc:  # a page that fails its checksum, or does not decode
        raise StaleChunk(f"{Path(task.kept_from).name} is damaged ({exc}): its slot is fetched again whole") from None
    return rows


def hashes_of(numbers: range, kept: ChunkMeta | None, chain: dict[int, Header | None]) -> bytes:
    """The recent hashes of a file: from the kept file's footer where its rows are kept, else from the headers."""
    out = bytearray()
    for number in numbers:
        header = chain.get(number)
        stored = kept.recent_hash(number) if kept is not None else None
        value = header.hash if header is not None else stored
        assert value is not None, number
        out += value
    return bytes(out)


async def run_chunk(
    task: ChunkTask,
    run: ChunkContext,
    *,
    report: DatasetReport,
    group: Group | None = None,
    place: Place | None = None,
) -> tuple[int, Written]:
    """Write the chunk's file (kept rows, then fetched ones), checked against the chain; return the rows fetched and
    the file, whole but not yet published (only the run's coordinator publishes: :class:`chainframe.store.Publisher`).
    A chunk whose rows turn out to mix forks is fetched again, whole, up to :data:`ATTEMPTS` times; one proven in a
    ``group`` that proved nothing is fetched again and proven piece by piece."""
    attempt = 0
    while attempt < ATTEMPTS:
        if attempt:
            report.refetched += 1
            if isinstance(run.client, SharedAnswers):  # answers of the fork that moved are not handed on again
                run.client.forget(BlockRange(task.fetch_start, task.end))
            if run.pieces is not None:  # nor the tables kin read of them (engine._pieces)
                run.pieces.forget(BlockRange(task.fetch_start, task.end))
            task = ChunkTask(**{**task.to_json(), "keep_through": None})  # the kept rows may be what moved
        unproven = done = False
        try:
            done, outcome = await on_one_fork(partial(_attempt, task, run, report=report, group=group, place=place))
        except* Unproven:
            unproven = True
        finally:
            if group is not None and not done:  # its other members do not wait for rows that will not come
                group.abandon(f"{task.dataset} {task.fetch_start}..{task.end} was not written")
        group = None  # a group is one attempt's: a chunk fetched again proves its own pieces
        if unproven:
            continue
        if done:
            assert outcome is not None
            return outcome
        attempt += 1
    raise ChainUnstable(
        f"{task.dataset} blocks {task.start}..{task.end}: the chain reorganized under every one of {ATTEMPTS} "
        "attempts to read it; try again later, or stop further from the head (--confirmations)"
    )


async def _attempt(
    task: ChunkTask,
    run: ChunkContext,
    *,
    report: DatasetReport,
    group: Group | None = None,
    place: Place | None = None,
) -> tuple[int, Written]:
    client, finalized = run.client, run.finalized
    if place is not None:
        await place.take()  # given back while it waited for a group that then proved nothing
    # No thread hop when nothing is kept: chunks then take the planning lock in the order they were handed out.
    kept = await anyio.to_thread.run_sync(kept_meta, task) if task.keep_through is not None else None
    if task.keep_through is not None and kept is None:
        task = ChunkTask(**{**task.to_json(), "keep_through": None})
        if group is not None:  # it fetches blocks its group does not cover
            raise Unproven(f"{task.dataset} {task.start}..{task.end}: its kept rows are gone")
    with ChunkWriter(task.target(), task.schema(), delta=task.layout == "delta" and not task.exact_files) as writer:
        kept_rows = await anyio.to_thread.run_sync(copy_kept, task, writer) if kept is not None else 0

        undecoded = 0

        async def write(table: pa.Table) -> None:
            nonlocal undecoded
            if "decode_error" in table.column_names:  # calls kept that do not decode with their function
                undecoded += table.num_rows - table["decode_error"].null_count
            if writer.fills(table.num_rows):  # a row group to encode and write: in a worker thread
                await anyio.to_thread.run_sync(writer.write, task.stored(table))
            else:  # only held until then (a function's series keeps a few calls of each piece): no thread hop
                writer.write(task.stored(table))

        sink = InOrder(task.fetch_start, write)
        check = ChunkCheck(task.dataset, finalized)
        proven = Proven() if task.verify and group is None else None
        # As its series: the answers it shares with the run's other series are kept until it has read them; one of a
        # block above the finalized one that another series read is a witness its commit checks (engine._shared).
        with asking(asker(task), check.witnesses):
            await fetch_and_decode(task, run, sink=sink, check=check, proven=proven, group=group)
        if group is not None:  # published once every member's rows are proven with the others'
            if place is not None:
                place.give_back()
            proven = await group.proven(task.dataset)
        blocks = f"{task.start}..{task.end}"
        if run.pieces is not None and group is None:  # headers another kin task read after these rows, if any
            chain = await run.pieces.chain(task, check.last_read, partial(chain_for, client, task, finalized))
        else:
            chain = await chain_for(client, task, finalized)
        check.confirm(chain, blocks=blocks)
        first, last = chain[task.start], chain[task.end]
        assert first is not None
        assert last is not None
        if kept is not None:
            assert task.keep_through is not None
            link = chain[task.fetch_start]
            kept_last = kept.last_block_hash if task.keep_through == kept.end else kept.recent_hash(task.keep_through)
            if link is None or link.parent != kept_last:
                raise StaleChunk(f"{task.dataset} {blocks}: the kept rows are no longer on the chain")
        # Kept rows that were final when first written stay final, even if the node's finalized block went back.
        final = max(finalized, kept.finalized) if kept is not None else finalized
        meta = ChunkMeta(
            dataset=task.dataset, chain_id=run.chain_id, start=task.start, end=task.end, chunk_size=task.chunk_size,
            filters=task.filters, u256=task.u256,
            first_block_hash=kept.first_block_hash if kept else first.hash,
            first_parent_hash=kept.first_parent_hash if kept else first.parent,
            last_block_hash=last.hash, finalized=final,
            recent_hashes=hashes_of(range(max(task.start, final + 1), task.end + 1), kept, chain),
            rows=kept_rows + sink.rows, endpoint=run.endpoint, tool_version=__version__,
            decoded_with=task.decoded_with,
        )  # fmt: skip
        # A Delta table's file goes to its own unique name at once (invisible until committed); a Parquet folder's is
        # staged, for the coordinator to rename or upload over the slot's name.
        written = await anyio.to_thread.run_sync(partial(writer.finish, meta, publish=task.layout == "delta"))
    report.decode_errors += undecoded  # counted once the rows are kept, not per attempt
    if proven is not None:  # counted once the rows are kept, not per attempt
        report.verified_blocks += proven.blocks
        report.verified_rows += proven.rows
        report.unverified.update(proven.skipped)
        notes = getattr(client, "notes", None)
        if isinstance(notes, dict):
            notes.update(proven.notes)
    return sink.rows, written


async def lend_chunk(task: ChunkTask, run: ChunkContext, *, group: Group) -> None:
    """Fetch a lent task's rows (:meth:`chainframe.engine._joint.Joint.lent`) and give them to ``group``, writing
    nothing. If that fails, the group proves nothing and its members prove their own pieces against material fetched
    for them: their retries and typed errors are the run's, not this task's."""

    async def discard(table: pa.Table) -> None:
        pass

    try:
        await fetch_and_decode(task, run, sink=InOrder(task.fetch_start, discard), group=group)
    except Exception as exc:  # a cancel is not an Exception: it goes on up
        group.abandon(f"{task.dataset} {task.fetch_start}..{task.end}, read to prove the others, failed: {exc!r}")


class TaskRunner(Protocol):
    """What runs a round's chunk tasks: :func:`run_tasks` in this process, or
    :class:`chainframe.engine._dask.DaskRunner` on the workers of a Dask cluster. ``context``: what the round's
    chunks share (the node's client, the chain, the finalized block, the pacing and the decode threads)."""

    async def __call__(
        self,
        tasks: Iterator[ChunkTask],
        context: ChunkContext,
        *,
        concurrency: int,
        counters: RunCounters,
        publish: Callable[[Written], None],
        on_chunk: Callable[[ChunkTask, int, bool], None] | None = None,
    ) -> None: ...


async def run_tasks(
    tasks: Iterator[ChunkTask],
    context: ChunkContext,
    *,
    concurrency: int,
    counters: RunCounters,
    publish: Callable[[Written], None],
    on_chunk: Callable[[ChunkTask, int, bool], None] | None = None,
) -> None:
    """Run every task, at most ``concurrency`` fetching at once and handed out in order, publishing each file as it
    is done; ``on_chunk(task, rows, written)`` after each. ``context``: what the chunks share; its ``decode`` threads
    may be shared with other runs of tasks (a Dask worker's)."""
    client, chain_id, finalized, decode = context.client, context.chain_id, context.finalized, context.decode
    planned = list(tasks)  # a round's tasks: who will read what is known before the first is fetched
    fetching = anyio.Semaphore(max(1, concurrency))
    # Tasks begun and not done: fetching, or waiting for their group's proof with the rows they gave it.
    at_once = 2 * max(1, concurrency)
    begun = anyio.Semaphore(at_once)
    # The datasets of a run that verifies are each other's proof: those of one slot fetched together are proven
    # together (engine._joint), the others read each block's answers once (engine._shared).
    joint = Joint(planned, begun=at_once, chain_id=chain_id)
    handed = [*planned, *joint.lent]
    if joint.groups:
        handed.sort(key=lambda task: (task.start, joint.rank(task)))  # still slot by slot
    # What several series of the round read of each block (its full body for transactions and four_byte_counts,
    # its trace_block for the trace family), and what a verifying series' proof reads, is asked once for all
    # (engine._shared).
    shared = SharedAnswers(client, through=finalized)
    alone = {asker(t): t for t in planned if joint.group(t) is None}  # a kin's series read as one (engine._pieces)
    grouped = {asker(t): t for t in planned if joint.group(t) is not None}
    pacing = getattr(getattr(client, "pacer", None), "pacing", None)  # a route the price table picks is read too
    kinds = {name: verify_reads(DATASETS[t.dataset], pacing) if t.verify else reads(DATASETS[t.dataset], pacing)
             for name, t in alone.items()}  # fmt: skip
    # A group's member is proven by the group's tables (engine._joint): it reads what it reads unverified, and shares
    # that with the series outside the group (traces paced by credits read transactions' full blocks).
    kinds.update({name: reads(DATASETS[t.dataset], pacing) for name, t in grouped.items()})
    readers = Counter(kind for read in kinds.values() for kind in read)
    sharing = {name for name, t in alone.items() if t.verify or any(readers[kind] > 1 for kind in kinds[name])}
    sharing |= {name for name in grouped if any(readers[kind] > 1 for kind in kinds[name])}
    for name in sharing:
        shared.expect(name, kinds[name])
    asking_shared = context.asking(shared) if sharing else context
    # Series that keep different rows of the same blocks (a function each) read each piece once (engine._pieces),
    # handed out slot by slot: a piece's table is held only until the kin's tasks of its slot, begun together, took it.
    pieces = PieceTables(t for t in planned if joint.group(t) is None)  # a group's member reads with its group
    context, asking_shared = context._replace(pieces=pieces), asking_shared._replace(pieces=pieces)
    if pieces.kins:
        handed.sort(key=lambda task: task.start)

    async def run(task: ChunkTask, place: Place) -> None:
        try:
            report = counters.dataset(task.dataset)
            report.chunks += 1
            report.blocks += task.end - task.fetch_start + 1
            rows, written = await run_chunk(
                task,
                asking_shared if asker(task) in sharing else context,
                report=report,
                group=joint.group(task),
                place=place,
            )
            await anyio.to_thread.run_sync(publish, written)
            report.written += 1
            report.rows += rows
            if on_chunk:
                on_chunk(task, rows, True)
        finally:
            place.give_back()
            begun.release()

    async def lend(task: ChunkTask, place: Place) -> None:
        try:
            group = joint.group(task)
            assert group is not None
            await lend_chunk(task, context, group=group)
        finally:
            place.give_back()
            begun.release()

    async with anyio.create_task_group() as provers:
        for group in joint.groups:
            provers.start_soon(group.prove, decode)
        async with anyio.create_task_group() as tg:
            for task in handed:  # handed out in order, each as a place frees
                await begun.acquire()
                place = Place(fetching)
                await place.take()
                tg.start_soon(lend if joint.is_lent(task) else run, task, place)
        provers.cancel_scope.cancel()  # every member has returned: a group still waiting lost one
