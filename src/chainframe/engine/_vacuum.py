"""Freeing the space replaced chunk files take: old Delta files and killed runs' temporaries."""

from __future__ import annotations

from chainframe._errors import InputError
from chainframe.store import (
    DELTA_DATA,
    Location,
    clean_temporaries,
    folder_lock,
    is_delta_table,
    location,
    named_series_folders,
)
from chainframe.store import vacuum as store_vacuum

DEFAULT_RETENTION_HOURS = 168.0
"""How long a Delta table keeps the files a commit removed: a week, delta-rs' default (a reader holding an older
snapshot, or asking for one, needs them)."""


def vacuum(out: str | Location, *, retention_hours: float = DEFAULT_RETENTION_HOURS) -> dict[str, int]:
    """Free the space that replaced chunk files take: in each Delta table under ``out``, delete the files no longer
    in it that left it at least ``retention_hours`` ago (readers holding an older snapshot, or a time-travel query,
    need them until then), with the log entries past that retention; in Parquet folders, the temporaries of killed
    runs. Holds the folder's lock, as a run does. Returns the files deleted per series."""
    if not isinstance(retention_hours, int | float) or isinstance(retention_hours, bool) or retention_hours < 0:
        raise InputError(f"retention_hours must be a number of hours, 0 or more; got {retention_hours!r}")
    folder = location(out)
    found = named_series_folders(folder)
    if not found:
        raise InputError(f"{folder} holds no dataset folders; nothing to vacuum")
    deleted: dict[str, int] = {}
    with folder_lock(folder):
        for series in found:
            if is_delta_table(series):
                deleted[series.name] = len(store_vacuum(series, retention_hours=retention_hours))
                deleted[series.name] += clean_temporaries(series / DELTA_DATA)
            else:
                deleted[series.name] = clean_temporaries(series)
    return deleted
