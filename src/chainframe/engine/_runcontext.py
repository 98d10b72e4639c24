"""What every round of an extraction shares (issue 38: "a run is one context"): the node it asks, the chain, the
output folder and its publisher (location and layout), the pacing, whether rows are proven, who runs the chunk tasks
and who is told of the progress.

One :class:`RunContext` is made per round by :meth:`chainframe.engine._extraction.Extraction.once` and handed whole
to :func:`chainframe.engine._run.extract_round`; what changes from round to round (the range, the head, the finalized
block, ``overwrite``) stays a parameter there. It lives in the coordinator's process: what runs on Dask workers are
the chunk tasks, each with its own :class:`~chainframe.engine._context.ChunkContext` built there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from chainframe.engine._engine import RunCounters, TaskRunner, run_tasks
from chainframe.engine._plan import ChunkTask
from chainframe.families import ChainFamily
from chainframe.store import Location, Publisher


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class RunContext(NamedTuple):
    """The fixed facts of one extraction's rounds."""

    client: Any
    """The node's client the round plans, checks and (through ``runner``) fetches with."""
    folder: Location
    """The output folder brought up to date."""
    publisher: Publisher
    """Commits the round's files into ``folder`` in its layout (one for every round of a follow)."""
    chain_id: int
    """The chain the endpoint serves: a folder of another chain is refused."""
    endpoint: str
    """The endpoint's name as recorded in each chunk's metadata (never its API key)."""
    concurrency: int
    """Chunks fetching at once."""
    counters: RunCounters
    """The run's report, counted as chunks are written."""
    verify: bool = False
    """Every row proven against its block's header before it is written."""
    runner: TaskRunner = run_tasks
    """Runs the chunk tasks: here, or on a Dask cluster."""
    on_tasks: Callable[[list[ChunkTask]], None] | None = None
    """Told of each round's planned tasks (the progress bar's total)."""
    on_chunk: Callable[[ChunkTask, int, bool], None] | None = None
    """Told of each chunk done: its task, rows and whether it was written."""
    family: ChainFamily | None = None
    """The chain family whose rules the rows are proven by, chosen once the chain id is known (``--chain-family``,
    else the chain id's); None: the chain id's. It rides on each verifying chunk task, by name, to where verify asks
    it (a Dask worker too)."""
