"""One piece's rows read once for the series of a round that keep different rows of them.

An ABI folder (``abi_dir=``) writes a series per function (``transactions__transfer__f..``,
``transactions__approve__f..``): each keeps other rows (:meth:`~chainframe.datasets.Dataset.kept_rows`) of the very
same blocks' transactions, so the rows before that choice are the same for all of them. Chunk tasks over the same
blocks whose series differ only in the filters their dataset declares as choosing rows
(:attr:`~chainframe.datasets.Dataset.keeps_by`) are *kin*; :class:`PieceTables` lets kin read each piece once:

- the first of them to plan its pieces sizes them as any task does, and the others plan the same pieces
  (:meth:`PieceTables.span`);
- the first to reach a piece fetches, checks and transforms it; the others wait for that table and keep their rows
  of it (their place among the pieces in flight is held meanwhile; the first's piece has its own, so it never waits
  for them). A table is dropped once every kin task has taken it; at most :data:`KEPT_BYTES` are held, and the kin
  of a table not held read the piece alone: memory is bounded by that, never by the range;
- above the round's finalized block, the first reader hands on with the table what it saw of the chain while it
  read the piece (the piece's last block's hash before and after, and the block hashes of the answers other series
  read for it: :mod:`chainframe.engine._shared`), and each kin task adds those witnesses and the table's block
  hashes to its own chunk's, checked at its commit as if it had read the piece itself. A chunk read again because
  the chain moved forgets the tables of its blocks (:meth:`PieceTables.forget`) first. A task that verifies proves
  its own pieces and is nobody's kin.

A first reader whose piece fails hands nothing on: the others read the piece themselves, with their own retries and
checks, as if alone.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import anyio
import pyarrow as pa

from chainframe.datasets import DATASETS, BlockRange
from chainframe.engine._plan import ChunkTask

KEPT_BYTES = 64_000_000
"""Piece tables held for the kin still to read them, at most."""

Kin = tuple[str, str, str, int, int]
"""Tasks that read the same rows: the dataset, its filters but those that choose rows (as JSON), the u256 form, and
the blocks fetched (first, last)."""
Witness = tuple[int, bytes | None, bytes | None]
"""A block, its hash before and after a read (:attr:`~chainframe.engine._canonical.ChunkCheck.witnesses`)."""


def kin_of(task: ChunkTask) -> Kin | None:
    """``task``'s kin (None: its dataset keeps every row it reads, or it verifies)."""
    dataset = DATASETS[task.dataset]
    if task.verify or not dataset.keeps_by or not dataset.selects(task.filters):
        return None
    rest = {k: v for k, v in task.filters.items() if k not in dataset.keeps_by}
    return task.dataset, json.dumps(rest, sort_keys=True), task.u256, task.fetch_start, task.end


@dataclass(eq=False)
class _Entry:
    left: int
    """Kin tasks still to take it."""
    end: int
    ready: anyio.Event = field(default_factory=anyio.Event)
    rows: tuple[pa.Table, list[Witness]] | None = None


class PieceTables:
    """The pieces' tables of a round's kin tasks (see the module)."""

    def __init__(self, tasks: Iterable[ChunkTask], *, kept_bytes: int = KEPT_BYTES) -> None:
        counted = Counter(kin_of(task) for task in tasks)
        self._tasks = {kin: n for kin, n in counted.items() if kin is not None and n > 1}
        self._limit = kept_bytes
        self._bytes = 0
        self._plans: dict[Kin, dict[int, int]] = {}
        self._entries: dict[tuple[Kin, int], _Entry] = {}

    def kin(self, task: ChunkTask) -> Kin | None:
        """``task``'s kin, where the round has others of it (None: it reads its pieces alone)."""
        kin = kin_of(task)
        return kin if kin in self._tasks else None

    def span(self, kin: Kin, start: int, span: int) -> int:
        """The blocks of the kin's piece that starts at ``start``: as the first of them planned it, else ``span``
        (which it then plans for the others)."""
        end = self._plans.setdefault(kin, {}).setdefault(start, start + max(1, span) - 1)
        return end - start + 1

    async def take(self, kin: Kin, piece: BlockRange) -> tuple[tuple[pa.Table, list[Witness]] | None, bool]:
        """``(rows, False)``: the piece's rows read by another of the kin, with what it saw of the chain meanwhile;
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

    def give(self, kin: Kin, piece: BlockRange, rows: pa.Table | None, witnesses: list[Witness] | None = None) -> None:
        """The first reader's rows of ``piece`` and its witnesses (None: it failed, and the others read the piece
        alone). Once only: a second call changes nothing."""
        entry = self._entries.get((kin, piece.start))
        if entry is None or entry.ready.is_set():
            return
        if rows is not None and self._bytes + rows.nbytes <= self._limit:
            entry.rows = (rows, list(witnesses or ()))
            self._bytes += rows.nbytes
        entry.ready.set()

    def forget(self, blocks: BlockRange) -> None:
        """Drop the tables of pieces among ``blocks`` (a chunk read again because the chain moved): the next to ask
        reads the piece again; one still being read is handed on to nobody (its waiters read it alone)."""
        for key, entry in list(self._entries.items()):
            if key[1] <= blocks.end and entry.end >= blocks.start:
                self._drop(key)
                entry.ready.set()

    def _drop(self, key: tuple[Kin, int]) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None and entry.rows is not None:
            self._bytes -= entry.rows[0].nbytes
