"""What an output folder holds, per series, from the Parquet footers only (fast on any size): ``chainframe info``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chainframe.store._backends import storage
from chainframe.store._chunks import BlockSpan
from chainframe.store._series import Series, load_series, named_series_folders, series_folders
from chainframe.store._storage import Location, location


def folder_info(out: Location | str) -> dict[str, Series]:
    """Every series folder under ``out`` (or ``out`` itself if it is one), by folder name."""
    out = location(out)
    found = {folder.name: load_series(folder) for folder in series_folders(out)}
    if not found and storage(out).files(out):
        found[out.name] = load_series(out)
    return found


def other_files(out: Location | str) -> list[str]:
    """What else a local output folder holds, that chainframe neither wrote nor reads: files beside the series
    folders, folders not named like a series, and files in a series folder that are not Parquet (Parquet files that
    are not chunks are each series' ``foreign``). Paths relative to ``out``."""
    out = location(out)
    if not isinstance(out, Path) or not out.is_dir():
        return []
    series = {f.name for f in named_series_folders(out)}
    found: list[str] = []
    for entry in sorted(out.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.name not in series:
            found.append(entry.name + ("/" if entry.is_dir() else ""))
            continue
        found += [f"{entry.name}/{p.name}" for p in sorted(entry.iterdir()) if not _ours(p)]
    return found


def _ours(path: Path) -> bool:
    # chunks, temporaries of killed runs, a Delta table's log and data folders
    return path.suffix == ".parquet" or path.name.startswith(".") or path.name in ("_delta_log", "data")


def series_json(series: Series) -> dict[str, Any]:
    meta = series.meta
    return {
        "name": series.name,
        "dataset": series.dataset,
        "folder": str(series.folder),
        "chain_id": meta.chain_id if meta else None,
        "filters": dict(meta.filters) if meta else None,
        "u256": meta.u256 if meta else None,
        "chunk_size": meta.chunk_size if meta else None,
        "layout": series.layout,
        "version": series.version,
        "files_outside": series.outside,
        "ranges": [list(r) for r in series.ranges],
        "gaps": [list(g) for g in series.gaps],
        "rows": series.rows,
        "files": len(series.chunks),
        "bytes": series.nbytes,
        "tip": {"block": meta.end, "hash": "0x" + meta.last_block_hash.hex() if meta.last_block_hash else None}
        if meta
        else None,
        "problems": series.problems,
    }


def _spans(spans: Sequence[BlockSpan]) -> str:
    return ", ".join(f"{a}..{b}" for a, b in spans) if spans else "none"


def _count(spans: Sequence[BlockSpan]) -> int:
    return sum(b - a + 1 for a, b in spans)


def format_info(infos: Mapping[str, Series]) -> str:
    """A short report: one block per series with its filters, ranges, rows, files, size, gaps and problems."""
    blocks: list[str] = []
    for name, series in sorted(infos.items()):
        meta = series.meta
        lines = [f"{name}  ({series.folder})"]
        if meta is None:
            lines.append("  no complete chunks")
        else:
            filters = json.dumps(dict(meta.filters), separators=(",", ":")) if meta.filters else "none"
            files = len(series.chunks)
            missing = f"  ({_count(series.gaps):,} blocks missing)" if series.gaps else ""
            size = f"{series.nbytes / 1e6:,.2f} MB"
            lines += [
                f"  dataset {series.dataset}, chain {meta.chain_id}, u256 {meta.u256}, chunks of {meta.chunk_size:,}",
                f"  filters {filters}",
                f"  blocks  {_spans(series.ranges)}  ({_count(series.ranges):,} blocks)",
                f"  rows    {series.rows:,} in {files:,} file{'s' if files != 1 else ''}, {size}",
                f"  gaps    {_spans(series.gaps)}{missing}",
            ]
        if series.layout == "delta":
            outside = f", {series.outside:,} files outside it (replaced, or never committed: vacuum frees them)"
            lines.append(f"  table   Delta, version {series.version}{outside if series.outside else ''}")
        problems = series.problems
        lines.append("  problems:" if problems else "  problems: none")
        lines += [f"    - {p}" for p in problems]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" if blocks else ""
