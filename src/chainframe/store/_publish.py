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
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple

import pyarrow as pa

from chainframe._errors import InputError
from chainframe.store._backends import storage
from chainframe.store._chunks import Written
from chainframe.store._delta import LAYOUTS, DeltaWriter, Layout, is_table
from chainframe.store._series import series_folders
from chainframe.store._storage import Location, ObjectPath, location


def choose_layout(out: Location | str, table: str | None, *, distributed: bool = False) -> Layout:
    """The layout of the series under ``out``: the one they have, else ``table``, else Delta on S3 and Parquet on a
    local disk. Refuses an asked layout that differs from what is there, and a Dask run into Parquet on S3."""
    out = location(out)
    if table is not None and table not in LAYOUTS:
        raise InputError(f"table must be one of {', '.join(LAYOUTS)}; got {table!r}")
    held = {("delta" if is_table(p) else "parquet") for p in series_folders(out)}
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


class Planned(NamedTuple):
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


class Publisher:
    """A run's coordinator's publishing of chunk files into the series under ``out`` (see the module docstring).

    Commits happen on one thread per series (its *committer*), off the path of the chunk tasks that hand files in:
    a task goes on to its next chunk while its file is committed, tables commit side by side, and one series' commits
    stay in order. :meth:`flush` waits for them (a round calls it before it looks at the folder again) and raises the
    first failure; a failure also stops the next :meth:`publish`. :meth:`abandon` drops what is queued and waits for
    the commit in flight, which lands whole or not at all."""

    def __init__(self, out: Location, layout: Layout) -> None:
        self.out, self.layout = location(out), layout
        self._writers: dict[str, DeltaWriter] = {}
        self._queues: dict[str, _Queue] = {}
        """Per series folder: the slots the round writes, in block order, and the files done but held back."""
        self._committers: dict[str, ThreadPoolExecutor] = {}
        self._outbox: dict[str, list[Written]] = {}
        """Per series: files ready to commit, in block order, waiting for the series' committer."""
        self._draining: set[str] = set()
        """Series with a committer job queued that has not yet taken its outbox."""
        self._pending: list[Future[None]] = []
        self._failure: BaseException | None = None
        self._guard = threading.RLock()
        """Held to read or change the queues and to hand a commit to a committer (so one series' commits are handed
        in block order); re-entered by :meth:`_submit`."""

    def claim(self, folders: Sequence[Location], schemas: dict[str, pa.Schema] | None = None) -> None:
        """Take over the Delta tables at ``folders`` now (creating those with a schema in ``schemas`` that do not
        exist yet), so any older run's commit there is refused from this moment on."""
        if self.layout != "delta":
            return
        claims = [self._submit(str(f), partial(self._writer, f, (schemas or {}).get(f.name))) for f in folders]
        for claimed in claims:
            claimed.result()

    def expect(self, plan: Sequence[Planned]) -> None:
        """The slots a round is about to write: their files are then published in block order per series, each
        commit a run of consecutive slots from the lowest not yet published, and a reorg repair's slots all in one
        commit. So every version a reader can see is a table a finished run could have left: no gap where an
        extension crosses a slot's end, no two forks where a repair spans two slots."""
        with self._guard:
            for planned in plan:
                queue = self._queues.setdefault(planned.series, _Queue())
                queue.slots.append(planned.slot)
                queue.slots.sort()
                if planned.repair:
                    queue.together.add(planned.slot)

    def publish(self, written: Written) -> None:
        """Make ``written`` its slot's file: queued for its series' committer now, or with the slots below it that
        the round still writes. A file the round did not plan is published before this returns."""
        self._raise_failure()
        series, slot = str(self._series(written)), written.meta.slot[0]
        with self._guard:
            queue = self._queues.get(series)
            planned = queue is not None and slot in queue.slots[queue.next :]
            ready: list[Written] = []
            if queue is not None and planned:
                queue.done[slot] = written
                slots = queue.ready()
                ready = [queue.done.pop(s) for s in slots]
                queue.next += len(slots)
                if queue.next == len(queue.slots):
                    del self._queues[series]
            if ready:
                # Into the series' outbox; a committer job takes all the outbox holds when it starts, so files that
                # finish while a commit is in flight go out together in the next one (fewer, larger commits).
                self._outbox.setdefault(series, []).extend(ready)
                if series not in self._draining:
                    self._draining.add(series)
                    self._submit(series, partial(self._drain, series))
        if not planned:
            self._submit(series, lambda: self._publish(series, [written])).result()

    def _drain(self, series: str) -> None:
        with self._guard:
            files = self._outbox.pop(series, [])
            self._draining.discard(series)
        if files:
            self._publish(series, files)

    def flush(self) -> None:
        """Wait for every queued commit; raise the first failure."""
        with self._guard:
            pending, self._pending = self._pending, []
        for future in pending:
            future.exception()
        self._raise_failure()

    def abandon(self, timeout: float = 30.0) -> None:
        """Drop the queued commits (their files stay unpublished) and wait up to ``timeout`` seconds for those in
        flight (each lands whole or not at all)."""
        with self._guard:
            pending, self._pending = self._pending, []
            self._queues.clear()
            self._outbox.clear()
            self._draining.clear()
        for future in pending:
            future.cancel()
        wait([f for f in pending if not f.cancelled()], timeout=timeout)

    def delete(self, paths: Sequence[str]) -> None:
        """Remove these slots' files (blocks above a head that moved back), before this returns."""
        for text in paths:
            path = location(text)
            if self.layout == "parquet":
                storage(path).delete(path)
            else:
                series = path.parent.parent
                self._submit(str(series), partial(self._delete, series, path)).result()

    def _delete(self, series: Location, path: Location) -> None:
        self._writer(series, None).delete([path])

    def _publish(self, series: str, files: list[Written]) -> None:
        """Publish ``files`` (consecutive slots of one series, in block order): one Delta commit, or renames.
        Runs on the series' committer."""
        if self.layout == "delta":
            self._writer(location(series), None).publish(files)
            return
        for written in files:
            assert written.staged is not None, written.path
            storage(location(written.path)).publish(written.staged)

    def _submit(self, series: str, job: Callable[[], object]) -> Future[None]:
        def run() -> None:
            if self._failure is None:  # after a failure nothing more is committed
                job()

        with self._guard:
            committer = self._committers.get(series)
            if committer is None:
                committer = self._committers[series] = ThreadPoolExecutor(1, thread_name_prefix="chainframe-commit")
            future = committer.submit(run)
            self._pending.append(future)
        future.add_done_callback(self._failed)
        return future

    def _failed(self, future: Future[None]) -> None:
        if not future.cancelled() and future.exception() is not None and self._failure is None:
            self._failure = future.exception()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _series(self, written: Written) -> Location:
        parent = location(written.path).parent
        return parent.parent if self.layout == "delta" else parent

    def _writer(self, folder: Location, schema: pa.Schema | None) -> DeltaWriter:
        """The series' writer (made on first use: it claims or creates the table). Runs on the series' committer."""
        writer = self._writers.get(str(folder))
        if writer is None:
            if schema is None and not is_table(folder):
                raise InputError(f"{folder} is not a Delta table yet and no schema was given to create it")
            writer = DeltaWriter(folder, schema, name=folder.name)
            self._writers[str(folder)] = writer
        return writer
