"""What every chunk of one round of a run shares: the node it asks, the chain it reads, where the chain is final, the
pacing of its pieces and the threads that decode them (issue 38: "a run is one context").

One :class:`ChunkContext` is made per round by :func:`chainframe.engine._run.extract_round` (or per Dask worker task by
:class:`chainframe.engine._dask.DaskRunner`) and handed whole to the round's task runner
(:func:`~chainframe.engine._engine.run_tasks` or the Dask runner), :func:`~chainframe.engine._engine.run_chunk`, its
attempts and :func:`~chainframe.engine._engine.fetch_and_decode`, so those signatures name it once instead of
repeating five parameters. It lives in one process: Dask ships tasks and plain values to its workers, never this
object (a worker builds its own from its client, state and decode threads).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from chainframe.engine._logs import SplitState


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class ChunkContext(NamedTuple):
    """The round's shared facts, as the chunks of one round read them."""

    client: Any
    """The node's client the chunks fetch with (the run's :class:`~chainframe.engine._shared.SharedAnswers` for a
    task that verifies on its own, so each block's answers are read once)."""
    chain_id: int
    """The chain the rows belong to, written into each chunk's metadata and checked in proofs."""
    endpoint: str
    """The endpoint's name as recorded in each chunk's metadata (never its API key)."""
    finalized: int
    """The node's finalized block at the round's start: rows at or below it need no witness of the chain."""
    state: SplitState
    """The run's pacing: how pieces are split and how many are in flight across chunks."""
    decode: Any
    """The capacity limiter of the threads that decode answers (shared with other rounds on a Dask worker)."""
    pieces: Any = None
    """The round's :class:`~chainframe.engine._pieces.PieceTables`: pieces read once for series that keep different
    rows of them (None: each reads its own)."""

    def asking(self, client: Any) -> ChunkContext:
        """The same round, fetching with ``client``."""
        return self if client is self.client else self._replace(client=client)
