"""The output folder made ready for a run: checked writable before any request, and cleared of the temporaries
killed runs left (under the folder's lock)."""

from __future__ import annotations

from pathlib import Path

from chainframe.store import (
    DELTA_DATA,
    Location,
    clean_temporaries,
    is_delta_table,
    named_series_folders,
    reports_folder,
    storage,
)


def check_out(folder: Location) -> None:
    """The output folder is a folder (or S3 prefix) we can write into, checked before any request is sent and
    leaving nothing behind."""
    storage(folder).check_writable(folder)


def prepare_out(folder: Location) -> None:
    if isinstance(folder, Path):
        folder.mkdir(parents=True, exist_ok=True)
        clean_temporaries(reports_folder(folder))  # a run report's, when a run was killed saving it
    for series in named_series_folders(folder):  # a folder with a temporary and no file yet too
        clean_temporaries(series)  # left by killed runs (we hold the folder's lock: no run is writing)
        if is_delta_table(series):
            clean_temporaries(series / DELTA_DATA)
