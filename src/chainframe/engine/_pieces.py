"""One piece's rows read once for the series of a round that keep different rows of them.

An ABI folder (``abi_dir=``) writes a series per function (``transactions__transfer__f..``,
``transactions__approve__f..``): each keeps other rows (:meth:`~chainframe.datasets.Dataset.kept_rows`) of the very
same blocks' transactions, so the rows before that choice are the same for all of them. Chunk tasks over the same
blocks whose series differ only in the filters their dataset declares as choosing rows
(:attr:`~chainframe.datasets.Dataset.keeps_by`) are *kin*; :class:`PieceTables` lets kin read each piece once:

- the first of them to plan its pieces sizes them as any task does, and the others plan the same pieces
  (:meth:`PieceTables.span`);
- the first to reach a piece fetches, checks and transforms it, and chooses every kin task's rows of it in one pass
  (:meth:`~chainframe.datasets.Dataset.kept_rows_each`: one decoding of all their functions); the others wait for
  those rows (their place among the pieces in flight is held meanwhile; the first's piece has its own, so it never
  waits for them). A table is dropped once every kin task has taken it; at most :data:`KEPT_BYTES` are held, and the kin
  of a table not held read the piece alone: memory is bounded by that, never by the range;
- above the round's finalized block, the first reader hands on with the table what it saw of the chain while it
  read the piece (the piece's last block's hash before and after, and the block hashes of the answers other series
  read for it: :mod:`chainframe.engine._shared`), and each kin task adds those witnesses and the table's block
  hashes to its own chunk's, checked at its commit as if it had read the piece itself. A chunk read again because
  the chain moved forgets the tables of its blocks (:meth:`PieceTables.forget`) first;
- verifying kin (``--verify``: their tasks are kin only of each other) prove each piece once: its first reader proves
  the raw rows against the blocks' headers before any series keeps its rows, and hands on what it proved, which
  each kin task counts as its own (a series' rows are proven when the raw rows they are kept from are). A task
  proven in a group with other datasets (:mod:`chainframe.engine._joint`) reads alone;
- the headers a kin task reads at its commit to confirm its chunk (:func:`chainframe.engine._engine.chain_for`) serve
  the other kin tasks of the same blocks whose pieces' answers were all received before those headers were asked
  for (:meth:`PieceTables.chain`): they confirm the same rows, read no later.

A first reader whose piece fails hands nothing on: the others read the piece themselves, with their own retries and
checks, as if alone.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pyarrow as pa

from chainframe.datasets import DATASETS, BlockRange
from chainframe.engine._plan import ChunkTask
from chainframe.store import series_name

KEPT_BYTES = 64_000_000
"""Piece tables held for the kin still to read them, at most."""

Kin = tuple[str, str, str, int, int, bool, str | None]
"""Tasks that read the same rows: the dataset, its filters but those that choose rows (as JSON), the u256 form, the
blocks fetched (first, last), and whether they verify, by which chain family's rules."""
Witness = tuple[int, bytes | None, bytes | None]
"""A block, its hash before and after a read (:attr:`~chainframe.engine._canonical.ChunkCheck.witnesses`)."""


Read = tuple[pa.Table, list[pa.Table], list[Witness], Any, float]
"""A piece as its first reader hands it on: its rows, each kin task's rows of them (in :meth:`PieceTables.members`'
order), what the reader saw of the chain meanwhile, what it proved of the rows (verifying kin; else None: a
:class:`~chainframe.engine._verified.Proven`), and when its answers were received (``time.monotonic``)."""


def kin_of(task: ChunkTask) -> Kin | None:
    """``task``'s kin (None: its dataset keeps every row it reads)."""
    dataset = DATASETS[task.dataset]
    if not dataset.keeps_by or not dataset.selects(task.filters):
        return None
    rest = {k: v for k, v in task.filters.items() if k not in dataset.keeps_by}
    filters = json.dumps(rest, sort_keys=True)
    return task.dataset, filters, task.u256, task.fetch_start, task.end, task.verify, task.family


def asker(task: ChunkTask) -> str:
    """Who ``task`` reads the run's shared answers as (:func:`chainframe.engine._shared.asking`): its series, or its
    kin, as one: whichever of them reads a piece reads it for all, and an answer read by the kin is not kept for the
    others, who never ask for it."""
    kin = kin_of(task)
    return series_name(task.dataset, task.filters, task.u256) if kin is None else f"kin {json.dumps(kin)}"


@dataclass(eq=False)
class _Chain:
    asked_at: float
    """When its headers were asked for: rows received before then are confirmed by them."""
    left: int
    ready: anyio.Event = field(default_factory=anyio.Event)
    headers: Any = None
    """The headers read (None: the read failed, or has not ended)."""


@dataclass(eq=False)
class _Entry:
    left: int
    """Kin tasks still to take it."""
    end: int
    ready: anyio.Event = field(default_factory=anyio.Event)
    rows: Read | None = None


class PieceTables:
    """The pieces' tables of a round's kin tasks (see the module)."""

    def __init__(self, tasks: Iterable[ChunkTask], *, kept_bytes: int = KEPT_BYTES) -> None:
        tasks = list(tasks)
        counted = Counter(kin_of(task) for task in tasks)
        self._tasks = {kin: n for kin, n in counted.items() if kin is not None and n > 1}
        self._members: dict[Kin, dict[str, Mapping[str, Any]]] = {}
        for task in tasks:
            kin = kin_of(task)
            if kin in self._tasks:
                self._members.setdefault(kin, {}).setdefault(_key(task), task.filters)
        self._limit = kept_bytes
        self._bytes = 0
        self._plans: dict[Kin, dict[int, int]] = {}
        self._entries: dict[tuple[Kin, int], _Entry] = {}
        self._chains: dict[tuple[Kin, int], _Chain] = {}

    @property
    def kins(self) -> int:
        """How many kins the round has."""
        return len(self._tasks)

    def kin(self, task: ChunkTask) -> Kin | None:
        """``task``'s kin, where the round has others of it (None: it reads its pieces alone)."""
        kin = kin_of(task)
        return kin if kin in self._tasks else None

    def members(self, kin: Kin) -> list[Mapping[str, Any]]:
        """The kin tasks' filters, each once, in the round's order."""
        return list(self._members[kin].values())

    def member(self, task: ChunkTask) -> int:
        """Where ``task``'s rows are among :meth:`members`' (a kin task's)."""
        kin = kin_of(task)
        assert kin is not None
        return list(self._members[kin]).index(_key(task))

    def span(self, kin: Kin, start: int, span: int) -> int:
        """The blocks of the kin's piece that starts at ``start``: as the first of them planned it, else ``span``
        (which it then plans for the others)."""
        end = self._plans.setdefault(kin, {}).setdefault(start, start + max(1, span) - 1)
        return end - start + 1

    async def take(self, kin: Kin, piece: BlockRange) -> tuple[Read | None, bool]:
        """``(read, False)``: the piece as another of the kin read it (:data:`Read`);
        ``(None, True)``: this task reads them first and hands them on with :meth:`give`; ``(None, False)``: nobody
        hands them on, read them alone."""
        key = (kin, piece.start)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _Entry(left=self._tasks[kin] - 1, end=piece.end)
            return None, True
        await entry.ready.wait()
        entry.left -= 1
        if entry.left <= 0 and self._entries.get(key) is entry:
            self._drop(key)
        return entry.rows, False

    def give(self, kin: Kin, piece: BlockRange, read: Read | None) -> None:
        """The first reader's ``piece`` (None: it failed, and the others read the piece alone). Once only: a second
        call changes nothing."""
        entry = self._entries.get((kin, piece.start))
        if entry is None or entry.ready.is_set():
            return
        if read is not None and self._bytes + _size(read) <= self._limit:
            entry.rows = read
            self._bytes += _size(read)
        entry.ready.set()

    async def chain(self, task: ChunkTask, received: float, read: Callable[[], Awaitable[Any]]) -> Any:
        """The headers ``task``'s commit confirms its chunk with: those another kin task of the same blocks read, if
        it asked for them after ``received`` (when the last of ``task``'s answers came), else ``read()``'s, which
        then serve the others."""
        kin = self.kin(task)
        if kin is None:
            return await read()
        key = (kin, task.start)
        shared = self._chains.get(key)
        if shared is not None and shared.asked_at >= received:
            await shared.ready.wait()
            shared.left -= 1
            if shared.left <= 0 and self._chains.get(key) is shared:
                del self._chains[key]
            if shared.headers is not None:
                return shared.headers
            return await read()
        mine = _Chain(asked_at=time.monotonic(), left=self._tasks[kin] - 1)
        self._chains[key] = mine
        try:
            mine.headers = await read()
        finally:
            mine.ready.set()
        return mine.headers

    def forget(self, blocks: BlockRange) -> None:
        """Drop the tables of pieces among ``blocks`` (a chunk read again because the chain moved): the next to ask
        reads the piece again; one still being read is handed on to nobody (its waiters read it alone)."""
        for key, entry in list(self._entries.items()):
            if key[1] <= blocks.end and entry.end >= blocks.start:
                self._drop(key)
                entry.ready.set()
        for key in [k for k in self._chains if k[0][3] <= blocks.end and k[0][4] >= blocks.start]:
            del self._chains[key]

    def _drop(self, key: tuple[Kin, int]) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None and entry.rows is not None:
            self._bytes -= _size(entry.rows)


def _key(task: ChunkTask) -> str:
    return json.dumps(task.filters, sort_keys=True)


def _size(read: Read) -> int:
    """What a read holds: its table's buffers (each kin task's rows are a few of them, often slices)."""
    return int(read[0].get_total_buffer_size())
