"""Reading an output folder: a series' folder by dataset and filters, a lazy Polars scan of one series, DuckDB
views of them all."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from chainframe._errors import InputError
from chainframe.datasets import DATASETS, register_duckdb
from chainframe.engine._options import series_filters
from chainframe.engine._plan import check_datasets, check_filters
from chainframe.store import (
    Location,
    ObjectPath,
    duckdb_query,
    is_delta_table,
    load_series,
    location,
    s3_filesystem,
    scan_series,
    series_folders,
    series_name,
    snapshot_uris,
    storage,
)
from chainframe.store import series_folder as store_series_folder

if TYPE_CHECKING:
    import polars as pl


def series_folder(folder: str | Location, dataset: str, **filters: Any) -> Location:
    """The folder of the series of ``dataset`` with these filters (and ``u256``) under an output folder (a local
    path, or an ``s3://bucket/prefix`` URL)."""
    u256 = filters.pop("u256", "decimal")
    (dataset,) = check_datasets([dataset])
    return store_series_folder(folder, series_name(dataset, check_filters(dataset, filters), u256))


def scan(
    folder: str | Location, dataset: str, *, version: int | None = None, as_of: datetime | str | None = None,
    **filters: Any,
) -> pl.LazyFrame:  # fmt: skip
    """A lazy Polars scan of one series: ``dataset`` with the given filters (as given to ``extract``; and
    ``u256="binary"`` for that encoding) under an output folder (local, or ``s3://bucket/prefix``: Polars reads the
    bucket itself, with the same ``AWS_*`` settings). A series folder's name works as ``dataset`` too. Filters of
    several functions, which ``extract`` writes as a series each, scan them all as one frame (each function's
    columns null in the other's rows).

    A Delta series is read at one snapshot, with chainframe's exact column types: its latest version, ``version``,
    or the version current at ``as_of`` (a datetime or an ISO 8601 text); its files are immutable, so the scan reads
    that snapshot however many commits land while it runs."""
    root = location(folder)
    named = root / dataset
    path = named if dataset not in DATASETS and (is_delta_table(named) or storage(named).files(named)) else None
    if path is None:
        path, *more = _folders(root, dataset, filters)
        if more:
            if version is not None:
                raise InputError(f"version= is one Delta table's commit, and these filters read {len(more) + 1} "
                                 "series (a function each): scan each one, or give as_of=")  # fmt: skip
            import polars as pl  # deferred: the module is read by every run, which never scans

            frames = [scan(root, p.name, as_of=as_of) for p in [path, *more]]
            return pl.concat(frames, how="diagonal_relaxed")
    if not is_delta_table(path) and version is None and as_of is None and not storage(path).files(path):
        raise InputError(f"{path} holds no chunk files; extract {dataset!r} (with these filters) into {folder} first")
    return scan_series(path, version=version, as_of=as_of)


def _folders(root: Location, dataset: str, filters: dict[str, Any]) -> list[Location]:
    """The folders of the series ``extract`` writes with ``filters``: one, or one per function; a series of several
    functions an earlier chainframe wrote, where it is there."""
    u256 = filters.pop("u256", "decimal")
    (dataset,) = check_datasets([dataset])
    checked = check_filters(dataset, filters)
    whole = store_series_folder(root, series_name(dataset, checked, u256))
    each = series_filters(dataset, checked, filters)
    if len(each) == 1 or is_delta_table(whole) or storage(whole).files(whole):
        return [whole]
    return [store_series_folder(root, series_name(dataset, one, u256)) for one, _ in each]


def open_duckdb(folder: str | Location, connection: Any = None, *, as_of: datetime | str | None = None) -> Any:
    """A DuckDB connection with one view per series folder under ``folder`` (named as the folder: ``logs``,
    ``logs__f1a2b3c4d``, ...) and the ``hex0x`` macros. For ``s3://bucket/prefix``, the connection reads the bucket
    through the store's S3 file system (s3fs, registered with DuckDB), so no DuckDB extension is downloaded.

    A Delta series' view reads the files of one snapshot (its latest version, or the one current at ``as_of``):
    queries keep reading it while later commits land (call ``open_duckdb`` again to see them). Its columns have
    chainframe's types, as a plain folder's (its files hold ``uint64`` as ``int64``; the view gives them back)."""
    import duckdb

    con = connection or duckdb.connect()
    register_duckdb(con)
    root = location(folder)
    found = series_folders(root)
    if not found:
        raise InputError(f"{folder} holds no dataset folders with chunk files")
    if isinstance(root, ObjectPath) and "s3" not in con.list_filesystems():
        con.register_filesystem(s3_filesystem())
    for path in found:
        if is_delta_table(path):
            files = snapshot_uris(path, as_of=as_of)
        else:
            series = load_series(path)  # the chunks by their footers: a glob would read any Parquet file put there too
            if series.foreign:
                import warnings

                names = ", ".join(p.name for p, _ in series.foreign)
                warnings.warn(f"{path}: left out of view {path.name!r}, not chunks of it: {names}", stacklevel=2)
            files = [str(c.path) for c in series.chunks]
        if files:  # a Delta table's files hold uint64 as int64: the query gives chainframe's types back
            con.execute(f'CREATE OR REPLACE VIEW "{path.name}" AS {duckdb_query(files)}')
    return con
