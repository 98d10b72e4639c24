"""The dataset store: series folders of chunk files, one file per slot of blocks, each written atomically and
describing itself (range, hashes for reorganization checks, filters) in its footer; what a folder holds; one writer
per folder. The engine plans, fetches and decodes; everything about files lives here."""

from chainframe.store._chunks import (
    SCHEMA_VERSION,
    BlockSpan,
    ChunkMeta,
    ChunkWriter,
    canonical_filters,
    chunk_path,
    clean_temporaries,
    filters_digest,
    read_meta,
    slot_of,
    write_chunk,
)
from chainframe.store._info import folder_info, format_info, series_json
from chainframe.store._lock import FolderLock
from chainframe.store._series import (
    Series,
    StoredChunk,
    dataset_of,
    gaps_between,
    linked,
    load_series,
    merge_ranges,
    series_folders,
    series_name,
)

__all__ = [
    "SCHEMA_VERSION",
    "BlockSpan",
    "ChunkMeta",
    "ChunkWriter",
    "FolderLock",
    "Series",
    "StoredChunk",
    "canonical_filters",
    "chunk_path",
    "clean_temporaries",
    "dataset_of",
    "filters_digest",
    "folder_info",
    "format_info",
    "gaps_between",
    "linked",
    "load_series",
    "merge_ranges",
    "read_meta",
    "series_folders",
    "series_json",
    "series_name",
    "slot_of",
    "write_chunk",
]
