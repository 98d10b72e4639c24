"""Publishing: making a written chunk file part of its series, done by a run's coordinator alone.

Workers (chunk tasks in this process or on Dask) only *write*: a whole file, not visible to any reader yet, handed
back as a :class:`~chainframe.store.Written`. The :class:`Publisher` of the run, made while the run holds the output's
lock (or lease), makes it visible:

- a Parquet folder: the staged temporary renamed over the slot's name (local) or uploaded as the slot's object (S3);
  the folder's lock makes this fenced by construction on a local disk (a killed coordinator renames nothing; a
  paused one still holds the lock). A staged S3 spool lives in the process that wrote it, so a Parquet folder on S3
  is written by one process (a Dask run there is refused before it starts: :func:`choose_layout`);
- a Delta table: one fenced commit per chunk (:class:`~chainframe.store._delta.DeltaWriter`); a run that lost the
  output to another run gets :class:`~chainframe.store.Superseded` and publishes nothing more.

Which layout an output folder has is decided once, before any request (:func:`choose_layout`): what it holds, else
what was asked, else Delta for ``s3://`` and Parquet for a local folder.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from chainframe._errors import InputError
from chainframe.store._chunks import Written
from chainframe.store._delta import LAYOUTS, DeltaWriter, Layout, is_table
from chainframe.store._series import named_series_folders
from chainframe.store._storage import Location, ObjectPath, location, storage


def choose_layout(out: Location | str, table: str | None, *, distributed: bool = False) -> Layout:
    """The layout of the series under ``out``: the one they have, else ``table``, else Delta on S3 and Parquet on a
    local disk. Refuses an asked layout that differs from what is there, and a Dask run into Parquet on S3."""
    out = location(out)
    if table is not None and table not in LAYOUTS:
        raise InputError(f"table must be one of {', '.join(LAYOUTS)}; got {table!r}")
    held = {("delta" if is_table(p) else "parquet") for p in named_series_folders(out) if _holds_files(p)}
    if len(held) > 1:
        raise InputError(f"{out} holds both Parquet folders and Delta tables; extract into another --out")
    if held:
        (found,) = held
        if table is not None and table != found:
            raise InputError(
                f"{out} holds {'Delta tables' if found == 'delta' else 'plain Parquet folders'}; extract with "
                f"--table {found} (table={found!r}), or into another --out"
            )
        chosen: Layout = "delta" if found == "delta" else "parquet"
    elif table is not None:
        chosen = "delta" if table == "delta" else "parquet"
    else:
        chosen = "delta" if isinstance(out, ObjectPath) else "parquet"
    if distributed and chosen == "parquet" and isinstance(out, ObjectPath):
        raise InputError(
            f"a Dask run cannot write plain Parquet into {out}: only the coordinator can make chunks visible, and on "
            "S3 that layout's chunks cannot leave the process that wrote them; use --table delta (table='delta'), "
            "which commits the workers' files safely"
        )
    return chosen


@dataclass(frozen=True)
class Planned:
    """A slot a round writes: its series folder, its first block, and whether it repairs a reorganization."""

    series: str
    slot: int
    repair: bool


@dataclass
class _Queue:
    slots: list[int] = field(default_factory=list)
    together: set[int] = field(default_factory=set)
    """A repair's slots: published in one commit, so no version holds two forks."""
    done: dict[int, Written] = field(default_factory=dict)
    next: int = 0
    """Index in ``slots`` of the lowest slot not yet published."""

    def ready(self) -> list[int]:
        """The slots to publish now: the done ones from ``next`` on, up to the first missing; cut before a repair's
        slots unless all of them are among these."""
        run: list[int] = []
        for slot in self.slots[self.next :]:
            if slot not in self.done:
                break
            run.append(slot)
        if self.together and not self.together <= set(self.slots[: self.next]) | set(run):
            first = next((i for i, slot in enumerate(run) if slot in self.together), len(run))
            run = run[:first]
        return run


def _holds_files(folder: Location) -> bool:
    return is_table(folder) or bool(storage(folder).files(folder))


class Publisher:
    """A run's coordinator's publishing of chunk files into the series under ``out`` (see the module docstring).
    Thread-safe: chunks finish on several threads."""

    def __init__(self, out: Location, layout: Layout) -> None:
        self.out, self.layout = location(out), layout
        self._writers: dict[str, DeltaWriter] = {}
        self._queues: dict[str, _Queue] = {}
        """Per series folder: the slots the round writes, in block order, and the files done but held back."""
        self._locks: dict[str, threading.Lock] = {}
        """Per series folder, held from a file's arrival to its commit: one commit at a time per table (two of one
        run's commits to a table would conflict with each other), in block order; tables commit side by side."""
        self._guard = threading.Lock()

    def claim(self, folders: Sequence[Location], schemas: dict[str, pa.Schema] | None = None) -> None:
        """Take over the Delta tables at ``folders`` now (creating those with a schema in ``schemas`` that do not
        exist yet), so any older run's commit there is refused from this moment on."""
        if self.layout != "delta":
            return
        for folder in folders:
            with self._lock(str(folder)):
                self._writer(folder, (schemas or {}).get(folder.name))

    def expect(self, plan: Sequence[Planned]) -> None:
        """The slots a round is about to write: their files are then published in block order per series, each
        commit a run of consecutive slots from the lowest not yet published, and a reorg repair's slots all in one
        commit. So every version a reader can see is a table a finished run could have left: no gap where an
        extension crosses a slot's end, no two forks where a repair spans two slots."""
        for planned in plan:
            with self._lock(planned.series):
                queue = self._queues.setdefault(planned.series, _Queue())
                queue.slots.append(planned.slot)
                queue.slots.sort()
                if planned.repair:
                    queue.together.add(planned.slot)

    def publish(self, written: Written) -> None:
        """Make ``written`` its slot's file: now, or with the slots below it that the round still writes."""
        series, slot = str(self._series(written)), written.meta.slot[0]
        with self._lock(series):
            queue = self._queues.get(series)
            if queue is None or slot not in queue.slots[queue.next :]:
                self._publish(series, [written])  # not planned in order (a caller of its own)
                return
            queue.done[slot] = written
            ready = queue.ready()
            if ready:
                self._publish(series, [queue.done.pop(s) for s in ready])
                queue.next += len(ready)
            if queue.next == len(queue.slots):
                del self._queues[series]

    def _publish(self, series: str, files: list[Written]) -> None:
        """Publish ``files`` (consecutive slots of one series, in block order): one Delta commit, or renames."""
        if self.layout == "delta":
            self._writer(location(series), None).publish(files)
            return
        for written in files:
            assert written.staged is not None, written.path
            storage(location(written.path)).publish(written.staged)

    def _series(self, written: Written) -> Location:
        parent = location(written.path).parent
        return parent.parent if self.layout == "delta" else parent

    def delete(self, paths: Sequence[str]) -> None:
        """Remove these slots' files (blocks above a head that moved back)."""
        for text in paths:
            path = location(text)
            if self.layout == "parquet":
                storage(path).delete(path)
            else:
                with self._lock(str(path.parent.parent)):
                    self._writer(path.parent.parent, None).delete([path])

    def _lock(self, series: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(series, threading.Lock())

    def _writer(self, folder: Location, schema: pa.Schema | None) -> DeltaWriter:
        """Called holding the series' lock."""
        writer = self._writers.get(str(folder))
        if writer is None:
            if schema is None and not is_table(folder):
                raise InputError(f"{folder} is not a Delta table yet and no schema was given to create it")
            writer = DeltaWriter(folder, schema, name=folder.name)
            self._writers[str(folder)] = writer
        return writer
