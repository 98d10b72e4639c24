"""A series folder read as one lazy table: a Delta table at one snapshot, or a plain folder's chunk files."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from chainframe._errors import InputError
from chainframe.store._backends import exact_types_of, storage
from chainframe.store._delta import DATA, declared_schema, is_table, snapshot_uris
from chainframe.store._file_types import polars_restore
from chainframe.store._storage import Location

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


def scan_series(path: Location, *, version: int | None = None, as_of: datetime | str | None = None) -> pl.LazyFrame:
    """The rows of the series folder ``path``, lazily: a Delta table at its latest version, ``version`` or the
    version current at ``as_of`` (its files are immutable: later commits do not change what the scan reads), with
    chainframe's exact column types (its files hold ``uint64`` as ``int64``: :mod:`chainframe.store._file_types`);
    a plain folder's ``*.parquet`` glob."""
    if is_table(path):
        files = snapshot_uris(path, version=version, as_of=as_of)
        if version is not None or as_of is not None:
            _still_there(path, files, f"version {version}" if version is not None else f"the version as of {as_of}")
        if not files:  # a table with no chunk yet: no rows, with the columns its log declares
            return pl.LazyFrame(pl.from_arrow(declared_schema(path).empty_table()))
        held = pl.scan_parquet(files, schema=pl.scan_parquet(files[0]).collect_schema())
        return held.with_columns(polars_restore(exact_types_of(files[0])))
    if version is not None or as_of is not None:
        raise InputError(f"{path} is a plain Parquet folder: version= and as_of= read Delta tables (table='delta')")
    if not storage(path).files(path):
        raise InputError(f"{path} holds no chunk files")
    return pl.scan_parquet(f"{path}/*.parquet")


def _still_there(path: Location, files: list[str], which: str) -> None:
    """An old version's files may have been deleted by ``vacuum``: say so now, in words, rather than let the scan
    fail on the first missing file when it is collected. One listing of the table's data folder."""
    present = {e.path.name for e in storage(path).files(path / DATA)}
    gone = [f for f in files if f.rsplit("/", 1)[-1] not in present]
    if gone:
        raise InputError(
            f"{which} of {path} can no longer be read: {len(gone)} of its {len(files)} files were deleted by vacuum "
            "(chainframe vacuum removes what no version after its retention window names); read the latest version, "
            "or one written since the vacuum"
        )
