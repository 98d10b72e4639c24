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


def _holds_files(folder: Location) -> bool:
    return is_table(folder) or bool(storage(folder).files(folder))


class Publisher:
    """A run's coordinator's publishing of chunk files into the series under ``out`` (see the module docstring).
    Thread-safe: chunks finish on several threads."""

    def __init__(self, out: Location, layout: Layout) -> None:
        self.out, self.layout = location(out), layout
        self._writers: dict[str, DeltaWriter] = {}
        self._commits = threading.Lock()

    def claim(self, folders: Sequence[Location], schemas: dict[str, pa.Schema] | None = None) -> None:
        """Take over the Delta tables at ``folders`` now (creating those with a schema in ``schemas`` that do not
        exist yet), so any older run's commit there is refused from this moment on."""
        if self.layout != "delta":
            return
        for folder in folders:
            with self._commits:
                self._writer(folder, (schemas or {}).get(folder.name))

    def publish(self, written: Written) -> None:
        """Make ``written`` its slot's file."""
        if self.layout == "parquet":
            assert written.staged is not None, written.path
            storage(location(written.path)).publish(written.staged)
            return
        path = location(written.path)
        with self._commits:  # one commit at a time: two of one run's commits would conflict with each other
            self._writer(path.parent.parent, None).publish(written)

    def delete(self, paths: Sequence[str]) -> None:
        """Remove these slots' files (blocks above a head that moved back)."""
        for text in paths:
            path = location(text)
            if self.layout == "parquet":
                storage(path).delete(path)
            else:
                with self._commits:
                    self._writer(path.parent.parent, None).delete([path])

    def _writer(self, folder: Location, schema: pa.Schema | None) -> DeltaWriter:
        """Called holding ``_commits``."""
        writer = self._writers.get(str(folder))
        if writer is None:
            if schema is None and not is_table(folder):
                raise InputError(f"{folder} is not a Delta table yet and no schema was given to create it")
            writer = DeltaWriter(folder, schema, name=folder.name)
            self._writers[str(folder)] = writer
        return writer
