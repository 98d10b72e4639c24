"""One piece's rows read once for the series of a round that keep different rows of them.

An ABI folder (``abi_dir=``) writes a series per function (``transactions__transfer__f..``,
``transactions__approve__f..``): each keeps other rows (:meth:`~chainframe.datasets.Dataset.kept_rows`) of the very
same blocks' transactions, so the rows before that choice are the same for all of them. Chunk tasks over the same
blocks whose series differ only in the filters their dataset declares as choosing rows
(:attr:`~chainframe.datasets.Dataset.keeps_by`) are *kin*; :class:`PieceTables` lets kin read each piece once:

- the first of them to plan its pieces sizes them as any task does, and the others plan the same pieces
  (:meth:`PieceTables.planned`);
- the first to reach a piece fetches, checks and transforms it; the others wait for that table and keep their rows
  of it (their place among the pieces in flight is held meanwhile; the first's piece has its own, so it never waits
  for them). A table is dropped once every kin task has taken it; at most :data:`KEPT_BYTES` are held, and the kin
  of a table not held read the piece alone: memory is bounded by that, never by the range;
- only pieces at or below the round's finalized block: above it each series reads the chain itself, for its chunk's
  witnesses (:mod:`chainframe.engine._shared`), so the kin's pieces are cut at the finalized block. A task that
  verifies proves its own pieces and is nobody's kin.

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
    ready: anyio.Event = field(default_factory=anyio.Event)
    table: pa.Table | None = None


class PieceTables:
    """The pieces' tables of a round's kin tasks (see the module)."""

    def __init__(self, tasks: Iterable[ChunkTask], *, through: int, kept_bytes: int = KEPT_BYTES) -> None:
        """``tasks``: the round's; ``through``: its finalized block."""
        counted = Counter(kin_of(task) for task in tasks)
        self._tasks = {kin: n for kin, n in counted.items() if kin is not None and n > 1}
        self._through = through
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
        cut at the finalized block (which it then plans for the others)."""
        plans = self._plans.setdefault(kin, {})
        end = plans.get(start)
        if end is None:
            end = start + max(1, span) - 1
            if start <= self._through < end:
                end = self._through
            plans[start] = end
        return end - start + 1

    def shared(self, piece: BlockRange) -> bool:
        """Whether kin read ``piece`` once (at or below the finalized block)."""
        return piece.end <= self._through

    async def take(self, kin: Kin, piece: BlockRange) -> tuple[pa.Table | None, bool]:
        """``(rows, False)``: the piece's rows, read by another of the kin; ``(None, True)``: this task reads them
        first and hands them on with :meth:`give`; ``(None, False)``: nobody hands them on, read them alone."""
        key = (kin, piece.start)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _Entry(left=self._tasks[kin] - 1)
            return None, True
        await entry.ready.wait()
        entry.left -= 1
        if entry.left <= 0:
            self._drop(key)
        return entry.table, False

    def give(self, kin: Kin, piece: BlockRange, table: pa.Table | None) -> None:
        """The first reader's rows of ``piece`` (None: it failed, and the others read the piece alone). Once only:
        a second call is no-op."""
        key = (kin, piece.start)
        entry = self._entries.get(key)
        if entry is None or entry.ready.is_set():
            return
        if table is not None and self._bytes + table.nbytes <= self._limit:
            entry.table = table
            self._bytes += table.nbytes
        entry.ready.set()

    def _drop(self, key: tuple[Kin, int]) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None and entry.table is not None:
            self._bytes -= entry.table.nbytes
