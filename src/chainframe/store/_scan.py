"""A series folder read as one lazy table: a Delta table at one snapshot, or a plain folder's chunk files."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from chainframe._errors import InputError
from chainframe.store._backends import storage
from chainframe.store._delta import declared_schema, is_table, snapshot_uris
from chainframe.store._storage import Location

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


def scan_series(path: Location, *, version: int | None = None, as_of: datetime | str | None = None) -> pl.LazyFrame:
    """The rows of the series folder ``path``, lazily: a Delta table at its latest version, ``version`` or the
    version current at ``as_of`` (its files are immutable: later commits do not change what the scan reads), with
    chainframe's exact column types; a plain folder's ``*.parquet`` glob."""
    if is_table(path):
        files = snapshot_uris(path, version=version, as_of=as_of)
        if not files:  # a table with no chunk yet: no rows, with the columns its log declares
            return pl.LazyFrame(pl.from_arrow(declared_schema(path).empty_table()))
        return pl.scan_parquet(files, schema=pl.scan_parquet(files[0]).collect_schema())
    if version is not None or as_of is not None:
        raise InputError(f"{path} is a plain Parquet folder: version= and as_of= read Delta tables (table='delta')")
    if not storage(path).files(path):
        raise InputError(f"{path} holds no chunk files")
    return pl.scan_parquet(f"{path}/*.parquet")
