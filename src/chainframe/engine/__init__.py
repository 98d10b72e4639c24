"""The extraction engine: block ranges, chunk planning, splitting, checks against the chain, reorg repair, progress
and reports, behind ``extract`` (files), ``follow`` (files kept up to date) and ``collect`` (in memory), with async
variants. The files themselves are the store's (:mod:`chainframe.store`)."""

from chainframe.engine._abi_dir import AbisResolved, checked_folder, decoding_json, resolve_abis
from chainframe.engine._api import (
    aextract,
    afollow,
    aoff_chain,
    arepair,
    collect,
    extract,
    follow,
    off_chain,
    plan,
    repair,
    verify_stored,
)
from chainframe.engine._client import endpoint_of
from chainframe.engine._collect import acollect
from chainframe.engine._logs import Density, predict_calls, sample_density
from chainframe.engine._plan import ChunkTask
from chainframe.engine._probe import Capabilities, aprobe, node_table, preflight, preflight_methods, probe
from chainframe.engine._ranges import BlockSpec, RangeSpec, parse_blocks, parse_range, resolve_blocks
from chainframe.engine._read import open_duckdb, scan, series_folder
from chainframe.engine._report import RunReport
from chainframe.engine._runplan import RunPlan, SeriesPlan, aplan
from chainframe.engine._vacuum import DEFAULT_RETENTION_HOURS, vacuum
from chainframe.engine._verified import verify_reads
from chainframe.store import ChunkMeta, folder_info

__all__ = [
    "AbisResolved",
    "BlockSpec",
    "Capabilities",
    "ChunkMeta",
    "ChunkTask",
    "DEFAULT_RETENTION_HOURS",
    "Density",
    "RangeSpec",
    "RunPlan",
    "RunReport",
    "SeriesPlan",
    "acollect",
    "aextract",
    "afollow",
    "aoff_chain",
    "aplan",
    "aprobe",
    "arepair",
    "checked_folder",
    "collect",
    "decoding_json",
    "endpoint_of",
    "extract",
    "folder_info",
    "follow",
    "node_table",
    "off_chain",
    "open_duckdb",
    "parse_blocks",
    "parse_range",
    "plan",
    "predict_calls",
    "preflight",
    "preflight_methods",
    "probe",
    "repair",
    "resolve_abis",
    "resolve_blocks",
    "sample_density",
    "scan",
    "series_folder",
    "vacuum",
    "verify_reads",
    "verify_stored",
]
