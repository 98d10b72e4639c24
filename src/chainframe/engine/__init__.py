"""The extraction engine: block ranges, chunk planning, splitting, checks against the chain, reorg repair, progress
and reports, behind ``extract`` (files), ``follow`` (files kept up to date) and ``collect`` (in memory), with async
variants. The files themselves are the store's (:mod:`chainframe.store`).

Names load on first use (:func:`chainframe._lazy.names_from`): an extraction does not load the modules of
``plan``, ``collect``, ``scan`` or ``vacuum``."""

from typing import TYPE_CHECKING

from chainframe._lazy import names_from
from chainframe.store import ChunkMeta, folder_info

if TYPE_CHECKING:
    from chainframe.engine._abi_dir import AbisResolved, checked_folder, decoding_json, resolve_abis
    from chainframe.engine._api import (
        aextract,
        afollow,
        aoff_chain,
        arepair,
        extract,
        follow,
        off_chain,
        repair,
        verify_stored,
    )
    from chainframe.engine._client import endpoint_of
    from chainframe.engine._collect import acollect, collect
    from chainframe.engine._logs import Density, predict_calls, sample_density
    from chainframe.engine._options import abi_entries, read_abi
    from chainframe.engine._plan import ChunkTask
    from chainframe.engine._probe import Capabilities, aprobe, node_table, probe
    from chainframe.engine._ranges import BlockSpec, RangeSpec, parse_blocks, parse_range, resolve_blocks
    from chainframe.engine._read import open_duckdb, scan, series_folder
    from chainframe.engine._report import RunReport
    from chainframe.engine._routes import preflight, preflight_methods
    from chainframe.engine._runplan import RunPlan, SeriesPlan, aplan, plan
    from chainframe.engine._shared import reads
    from chainframe.engine._vacuum import DEFAULT_RETENTION_HOURS, vacuum
    from chainframe.engine._verified import verify_reads

_WHERE = {
    "AbisResolved": "_abi_dir",
    "checked_folder": "_abi_dir",
    "decoding_json": "_abi_dir",
    "resolve_abis": "_abi_dir",
    "abi_entries": "_options",
    "read_abi": "_options",
    "aextract": "_api",
    "afollow": "_api",
    "aoff_chain": "_api",
    "arepair": "_api",
    "extract": "_api",
    "follow": "_api",
    "off_chain": "_api",
    "repair": "_api",
    "verify_stored": "_api",
    "endpoint_of": "_client",
    "acollect": "_collect",
    "collect": "_collect",
    "Density": "_logs",
    "predict_calls": "_logs",
    "sample_density": "_logs",
    "ChunkTask": "_plan",
    "Capabilities": "_probe",
    "aprobe": "_probe",
    "node_table": "_probe",
    "probe": "_probe",
    "preflight": "_routes",
    "preflight_methods": "_routes",
    "BlockSpec": "_ranges",
    "RangeSpec": "_ranges",
    "parse_blocks": "_ranges",
    "parse_range": "_ranges",
    "resolve_blocks": "_ranges",
    "open_duckdb": "_read",
    "scan": "_read",
    "series_folder": "_read",
    "RunReport": "_report",
    "RunPlan": "_runplan",
    "SeriesPlan": "_runplan",
    "aplan": "_runplan",
    "plan": "_runplan",
    "reads": "_shared",
    "DEFAULT_RETENTION_HOURS": "_vacuum",
    "vacuum": "_vacuum",
    "verify_reads": "_verified",
}
__getattr__ = names_from(__name__, _WHERE)


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
    "abi_entries",
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
    "read_abi",
    "reads",
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
