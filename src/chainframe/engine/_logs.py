"""eth_getLogs over a chunk, split until every request fits the provider's limits.

On a limit error (too many results, too slow, range too wide, in any provider's wording: see
:mod:`chainframe.rpc._errors`), the range is split at the provider's hinted end when it gives a usable one, else
halved. A single block that still exceeds the limit is read from its receipts (``eth_getBlockReceipts``, or by
transaction where the node lacks it) and filtered locally. A rate limit is not a split: the client waits it out. The
span that worked is remembered for the next chunks.

Where calls are cheap (a near node and no credit budget) a piece is fetched in several calls of about 1 MB answers,
which a node serves with less work per byte (:meth:`SplitState.calls`), and still decoded and written as one.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import first_error
from chainframe._kernels import constant
from chainframe.datasets import (
    LOGS,
    RECEIPTS,
    U256,
    BlockRange,
    matches_filter,
    spread_blocks,
    with_block_timestamps,
)
from chainframe.engine._answers import checked
from chainframe.rpc import ANSWER_BYTES, LimitExceeded, params

if TYPE_CHECKING:
    pass

MAX_PIECES = 100_000  # a provider that refuses even after this many splits is refusing everything
PIECE_BLOCKS = 100
"""Blocks in the first piece of a dataset fetched block by block; later pieces follow its answers' size."""
MIN_PIECE_BLOCKS, MAX_PIECE_BLOCKS = 10, 1000


@dataclass
class SplitState:
    """Shared by the chunks of a run: what was split, and how many blocks one eth_getLogs should cover.

    The span adapts to the answers: pieces are sized so an answer holds about ``target_bytes`` (memory per piece
    stays bounded, and pieces run concurrently), shrunk further by any limit error, grown again when answers are small.
    """

    splits: int = 0
    receipt_fallbacks: int = 0
    span: int = 10
    """Blocks the next piece covers: small until answers have been seen (it grows up to 4x per answer)."""
    target_bytes: int = 4_000_000
    """4 MB: through the benchmark's remote gateway, 69 eth_getLogs for 2,000 blocks where 2 MB took 114 (each one a
    round trip and, at Infura, 255 credits), 0.96x the CPU, peak RSS 180 to 200 MB; under a 10,000-result limit until
    logs average 400 bytes (the benchmark's are 560)."""
    limited: int | None = None
    """The largest span a provider limit has let through (None: no limit seen)."""
    block_bytes: float = 0.0
    """eth_getLogs answer bytes per block in the latest answers (0: none seen yet)."""
    in_flight: anyio.Semaphore = field(default_factory=lambda: anyio.Semaphore(8))
    """Pieces fetched or decoding at once, across all chunks (of every dataset: the others' pieces take places here
    too): what bounds the answer bytes held in memory. A piece is planned only once it has a place here, so a logs
    piece is sized by the newest answers."""
    planning: anyio.Lock = field(default_factory=anyio.Lock)
    """Held by the chunk whose pieces are being planned: chunks take places in turn, in the order they started, so
    one chunk is fetched at a time (two while one ends), whatever the chunk concurrency: the rows held by open chunk
    files do not grow with it."""

    spans: dict[str, int] = field(default_factory=dict)
    """Blocks per piece of each dataset fetched block by block (all but logs), learned from its answers like ``span``
    so an answer holds about ``piece_bytes``: a piece's fixed cost (Polars calls, ~10 ms) is paid per 8 MB, not per
    100 blocks, while a chain with large blocks gets small pieces."""
    piece_bytes: int = 8_000_000
    """Larger than ``target_bytes``: these answers are batches of many small calls (receipts of 100 benchmark blocks,
    10 MB, decode in half the CPU of five 2 MB pieces)."""

    def piece_span(self, dataset: str) -> int:
        return self.spans.get(dataset, PIECE_BLOCKS)

    def observe_pieces(self, dataset: str, blocks: int, size: int) -> None:
        wanted = int(blocks * self.piece_bytes / max(size, 1))
        self.spans[dataset] = max(MIN_PIECE_BLOCKS, min(wanted, blocks * 4, MAX_PIECE_BLOCKS))

    def calls(self, piece: BlockRange, *, cheap: bool) -> list[BlockRange]:
        """The eth_getLogs calls that fetch ``piece``: one, or where calls are cheap (a near node and no credit budget,
        :attr:`chainframe.rpc.AsyncClient.cheap_calls`) as many as make answers of about
        :data:`~chainframe.rpc._client.ANSWER_BYTES`, which the node serves with less work per byte. The piece stays
        one unit of decoding, checks and memory."""
        if not cheap or not self.block_bytes:
            return [piece]
        step = max(1, int(ANSWER_BYTES / self.block_bytes))
        return [BlockRange(a, min(a + step - 1, piece.end)) for a in range(piece.start, piece.end + 1, step)]

    def observe(self, blocks: int, size: int) -> None:
        self.block_bytes = size / max(blocks, 1)
        wanted = max(1, int(blocks * self.target_bytes / max(size, 1)))
        if self.limited is not None:
            wanted = min(wanted, self.limited * 2)  # grow past a known limit only gradually
        self.span = max(1, min(wanted, blocks * 4))

    def refused(self, fitting_blocks: int) -> None:
        self.limited = fitting_blocks if self.limited is None else min(self.limited, fitting_blocks)
        self.span = max(1, min(self.span, fitting_blocks))


def _cut(piece: BlockRange, hint: tuple[int, int] | None, max_blocks: int | None = None) -> int | None:
    """Where to split a refused piece: the provider's hinted end when usable, else the widest range its text allows,
    else the middle; None for one block."""
    if piece.start == piece.end:
        return None
    # A hint is used when it starts where we did and ends strictly inside (reth can hint the range it refused).
    if hint is not None and hint[0] == piece.start and piece.start <= hint[1] < piece.end:
        return hint[1]
    if max_blocks is not None and 1 <= max_blocks < len(piece):
        return piece.start + max_blocks - 1
    return (piece.start + piece.end) // 2


def log_filter(blocks: BlockRange, filters: Mapping[str, Any]) -> dict[str, Any]:
    return params.log_filter(
        from_block=blocks.start, to_block=blocks.end, address_=filters.get("address"), topics=filters.get("topics")
    )


Answers = list[tuple[BlockRange, bytes]]
"""A piece's eth_getLogs answers, each with the blocks its call asked for (one call, or several: see
:meth:`SplitState.calls`)."""
Decode = Callable[[BlockRange, Answers, list[bytes]], Awaitable[pa.Table]]
"""Decode (and check) a piece's eth_getLogs answers and receipts answers into a table (in a worker thread)."""
Piece = Callable[[BlockRange], Coroutine[Any, Any, None]]
"""Fetch, decode and hand on one piece of a chunk."""
Emit = Callable[[BlockRange, pa.Table], Awaitable[None]]
"""Take the rows of one piece of the chunk (pieces come in any order; see :class:`chainframe.engine._sink.InOrder`)."""


async def fetch_logs(
    client: Any,
    blocks: BlockRange,
    filters: Mapping[str, Any],
    state: SplitState,
    decode: Decode,
    emit: Emit,
    *,
    wrap: Callable[[Piece], Piece] = lambda run: run,
) -> None:
    """The chunk's logs, one table per piece, each decoded as soon as its answers arrive and handed to ``emit`` (its
    bytes then dropped). A piece holds its place among ``state.in_flight`` until emitted, so a slow writer slows
    fetching.
    ``wrap`` wraps the fetch of each planned piece (splits included), e.g. to read the chain's head around it."""
    pieces = 0

    async def get(piece: BlockRange, *, placed: bool = False) -> None:
        """Fetch, decode and emit ``piece``; ``placed``: it already holds a place in ``state.in_flight``."""
        nonlocal pieces
        pieces += 1
        if pieces > MAX_PIECES:
            raise LimitExceeded(f"still over the limit after {MAX_PIECES} splits", reason="results")
        if not placed:
            await state.in_flight.acquire()

        async def logs() -> pa.Table:
            calls = state.calls(piece, cheap=client.cheap_calls)
            bodies = [b""] * len(calls)

            async def call(n: int) -> None:
                bodies[n] = await client.request_bytes("eth_getLogs", [log_filter(calls[n], filters)])

            if len(calls) == 1:
                await call(0)
            else:
                try:
                    async with anyio.create_task_group() as tg:
                        for n in range(len(calls)):
                            tg.start_soon(call, n)
                except BaseExceptionGroup as group:
                    raise first_error(group) from None  # as one call raises it: a limit error splits the piece
            state.observe(len(piece), sum(map(len, bodies)))
            bodies = await with_block_timestamps(client, bodies)  # a node that sends none (Hardhat, Ganache)
            return await decode(piece, list(zip(calls, bodies, strict=True)), [])

        async def from_receipts() -> pa.Table:
            # As the receipts dataset reads them: by transaction where the node lacks eth_getBlockReceipts.
            return await decode(piece, [], await RECEIPTS.fetch(client, piece))

        try:
            try:
                table = await checked(logs, method="eth_getLogs", blocks=piece, client=client)
            except LimitExceeded as exc:
                cut = _cut(piece, exc.hint, exc.max_blocks)
            else:
                await emit(piece, table)
                return
        finally:
            state.in_flight.release()
        state.splits += 1
        if cut is None:
            state.receipt_fallbacks += 1
            async with state.in_flight:
                table = await checked(from_receipts, method="eth_getBlockReceipts", blocks=piece, client=client)
                await emit(piece, table)
            return
        state.refused(cut - piece.start + 1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(get, BlockRange(piece.start, cut))
            tg.start_soon(get, BlockRange(cut + 1, piece.end))

    await plan_pieces(blocks, state, lambda _: state.span, wrap(partial(get, placed=True)))


async def plan_pieces(
    blocks: BlockRange,
    state: SplitState,
    span: Callable[[int], int],
    run: Callable[[BlockRange], Coroutine[Any, Any, None]],
) -> None:
    """Run ``run`` on consecutive pieces of ``blocks``, each started once it holds a place in ``state.in_flight``
    (``run`` gives it back) and only then sized by ``span(its first block)``, so it follows the answers seen so far.
    Chunks plan in turn (``state.planning``); returns when every piece has finished."""
    async with anyio.create_task_group() as tg, state.planning:
        start = blocks.start
        while start <= blocks.end:
            await state.in_flight.acquire()
            end = min(start + max(1, span(start)) - 1, blocks.end)
            tg.start_soon(run, BlockRange(start, end))
            start = end + 1


@dataclass(frozen=True)
class Density:
    """How many logs (matching a filter) a range holds per block, and their eth_getLogs answer bytes: measured on a
    few small samples spread over it (:func:`sample_density`), to predict the pieces a run will take."""

    bytes_per_block: float
    results_per_block: float
    sampled_blocks: int
    calls: int
    """eth_getLogs calls the sampling took."""


SAMPLES, SAMPLE_BLOCKS = 4, 5
"""Samples of a range's logs for ``--dry``: 4 eth_getLogs of 5 blocks each, spread evenly (about 1,000 credits)."""


async def sample_density(
    client: Any, ranges: Sequence[BlockRange], filters: Mapping[str, Any], *, samples: int = SAMPLES
) -> Density:
    """The density of ``ranges``' logs matching ``filters``, from ``samples`` small eth_getLogs spread over them (one
    batch). A range with uneven logs (a busy contract's launch) is predicted only as well as the samples see it."""
    starts = spread_blocks(ranges, samples)
    if not starts:
        return Density(0.0, 0.0, 0, 0)
    picked = [BlockRange(n, min(n + SAMPLE_BLOCKS - 1, ranges[-1].end)) for n in starts]
    # The answers' bytes as the node sends them (its spacing included): what a run's pieces are sized by.
    bodies = await client.batch_bytes([("eth_getLogs", [log_filter(p, filters)]) for p in picked])
    size = sum(map(len, bodies))
    results = 0
    for body in bodies:
        for envelope in json.loads(body):
            results += len(envelope.get("result") or ())
    sampled = sum(map(len, picked))
    return Density(size / sampled, results / sampled, sampled, len(picked))


def predict_calls(
    chunks: Sequence[BlockRange], density: Density, *, cheap: bool = False, max_results: int | None = 10_000
) -> int:
    """The eth_getLogs calls a run over ``chunks`` takes at ``density``: :func:`fetch_logs` played with the answers'
    sizes the density gives (a fresh :class:`SplitState`: pieces grow from its first span, ``in_flight`` of them
    sized before their answers are seen, chunks one after another), a piece over ``max_results`` (Infura's 10,000,
    the common limit) refused once and split at the hint a provider gives. ``cheap``: the run's client fetches
    pieces in several calls (:attr:`~chainframe.rpc.AsyncClient.cheap_calls`)."""
    state = SplitState()
    places = 8  # SplitState.in_flight's
    calls = 0

    def fetch(piece: BlockRange) -> None:
        nonlocal calls
        results = density.results_per_block * len(piece)
        if max_results is not None and results > max_results and len(piece) > 1:
            calls += 1  # refused, then split where the provider's hint says
            fits = max(1, int(max_results / max(density.results_per_block, 1e-9)))
            state.refused(fits)
            cut = piece.start + min(fits, len(piece) - 1) - 1
            fetch(BlockRange(piece.start, cut))
            fetch(BlockRange(cut + 1, piece.end))
            return
        calls += len(state.calls(piece, cheap=cheap))
        state.observe(len(piece), int(density.bytes_per_block * len(piece)))

    for chunk in chunks:
        flying: list[BlockRange] = []
        start = chunk.start
        while start <= chunk.end:
            if len(flying) == places:
                fetch(flying.pop(0))  # the oldest answer arrives: the next piece is sized by it
            end = min(start + max(1, state.span) - 1, chunk.end)
            flying.append(BlockRange(start, end))
            start = end + 1
        for piece in flying:  # the chunk's planning ends with its last piece
            fetch(piece)
    return calls


def logs_table(
    logs: list[bytes], receipts: list[bytes], filters: Mapping[str, Any], *, chain_id: int, u256: U256
) -> pa.Table:
    """Rows of eth_getLogs answers, plus receipts' logs filtered as eth_getLogs would have."""
    table = LOGS.transform(logs, chain_id=chain_id, u256=u256)
    if not receipts:
        return table
    extra = LOGS.from_receipts(receipts, chain_id=chain_id, u256=u256)
    if filters:
        import polars as pl

        frame = pl.from_arrow(extra)
        assert isinstance(frame, pl.DataFrame)
        extra = frame.filter(matches_filter(filters)).to_arrow().cast(extra.schema)
    return pa.concat_tables([table, extra]) if logs else extra


def sort_table(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    """``table`` ordered by ``keys`` (a stable sort). Answers nearly always come ordered: that is checked on
    neighbouring rows with Arrow kernels, and the wide columns are not copied (a take of every column cost 0.4 s on
    312,000 logs)."""
    if table.num_rows < 2:
        return table
    columns = [table[k].combine_chunks() for k in keys]
    simple = all(
        pa.types.is_integer(c.type)
        or pa.types.is_fixed_size_binary(c.type)
        or pa.types.is_string(c.type)  # compared as bytes by Arrow and sorted so by Polars: address_appearances'
        or (pa.types.is_list(c.type) and pa.types.is_unsigned_integer(c.type.value_type))
        for c in columns
    )
    if simple and _ascending(columns):
        return table
    import polars as pl  # the rare path (and keys that are lists: nulls sort first, as always here)

    order = pl.from_arrow(table.select(list(keys)))
    assert isinstance(order, pl.DataFrame)
    return table.take(order.select(pl.arg_sort_by(list(keys), maintain_order=True)).to_series().to_arrow())


def _paths_compared(column: pa.Array) -> tuple[pa.Array, pa.Array]:
    """For lists of unsigned integers (trace addresses), whether each row's list is lexicographically greater than
    the previous row's, and whether equal (a prefix is less than a longer list), as boolean arrays, null where
    either list is (the caller orders nulls). The items two neighbours share in length are compared at once (work
    and memory follow the lists' items). The trace family's frames come in preorder, which is this order: a
    whole-table sort by Polars cost its import (0.4-0.5 s of a traces run) for nothing."""
    import numpy as np

    n = len(column)
    column = pa.concat_arrays([column]) if column.offset else column
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[: n + 1].astype(np.int64)
    items = column.values
    values = np.frombuffer(items.buffers()[1], dtype=np.uint64)[items.offset : items.offset + len(items)]
    lengths = np.diff(offsets)
    before, after = lengths[:-1], lengths[1:]
    shared = np.minimum(before, after)
    pairs = np.repeat(np.arange(n - 1), shared)
    ramp = np.arange(len(pairs)) - np.repeat(np.cumsum(shared) - shared, shared)
    left = values[np.repeat(offsets[:-2], shared) + ramp]
    right = values[np.repeat(offsets[1:-1], shared) + ramp]
    differ = np.flatnonzero(left != right)
    first_pairs, first = np.unique(pairs[differ], return_index=True)  # each pair's first differing item
    some = np.zeros(n - 1, dtype=bool)
    some[first_pairs] = True
    greater = after > before  # no item differs: the longer list is the greater
    greater[first_pairs] = right[differ[first]] > left[differ[first]]
    equal = ~some & (before == after)
    validity, nulls = None, 0
    if column.null_count:
        bits = np.unpackbits(np.frombuffer(column.buffers()[0], dtype=np.uint8), bitorder="little")[:n].astype(bool)
        both = bits[1:] & bits[:-1]
        validity, nulls = pa.py_buffer(np.packbits(both, bitorder="little")), int((~both).sum())
    bools = pa.bool_()
    return (
        pa.Array.from_buffers(bools, n - 1, [validity, pa.py_buffer(np.packbits(greater, bitorder="little"))], nulls),
        pa.Array.from_buffers(bools, n - 1, [validity, pa.py_buffer(np.packbits(equal, bitorder="little"))], nulls),
    )


def _ascending(columns: Sequence[pa.Array]) -> bool:
    """Rows (integers, fixed-size bytes or text, compared as bytes; nulls first, as the sort puts them) are in ascending
    lexicographic order of ``columns``. The state diffs' keys (a null transaction index for a block-level change, an
    address) came sorted and took the Polars sort for that: its import was 0.3 CPU-s of a run."""
    ok = None
    for column in reversed(columns):  # from the last key: ok = k > prev or (k == prev and ok_of_later_keys)
        before, after = column[:-1], column[1:]
        if pa.types.is_list(column.type):
            greater, equal = _paths_compared(column)
        else:
            greater, equal = pc.greater(after, before), pc.equal(after, before)
        if column.null_count:  # null before a value, equal to null; the kernels answer null where either is
            none = constant(False, len(before), pa.bool_())
            null_before, null_after = pc.is_null(before), pc.is_null(after)
            greater = pc.or_(pc.greater(null_before, null_after), pc.coalesce(greater, none))
            equal = pc.or_(pc.and_(null_before, null_after), pc.coalesce(equal, none))
        ok = pc.or_(greater, equal) if ok is None else pc.or_(greater, pc.and_(equal, ok))
    return ok is None or pc.all(ok).as_py() is not False
