"""Which storage holds a location (a local disk, or S3), and what goes through it without knowing which."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe.store._storage import Location, ObjectPath, Storage, location


def storage(where: Location) -> Storage:
    """The storage that holds ``where``."""
    if isinstance(where, ObjectPath):
        from chainframe.store._s3 import s3_storage

        return s3_storage()
    from chainframe.store._local import LOCAL

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
    streamed from its storage with page checksums verified."""
    path = location(path)
    with storage(path).open_input(path) as source:
        yield from pq.ParquetFile(source, page_checksum_verification=True).iter_batches(**options)
