"""Where a chunk's rows go as they are decoded: in block order, one piece at a time, to a file or to memory.

Pieces of a chunk (answers covering disjoint block ranges) finish in any order. :class:`InOrder` hands each one on
once every block before it has been handed on, so the chunk comes out sorted without holding it whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pyarrow as pa

from chainframe.datasets import BlockRange

Write = Callable[[pa.Table], Awaitable[None]]


class InOrder:
    """Pass pieces of blocks ``start..`` to ``write`` in block order, whatever order they arrive in."""

    def __init__(self, start: int, write: Write) -> None:
        self._next = start
        self._waiting: dict[int, tuple[int, pa.Table]] = {}
        self._lock = anyio.Lock()
        self._write = write
        self.rows = 0

    async def put(self, piece: BlockRange, table: pa.Table) -> None:
        """Take the rows of blocks ``piece`` (already sorted); write them and any waiting pieces they unblock."""
        if piece.start < self._next or piece.start in self._waiting:
            raise ValueError(f"blocks {piece.start}..{piece.end} overlap a piece already taken")
        self._waiting[piece.start] = (piece.end, table)
        async with self._lock:
            while self._next in self._waiting:
                end, rows = self._waiting.pop(self._next)
                if rows.num_rows:
                    self.rows += rows.num_rows
                    await self._write(rows)
                self._next = end + 1

    @property
    def done_through(self) -> int:
        """The last block whose rows were handed on (``start - 1`` before any)."""
        return self._next - 1
