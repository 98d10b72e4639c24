"""Which storage holds a location (a local disk, or S3), and what goes through it without knowing which."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe.store._file_types import exact_types, restore, sql_select
from chainframe.store._local import LOCAL
from chainframe.store._s3 import s3_storage
from chainframe.store._storage import Location, ObjectPath, Storage, location


def storage(where: Location) -> Storage:
    """The storage that holds ``where``."""
    if isinstance(where, ObjectPath):
        return s3_storage()
    return LOCAL


def write_bytes(path: Location, data: bytes) -> None:
    """Put ``data`` at ``path`` atomically (a small file: run reports)."""
    pending = storage(path).begin(path)
    try:
        pending.sink.write(data)
        pending.commit()
    except BaseException:
        pending.abort()
        raise


def read_batches(path: Location | str, **options: Any) -> Iterator[pa.RecordBatch]:
    """The rows of the Parquet file at ``path``, batch by batch (``options`` as for ``ParquetFile.iter_batches``),
    in chainframe's exact types (a Delta data file's too), streamed from its storage with page checksums verified."""
    path = location(path)
    with storage(path).open_input(path) as source:
        file = pq.ParquetFile(source, page_checksum_verification=True)
        footer = file.metadata.metadata
        for batch in file.iter_batches(**options):
            yield restore(batch, footer)


def read_table(path: Location | str, *, columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of the Parquet file at ``path`` (only ``columns``, if given: a name the file lacks is a
    ``KeyError``), whole, in chainframe's exact types (a Delta data file's too), with page checksums verified. The
    schema's metadata is the file's key-value metadata: a chunk's footer (:meth:`ChunkMeta.from_metadata`)."""
    path = location(path)
    with storage(path).open_input(path) as source:
        file = pq.ParquetFile(source, page_checksum_verification=True)
        missing = [c for c in columns or () if c not in file.schema_arrow.names]
        if missing:  # ParquetFile.read would leave it out without a word
            raise KeyError(f"{path.name} has no column {missing[0]!r}")
        footer = file.metadata.metadata or {}
        table = file.read(columns=columns)
    kept = {k: v for k, v in footer.items() if k != b"ARROW:schema"}  # the Arrow schema it was written in
    return restore(table.replace_schema_metadata(kept), footer)


def exact_types_of(path: Location | str) -> pa.Schema | None:
    """The exact types a chunk file's footer records for the columns it holds in others (None: none, or no
    footer): a Delta data file's ``uint64`` columns (:mod:`chainframe.store._file_types`). Reads the footer only."""
    path = location(path)
    footer = storage(path).footers([path])[0]
    return exact_types(footer.metadata) if footer is not None else None


def duckdb_query(files: Sequence[str]) -> str:
    """A DuckDB query of the rows of chunk files ``files`` (of one series) in chainframe's exact types: their
    ``read_parquet``, with a Delta data file's ``uint64`` columns given back (the types from the first file's footer).
    """
    listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    return f"SELECT {sql_select(exact_types_of(files[0]))} FROM read_parquet([{listed}])"  # noqa: S608 (quoted)
