"""Keeping stored rows on the canonical chain: checks before a chunk is committed, and reorganizations found after.

Before a commit (:class:`ChunkCheck`): a chunk's pieces are fetched at different moments, so near the head they can
come from two forks. For every piece that reaches above the finalized block, the hash of its last block is read before
and after the piece is fetched (a *witness*: the piece was served from the chain holding that block), and the distinct
``(block_number, block_hash)`` pairs of its rows are kept. At commit the headers of the chunk's blocks above the
finalized one are read in one batch and must link by parent hash; every witness and every row's block hash must match
them. Anything else is :class:`StaleChunk`, and the chunk is fetched again. Below the finalized block no reorganization
can happen, so there only the chunk's edges are read (two headers per chunk).

After a commit (:func:`find_stale`): a chunk's footer keeps the parent hash of its first block, the hash of its last
and the hashes of its blocks above the finalized one. Adjacent chunks whose hashes link form a segment, pinned by its
top hash; a segment whose top is still the node's block is intact (one header per segment, read in one batch with
the head by :func:`head_and_stale`). Otherwise the segment is walked down to the fork point, found among the stored
recent hashes, and every chunk above it is rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, NamedTuple, TypeVar

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import ChainframeError
from chainframe._kernels import constant
from chainframe.datasets import DATASETS, BlockRange
from chainframe.engine._answers import WrongAnswer, checked
from chainframe.rpc import InvalidParams, ServerError
from chainframe.store import Series, StoredChunk

T = TypeVar("T")


class StaleChunk(ChainframeError):
    """A chunk's rows do not all come from the chain the node now has (a reorganization while it was fetched)."""


_MOVED = re.compile(
    r"block ?out ?of ?range|header not found|unknown block|block not found|block height is \d+|beyond (the )?head",
    re.IGNORECASE,
)


def chain_moved(error: BaseException) -> bool:
    """A node answering that it lacks a block we saw below its head: it is reorganizing (anvil answers
    ``BlockOutOfRangeError`` while it rolls back), so the chunk is read again rather than the run failing."""
    return isinstance(error, InvalidParams | ServerError) and bool(_MOVED.search(str(error)))


async def on_one_fork(read: Callable[[], Awaitable[T]]) -> tuple[bool, T | None]:
    """``(True, read())``, or ``(False, None)`` when the chain moved under the read (a :class:`StaleChunk`, or a node
    lacking a block mid-reorg): the caller reads again."""
    moved = False
    try:
        result = await read()
    except* StaleChunk:
        moved = True
    except* (InvalidParams, ServerError) as group:
        if not all(chain_moved(e) for e in group.exceptions):
            raise
        moved = True
    return (False, None) if moved else (True, result)


class ChainUnstable(ChainframeError):
    """The chain kept reorganizing: a chunk could not be read from one fork in several attempts."""


class Header(NamedTuple):
    number: int
    hash: bytes
    parent: bytes


def _bytes(text: str) -> bytes:
    return bytes.fromhex(text[2:])


async def headers(client: Any, numbers: Iterable[int]) -> dict[int, Header | None]:
    """The node's headers for ``numbers`` (one batch); None for a block the node does not have. An answer for another
    block, or without its hashes, is asked again and then a :class:`WrongAnswer`."""
    return (await _read_headers(client, numbers, head=False))[1]


async def head_and_headers(client: Any, numbers: Iterable[int]) -> tuple[int, dict[int, Header | None]]:
    """The node's head and its headers for ``numbers``, as :func:`headers`, in the same batch: one round trip."""
    head, out = await _read_headers(client, numbers, head=True)
    assert head is not None
    return head, out


async def _read_headers(
    client: Any, numbers: Iterable[int], *, head: bool
) -> tuple[int | None, dict[int, Header | None]]:
    wanted = sorted(set(numbers))
    if not wanted:
        return (int(await client.block_number()) if head else None), {}
    calls = [("eth_getBlockByNumber", [hex(n), False]) for n in wanted]

    async def read() -> tuple[int | None, dict[int, Header | None]]:
        answers = await client.batch([("eth_blockNumber", []), *calls] if head else calls)
        tip: int | None = None
        if head:
            answer, answers = answers[0], answers[1:]
            if isinstance(answer, BaseException):
                raise answer
            try:
                tip = int(answer, 16) if isinstance(answer, str) and answer.startswith("0x") else None
            except ValueError:
                tip = None
            if tip is None:
                raise WrongAnswer(f"the head is {str(answer)[:40]!r}, not a block number", check="head is a number")
        out: dict[int, Header | None] = {}
        for number, answer in zip(wanted, answers, strict=True):
            if isinstance(answer, BaseException):
                raise answer
            if answer is None:
                out[number] = None
                continue
            try:
                header = Header(int(answer["number"], 16), _bytes(answer["hash"]), _bytes(answer["parentHash"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise WrongAnswer(f"block {number}'s header lacks {exc}", check="header fields present") from None
            if header.number != number:
                raise WrongAnswer(f"asked for block {number}, got block {header.number}", check="the block asked for")
            out[number] = header
        return tip, out

    return await checked(read, method="eth_getBlockByNumber", blocks=BlockRange(wanted[0], wanted[-1]), client=client)


async def block_hash(client: Any, number: int) -> bytes | None:
    header = (await headers(client, [number]))[number]
    return None if header is None else header.hash


@dataclass
class ChunkCheck:
    """What a chunk's fetch saw of the chain above ``finalized``: witnesses and row hashes, checked at commit."""

    dataset: str
    finalized: int
    witnesses: list[tuple[int, bytes | None, bytes | None]] = field(default_factory=list)
    """(block, hash before the piece, hash after) for every piece reaching above ``finalized``."""
    pairs: dict[int, set[bytes]] = field(default_factory=dict)
    """Block -> the block hashes its rows carry (above ``finalized`` only)."""
    last_read: float = 0.0
    """When the last of its pieces' answers was received (``time.monotonic``): headers read after it can confirm
    them (:meth:`chainframe.engine._pieces.PieceTables.chain`)."""

    def read(self, at: float) -> None:
        """One of its pieces' answers were received at ``at``."""
        self.last_read = max(self.last_read, at)

    def watches(self, last_block: int) -> bool:
        return last_block > self.finalized

    def see_rows(self, table: pa.Table) -> None:
        """Keep the distinct (block, hash) pairs of rows above the finalized block: only those rows reach Python (a
        group-by here loaded pyarrow's dataset module, and pandas with it, 0.3 s, in every run near the head)."""
        if not DATASETS[self.dataset].row_hashed or table.num_rows == 0:
            return
        numbers = table["block_number"].combine_chunks()
        above = pc.greater(numbers, constant(self.finalized, len(numbers), numbers.type))
        if not pc.any(above).as_py():
            return
        numbers, hashes = pc.filter(numbers, above), pc.filter(table["block_hash"].combine_chunks(), above)
        if len(numbers) > 1 and not numbers.null_count and not hashes.null_count:
            # Only a row where the pair changes reaches Python: rows come sorted by block, so a few per block.
            changed = pc.or_(pc.not_equal(numbers[1:], numbers[:-1]), pc.not_equal(hashes[1:], hashes[:-1]))
            keep = pa.concat_arrays([constant(True, 1, pa.bool_()), changed])
            numbers, hashes = pc.filter(numbers, keep), pc.filter(hashes, keep)
        for number, hash_ in zip(numbers.to_pylist(), hashes.to_pylist(), strict=True):
            self.pairs.setdefault(number, set()).add(hash_)

    def confirm(self, chain: dict[int, Header | None], *, blocks: str) -> None:
        """Every witness and row hash matches ``chain`` (the headers read at commit); else :class:`StaleChunk`."""
        for number, before, after in self.witnesses:
            now = chain.get(number)
            if now is None or not (before == after == now.hash):
                raise StaleChunk(f"{self.dataset} {blocks}: block {number} changed while the chunk was read")
        for number, seen in self.pairs.items():
            now = chain.get(number)
            if now is None or seen != {now.hash}:
                raise StaleChunk(f"{self.dataset} {blocks}: rows of block {number} come from another fork")


def check_links(chain: dict[int, Header | None], numbers: Sequence[int], *, blocks: str) -> None:
    """Consecutive headers among ``numbers`` link by parent hash (else the chain moved while they were read)."""
    for a, b in pairwise(numbers):
        ha, hb = chain.get(a), chain.get(b)
        if ha is None or hb is None:
            raise StaleChunk(f"blocks {blocks}: the node no longer has block {a if ha is None else b}")
        if b == a + 1 and hb.parent != ha.hash:
            raise StaleChunk(f"blocks {blocks}: block {b} does not link to block {a} (the chain moved)")


class Repair(NamedTuple):
    """A stored chunk that is no longer on the chain: keep its rows through ``keep_through`` (None: none)."""

    chunk: StoredChunk
    keep_through: int | None
    fork_block: int
    """The first stored block that is no longer the node's."""


async def find_stale(client: Any, series: Sequence[Series], head: int) -> list[Repair]:
    """The chunks of ``series`` that are off the node's chain (one header per linked segment when nothing is)."""
    tops = _unsettled_tops(series, head)
    if not tops:
        return []
    known = await headers(client, [s[-1].meta.end for s in tops if s[-1].meta.end <= head])
    return await _repairs(client, tops, known, head)


async def head_and_stale(client: Any, series: Sequence[Series]) -> tuple[int, list[Repair]]:
    """The node's head and the chunks of ``series`` off its chain (:func:`find_stale`), the head read in the batch of
    the segments' top headers: one round trip when nothing moved, where reading the head first took two."""
    head, known = await head_and_headers(client, [s[-1].meta.end for s in _unsettled_tops(series, None)])
    known = {n: h for n, h in known.items() if n <= head}  # as find_stale reads them: only blocks up to the head
    tops = _unsettled_tops(series, head)
    return head, (await _repairs(client, tops, known, head) if tops else [])


def _unsettled_tops(series: Sequence[Series], head: int | None) -> list[list[StoredChunk]]:
    """The segments whose top may have moved: it was not final when written, or it is above ``head`` (if known). A top
    final when written and below the head is settled, and so is everything linked below it."""
    tops: list[list[StoredChunk]] = []
    for one in series:
        for segment in one.segments():
            top = segment[-1].meta
            if top.end > top.finalized or (head is not None and top.end > head):
                tops.append(segment)
    return tops


async def _repairs(
    client: Any, tops: list[list[StoredChunk]], known: dict[int, Header | None], head: int
) -> list[Repair]:
    repairs: list[Repair] = []
    for segment in tops:
        top = segment[-1].meta
        now = known.get(top.end)
        if now is not None and now.hash == top.last_block_hash:
            continue
        repairs += await _walk_down(client, segment, head)
    return repairs


async def _walk_down(client: Any, segment: list[StoredChunk], head: int) -> list[Repair]:
    """Chunks of a segment whose top is off the chain, from the top down to the first intact one."""
    out: list[Repair] = []
    for chunk in reversed(segment):
        meta = chunk.meta
        if meta.end <= meta.finalized and meta.end <= head:
            break  # final when written
        recent = [n for n in meta.recent_blocks if n <= head]
        chain = await headers(client, [*recent, meta.end] if meta.end <= head else recent)
        end_now = chain.get(meta.end)
        if end_now is not None and end_now.hash == meta.last_block_hash:
            break  # intact: so is everything linked below it
        # The first stored recent block the node no longer has; blocks below the recent ones were final when written.
        fork = next(
            (n for n in recent if (now := chain.get(n)) is None or now.hash != meta.recent_hash(n)),
            recent[-1] + 1 if recent else meta.start,
        )
        out.append(Repair(chunk=chunk, keep_through=fork - 1 if fork > meta.start else None, fork_block=fork))
        if fork > meta.start:
            break  # the fork is inside this chunk: the ones below are intact
    return out
