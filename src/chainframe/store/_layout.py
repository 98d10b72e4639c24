"""Where each thing lives in an output folder (issue 38: "the store owns the folder"). Every path of the folder is
named here, and the engine, decode and the store's other modules ask for them instead of joining or climbing paths::

    OUT/
      SERIES/                   one dataset (with its filters and u256 form), e.g. logs or logs__address_0x...
        CHUNK.parquet           a Parquet folder's files, one per slot
        _delta_log/, data/      or a Delta table: its log and its data files
      .chainframe/
        lock                    held while a run writes into OUT (a local folder)
        lease                   the same for a bucket: a lease object renewed while a run writes
        runs/STAMP.json         each run's report (follow-STAMP.json: a follow's rolling one)
        check-TOKEN             a bucket's write probe, removed at once

A function takes and returns the same kind of path: a local :class:`~pathlib.Path` or an
:class:`~chainframe.store.ObjectPath`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar, cast

from chainframe.store._storage import ObjectPath

P = TypeVar("P", bound=Path | ObjectPath)

STATE = ".chainframe"
"""The folder's own state, beside its series (a name no series can take: series names start with a dataset's)."""


def state_folder(out: P) -> P:
    """``OUT/.chainframe``."""
    return cast(P, out / STATE)


def lock_path(out: P) -> P:
    """``OUT/.chainframe/lock``: held while a run writes into a local ``OUT``."""
    return cast(P, state_folder(out) / "lock")


def lease_path(out: P) -> P:
    """``OUT/.chainframe/lease``: a bucket's lease object."""
    return cast(P, state_folder(out) / "lease")


def reports_folder(out: P) -> P:
    """``OUT/.chainframe/runs``: the runs' reports."""
    return cast(P, state_folder(out) / "runs")


def report_path(out: P, stamp: str, *, follow: bool = False) -> P:
    """``OUT/.chainframe/runs/STAMP.json`` (``follow-STAMP.json``: a follow's one rolling report)."""
    return cast(P, reports_folder(out) / f"{'follow-' if follow else ''}{stamp}.json")


def probe_path(out: P, token: str) -> P:
    """``OUT/.chainframe/check-TOKEN``: written and removed to learn that a bucket takes writes."""
    return cast(P, state_folder(out) / f"check-{token}")


def series_path(out: P, series: str) -> P:
    """``OUT/SERIES``: a series' folder (``series``: a :func:`~chainframe.store.series_name`)."""
    return cast(P, out / series)


def series_of_file(path: P, layout: str) -> P:
    """The series folder a chunk's file is in (a Delta table's data files are in its ``data/``); ``layout``: a
    :data:`~chainframe.store.Layout`, as a string so this module needs no other of the store's."""
    folder = path.parent
    return cast(P, folder if layout == "parquet" else folder.parent)
