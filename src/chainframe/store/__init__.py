"""The dataset store: series folders of chunk files, one file per slot of blocks, each written atomically and
describing itself (range, hashes for reorganization checks, filters) in its footer; what a folder holds; one writer
per folder. A folder is a local path or an S3 prefix (``s3://bucket/prefix``), both behind one small interface
(:mod:`chainframe.store._storage`). The engine plans, fetches and decodes; everything about files lives here."""

from chainframe.store._backends import duckdb_query, read_batches, read_table, storage, write_bytes
from chainframe.store._chunks import (
    SCHEMA_VERSION,
    BlockSpan,
    ChunkMeta,
    ChunkWriter,
    Written,
    canonical_filters,
    chunk_path,
    clean_temporaries,
    filters_digest,
    read_meta,
    slot_of,
    write_chunk,
)
from chainframe.store._delta import DATA as DELTA_DATA
from chainframe.store._delta import Layout, data_file, snapshot_uris, vacuum
from chainframe.store._delta import declared_schema as delta_schema
from chainframe.store._delta import is_table as is_delta_table
from chainframe.store._delta import version as table_version
from chainframe.store._export import FORMATS, ExportFormat, check_compression, export, export_path
from chainframe.store._info import folder_info, format_info, other_files, series_json
from chainframe.store._layout import (
    lease_path,
    lock_path,
    probe_path,
    report_path,
    reports_folder,
    series_of_file,
    series_path,
    state_folder,
)
from chainframe.store._lease import ObjectLease
from chainframe.store._lock import FolderLock, folder_lock, while_held
from chainframe.store._publish import Planned, Publisher, choose_layout
from chainframe.store._s3 import s3_filesystem
from chainframe.store._scan import scan_series
from chainframe.store._series import (
    Series,
    StoredChunk,
    dataset_of,
    gaps_between,
    legacy_name,
    linked,
    load_series,
    merge_ranges,
    named_series_folders,
    series_folder,
    series_folders,
    series_name,
    stored_series,
)
from chainframe.store._storage import LeaseLost, Location, ObjectPath, Staged, StoreError, Superseded, location

__all__ = [
    "lease_path",
    "lock_path",
    "probe_path",
    "report_path",
    "reports_folder",
    "series_of_file",
    "series_path",
    "state_folder",
    "DELTA_DATA",
    "FORMATS",
    "SCHEMA_VERSION",
    "BlockSpan",
    "ChunkMeta",
    "ChunkWriter",
    "FolderLock",
    "LeaseLost",
    "Layout",
    "Location",
    "ObjectLease",
    "ObjectPath",
    "Planned",
    "Publisher",
    "Series",
    "Staged",
    "StoreError",
    "StoredChunk",
    "Superseded",
    "Written",
    "ExportFormat",
    "canonical_filters",
    "check_compression",
    "choose_layout",
    "chunk_path",
    "clean_temporaries",
    "data_file",
    "dataset_of",
    "delta_schema",
    "duckdb_query",
    "export",
    "export_path",
    "filters_digest",
    "folder_info",
    "folder_lock",
    "while_held",
    "format_info",
    "other_files",
    "gaps_between",
    "is_delta_table",
    "legacy_name",
    "linked",
    "load_series",
    "location",
    "merge_ranges",
    "named_series_folders",
    "read_batches",
    "read_meta",
    "read_table",
    "s3_filesystem",
    "scan_series",
    "series_folder",
    "series_folders",
    "series_json",
    "series_name",
    "slot_of",
    "snapshot_uris",
    "storage",
    "stored_series",
    "table_version",
    "vacuum",
    "write_bytes",
    "write_chunk",
]
