"""The extraction engine: block ranges, chunk planning, splitting, atomic Parquet files, resume, progress and
reports, behind ``extract`` (files) and ``collect`` (in memory), with async variants."""

from chainframe.engine._api import acollect, aextract, collect, extract, open_duckdb, scan
from chainframe.engine._files import ChunkMeta, folder_info
from chainframe.engine._plan import ChunkTask
from chainframe.engine._ranges import RangeSpec, parse_range
from chainframe.engine._report import RunReport

__all__ = [
    "ChunkMeta",
    "ChunkTask",
    "RangeSpec",
    "RunReport",
    "acollect",
    "aextract",
    "collect",
    "extract",
    "folder_info",
    "open_duckdb",
    "parse_range",
    "scan",
]
