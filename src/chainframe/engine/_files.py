"""The file layer of extraction: one Parquet file per chunk, with a deterministic name, written atomically, and
describing itself in its footer.

A chunk file is ``<out>/<dataset>/<dataset>__<chain_id>__<start:010d>_to_<end:010d>[__f<digest>].parquet`` (``end``
included; the digest names the filters, so different filters are different series of files). Its Parquet key-value
metadata holds a :class:`ChunkMeta` under ``chainframe.*`` keys, one JSON value per field, plus
``chainframe.complete``. Resuming trusts that metadata, never a file's mere existence: :func:`is_complete` reads the
footer only and compares every field.

Atomicity: :class:`ChunkWriter` streams rows into ``.<name>.tmp-<pid>-<random>`` in the same folder, then fsyncs
it, renames it over the final name (``os.replace`` is atomic within a filesystem) and fsyncs the folder. A final
name therefore holds either nothing or a whole file; a killed run leaves only a temporary, which
:func:`clean_temporaries` removes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe._redact import redact_url
from chainframe._version import __version__

SCHEMA_VERSION = 1
"""Version of the layout of chunk files and their metadata; a file of another version is not resumed."""

PREFIX = b"chainframe."
COMPLETE_KEY = PREFIX + b"complete"
_FIELDS = (
    "dataset",
    "chain_id",
    "start",
    "end",
    "filters",
    "u256",
    "first_block_hash",
    "last_block_hash",
    "rows",
    "endpoint",
    "tool_version",
    "schema_version",
)
_DATASET_NAME = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")  # no "__", which separates the parts of a file name
_HEX = re.compile(r"^0[xX][0-9a-fA-F]*$")
_TEMPORARY = re.compile(r"^\..+\.tmp-(\d+)-[0-9a-f]+$")

U256Name = Literal["decimal", "binary"]
BlockSpan = tuple[int, int]
"""Blocks ``(first, last)``, both included."""


# --- filters ---------------------------------------------------------------------------------------------------------


def canonical_filters(filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """``filters`` in one canonical JSON-able form: hex strings lowercased (hex is case-insensitive), bytes as
    ``0x`` hex, tuples as lists, and keys whose value is ``None`` or empty dropped (they filter nothing).

    List order is kept: it can matter (topic positions, calls)."""
    out: dict[str, Any] = {}
    for key, value in (filters or {}).items():
        if value is None or (isinstance(value, list | tuple) and not value):
            continue
        out[str(key)] = _canonical(value)
    return dict(sorted(out.items()))


def _canonical(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return "0x" + bytes(value).hex()
    if isinstance(value, str):
        return value.lower() if _HEX.match(value) else value
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    raise TypeError(f"filter value {value!r} ({type(value).__name__}) is not JSON-able")


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def filters_digest(filters: Mapping[str, Any] | None) -> str:
    """8 hex characters naming ``filters`` (sha256 of their canonical JSON); ``""`` for no filters.

    Only file names use the digest; completeness compares the full filters kept in the metadata, so a collision
    could at worst make a chunk be fetched again, never resume the wrong one."""
    canonical = canonical_filters(filters)
    if not canonical:
        return ""
    return hashlib.sha256(_canonical_json(canonical).encode()).hexdigest()[:8]


# --- metadata --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ChunkMeta:
    """What a chunk file holds, kept in its Parquet footer. Filters are stored canonical and the endpoint redacted,
    whatever the caller passes."""

    dataset: str
    """Dataset name, a key of ``chainframe.datasets.DATASETS``."""
    chain_id: int
    """Chain id the rows came from (as the node reported it)."""
    start: int
    """First block of the chunk (included)."""
    end: int
    """Last block of the chunk (included)."""
    filters: Mapping[str, Any] = field(default_factory=dict)
    """The dataset's filters, JSON-able; ``{}`` when none."""
    u256: U256Name = "decimal"
    """How wei columns are stored: ``decimal`` (decimal128) or ``binary`` (32-byte words)."""
    first_block_hash: bytes | None = None
    """Hash of block ``start`` when the chunk was fetched, to detect reorganizations later."""
    last_block_hash: bytes | None = None
    """Hash of block ``end`` when the chunk was fetched."""
    rows: int
    """Number of rows; must equal the file's row count."""
    endpoint: str = ""
    """Where the rows came from, with any API key redacted."""
    tool_version: str = __version__
    """chainframe version that wrote the file."""
    schema_version: int = SCHEMA_VERSION
    """Layout version of the file and its metadata."""

    def __post_init__(self) -> None:
        if not _DATASET_NAME.match(self.dataset):
            raise ValueError(f"dataset name {self.dataset!r} must be lowercase words joined by single underscores")
        for name in ("chain_id", "start", "end", "rows", "schema_version"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative int; got {value!r}")
        if self.start > self.end:
            raise ValueError(f"start ({self.start}) is after end ({self.end}); both are included")
        if self.u256 not in ("decimal", "binary"):
            raise ValueError(f"u256 must be 'decimal' or 'binary'; got {self.u256!r}")
        for name in ("first_block_hash", "last_block_hash"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, bytes) or len(value) != 32):
                raise ValueError(f"{name} must be 32 bytes or None; got {value!r}")
        # Never trust the caller to have redacted: the footer is copied around with the data.
        object.__setattr__(self, "endpoint", redact_url(self.endpoint))
        object.__setattr__(self, "filters", canonical_filters(self.filters))

    @property
    def filters_digest(self) -> str:
        return filters_digest(self.filters)

    def to_metadata(self) -> dict[bytes, bytes]:
        """Parquet key-value metadata: ``chainframe.<field>`` -> JSON value, plus ``chainframe.complete`` = true."""
        out = {PREFIX + name.encode(): _canonical_json(self._json_value(name)).encode() for name in _FIELDS}
        out[COMPLETE_KEY] = b"true"
        return out

    def _json_value(self, name: str) -> Any:
        value = getattr(self, name)
        return "0x" + value.hex() if isinstance(value, bytes) else value

    @classmethod
    def from_metadata(cls, kv: Mapping[bytes, bytes] | None) -> ChunkMeta | None:
        """The chunk's metadata, or None unless ``kv`` describes a complete chainframe chunk."""
        if not kv or kv.get(COMPLETE_KEY) != b"true":
            return None
        try:
            values = {name: json.loads(kv[PREFIX + name.encode()]) for name in _FIELDS}
            for name in ("first_block_hash", "last_block_hash"):
                text = values[name]
                if text is not None:
                    if not isinstance(text, str) or not text.startswith("0x"):
                        return None
                    values[name] = bytes.fromhex(text[2:])
            if not isinstance(values["filters"], dict):
                return None
            for name in ("dataset", "u256", "endpoint", "tool_version"):
                if not isinstance(values[name], str):
                    return None
            return cls(**values)
        except (KeyError, ValueError, TypeError):
            return None


# --- names -----------------------------------------------------------------------------------------------------------


def chunk_path(
    out: Path, *, dataset: str, chain_id: int, start: int, end: int, filters: Mapping[str, Any] | None = None
) -> Path:
    """The one file name for a chunk (``end`` included): same arguments, same path; other filters, other path."""
    if not _DATASET_NAME.match(dataset):
        raise ValueError(f"dataset name {dataset!r} must be lowercase words joined by single underscores")
    if not 0 <= start <= end:
        raise ValueError(f"a chunk needs 0 <= start <= end; got {start}..{end}")
    digest = filters_digest(filters)
    suffix = f"__f{digest}" if digest else ""
    return Path(out) / dataset / f"{dataset}__{chain_id}__{start:010d}_to_{end:010d}{suffix}.parquet"


# --- writing ---------------------------------------------------------------------------------------------------------


class ChunkWriter:
    """One chunk file written as its rows arrive, atomically, zstd-compressed, with its metadata in the footer.

    Rows go to a temporary in the same folder, in row groups of ``row_group_rows`` (smaller tables are held until a
    group is full, so memory is bounded by a row group, not by the chunk). :meth:`commit` writes the metadata, fsyncs,
    renames over ``path`` and fsyncs the folder; :meth:`abort` (or leaving a ``with`` block on an error) removes the
    temporary. Readers and resumers see either no file or the whole file.
    """

    def __init__(self, path: Path, schema: pa.Schema, *, row_group_rows: int = 100_000) -> None:
        if row_group_rows <= 0:
            raise ValueError(f"row_group_rows must be positive; got {row_group_rows}")
        self.path = Path(path)
        kept = {k: v for k, v in (schema.metadata or {}).items() if not k.startswith(PREFIX)}
        self.schema = schema.with_metadata(kept)
        self.rows = 0
        self._group = row_group_rows
        self._held: list[pa.Table] = []
        self._held_rows = 0
        self._temporary: Path | None = None
        self._sink: Any = None
        self._writer: pq.ParquetWriter | None = None

    def write(self, table: pa.Table) -> None:
        """Append rows (in order); they reach the file whenever a row group is full."""
        if not table.schema.equals(self.schema, check_metadata=False):
            raise ValueError(f"rows for {self.path.name} do not have the chunk's schema:\n{table.schema}")
        self.rows += table.num_rows
        self._held.append(table)
        self._held_rows += table.num_rows
        if self._held_rows >= self._group:
            held = pa.concat_tables(self._held)  # no copy: the chunks are kept side by side
            whole = held.num_rows - held.num_rows % self._group
            self._write(held.slice(0, whole))
            self._held = [held.slice(whole)] if whole < held.num_rows else []
            self._held_rows = held.num_rows - whole

    def _write(self, table: pa.Table) -> None:
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._temporary = self.path.parent / f".{self.path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
            self._sink = open(self._temporary, "xb")  # noqa: SIM115 (closed by commit or abort)
            self._writer = pq.ParquetWriter(self._sink, self.schema, compression="zstd")
        self._writer.write_table(table, row_group_size=self._group)

    def commit(self, meta: ChunkMeta) -> None:
        """Write what is held, the metadata and the footer, then put the file in place."""
        if meta.rows != self.rows:
            raise ValueError(f"metadata says {meta.rows} rows but {self.rows} were written")
        try:
            if self._held_rows or self._writer is None:
                self._write(pa.concat_tables(self._held) if self._held else self.schema.empty_table())
            self._held = []
            assert self._writer is not None
            assert self._temporary is not None
            self._writer.add_key_value_metadata(meta.to_metadata())
            self._writer.close()
            self._sink.flush()
            os.fsync(self._sink.fileno())
            self._sink.close()
            os.replace(self._temporary, self.path)
        except BaseException:
            self.abort()
            raise
        self._writer = self._sink = self._temporary = None
        _fsync_folder(self.path.parent)

    def abort(self) -> None:
        """Drop the temporary (and what is held); the final path is left as it was."""
        self._held = []
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()  # else its finalizer would write to a closed file
        if self._sink is not None:
            self._sink.close()
        if self._temporary is not None:
            with contextlib.suppress(FileNotFoundError):
                self._temporary.unlink()
        self._writer = self._sink = self._temporary = None

    def __enter__(self) -> ChunkWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()  # after commit there is nothing left to drop


def write_chunk(table: pa.Table, path: Path, meta: ChunkMeta, *, row_group_rows: int = 100_000) -> None:
    """Write ``table`` (already sorted) to ``path`` in one go: see :class:`ChunkWriter`."""
    if table.num_rows != meta.rows:
        raise ValueError(f"metadata says {meta.rows} rows but the table has {table.num_rows}")
    with ChunkWriter(path, table.schema, row_group_rows=row_group_rows) as writer:
        writer.write(table)
        writer.commit(meta)


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX); a no-op where folders cannot be opened."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def clean_temporaries(folder: Path) -> int:
    """Remove the temporaries (``.<name>.tmp-<pid>-<random>``) that killed runs left in ``folder``; return how many.

    A temporary whose process is still alive belongs to a concurrent writer and is kept."""
    removed = 0
    for path in _temporaries(Path(folder)):
        match = _TEMPORARY.match(path.name)
        if match is None or _process_alive(int(match.group(1))):
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed += 1
    return removed


def _temporaries(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(".*.tmp-*") if _TEMPORARY.match(p.name) and p.is_file())


def _process_alive(pid: int) -> bool:
    if pid <= 0:
        return False  # kill(0) would signal our own process group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OverflowError, OSError, ValueError):
        return False
    return True


# --- reading ---------------------------------------------------------------------------------------------------------


def read_meta(path: Path) -> ChunkMeta | None:
    """A chunk's metadata from its footer only; None for a missing, unreadable, truncated or foreign file, one without
    the complete marker, or one whose row count disagrees with its metadata."""
    try:
        footer = pq.read_metadata(path)
    except (OSError, ValueError, pa.ArrowException):
        return None
    meta = ChunkMeta.from_metadata(footer.metadata)
    if meta is None or footer.num_rows != meta.rows:
        return None
    return meta


def is_complete(
    path: Path,
    *,
    dataset: str,
    chain_id: int,
    start: int,
    end: int,
    filters: Mapping[str, Any] | None,
    u256: str,
) -> bool:
    """Whether ``path`` is a complete chunk of exactly this dataset, chain, range, filters, encoding and layout."""
    meta = read_meta(path)
    return (
        meta is not None
        and meta.schema_version == SCHEMA_VERSION
        and meta.dataset == dataset
        and meta.chain_id == chain_id
        and meta.start == start
        and meta.end == end
        and meta.u256 == u256
        and meta.filters == canonical_filters(filters)
    )


# --- what a folder holds ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Chunk:
    """One complete chunk file seen by :func:`folder_info`."""

    path: Path
    meta: ChunkMeta
    nbytes: int


@dataclass(frozen=True, kw_only=True)
class SeriesInfo:
    """Chunks of one dataset that belong together: same chain, filters and wei encoding."""

    chain_id: int
    filters_digest: str
    """``""`` for no filters."""
    u256: str
    ranges: tuple[BlockSpan, ...]
    """Covered blocks, merged (adjacent chunks join), both ends included."""
    gaps: tuple[BlockSpan, ...]
    """Missing blocks between the covered ranges."""
    rows: int
    files: int
    nbytes: int
    overlaps: tuple[tuple[Path, Path], ...]
    """Pairs of chunk files covering some of the same blocks: reading both duplicates rows."""


@dataclass(frozen=True, kw_only=True)
class DatasetInfo:
    """What one dataset folder holds, read from the Parquet footers only."""

    name: str
    folder: Path
    series: tuple[SeriesInfo, ...]
    incomplete: tuple[Path, ...]
    """Parquet files that are not complete chainframe chunks of this dataset (foreign, truncated, unfinished)."""
    temporaries: tuple[Path, ...]
    """Leftover temporaries of killed runs."""

    @property
    def chain_ids(self) -> list[int]:
        return sorted({s.chain_id for s in self.series})

    @property
    def filter_digests(self) -> list[str]:
        return sorted({s.filters_digest for s in self.series})

    @property
    def ranges(self) -> list[BlockSpan]:
        """Blocks covered by any series, merged."""
        return merge_ranges(r for s in self.series for r in s.ranges)

    @property
    def gaps(self) -> list[BlockSpan]:
        return gaps_between(self.ranges)

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.series)

    @property
    def files(self) -> int:
        return sum(s.files for s in self.series)

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.series)

    @property
    def overlaps(self) -> list[tuple[Path, Path]]:
        return [pair for s in self.series for pair in s.overlaps]

    @property
    def problems(self) -> list[str]:
        """Human-readable problems: overlaps, mixed encodings, foreign or unfinished files."""
        out = [f"overlapping chunks: {a.name} and {b.name}" for a, b in self.overlaps]
        if len({s.u256 for s in self.series}) > 1:
            out.append("chunks mix u256 encodings (decimal and binary): the folder cannot be read as one table")
        out += [f"incomplete/foreign (ignored): {p.name}" for p in self.incomplete]
        out += [f"leftover temporary of a killed run: {p.name}" for p in self.temporaries]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "folder": str(self.folder),
            "chain_ids": self.chain_ids,
            "filter_digests": self.filter_digests,
            "ranges": [list(r) for r in self.ranges],
            "gaps": [list(g) for g in self.gaps],
            "rows": self.rows,
            "files": self.files,
            "bytes": self.nbytes,
            "series": [
                {
                    "chain_id": s.chain_id,
                    "filters_digest": s.filters_digest,
                    "u256": s.u256,
                    "ranges": [list(r) for r in s.ranges],
                    "gaps": [list(g) for g in s.gaps],
                    "rows": s.rows,
                    "files": s.files,
                    "bytes": s.nbytes,
                    "overlaps": [[str(a), str(b)] for a, b in s.overlaps],
                }
                for s in self.series
            ],
            "overlaps": [[str(a), str(b)] for a, b in self.overlaps],
            "incomplete": [str(p) for p in self.incomplete],
            "temporaries": [str(p) for p in self.temporaries],
            "problems": self.problems,
        }


def merge_ranges(ranges: Iterable[BlockSpan]) -> list[BlockSpan]:
    """Inclusive ranges merged where they overlap or touch: [(0, 9), (10, 19), (30, 39)] -> [(0, 19), (30, 39)]."""
    merged: list[BlockSpan] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def gaps_between(ranges: Sequence[BlockSpan]) -> list[BlockSpan]:
    """The blocks missing between merged, sorted inclusive ranges."""
    return [(a_end + 1, b_start - 1) for (_, a_end), (b_start, _) in pairwise(ranges)]


def folder_info(out: Path) -> dict[str, DatasetInfo]:
    """Every dataset folder under ``out`` (or ``out`` itself if it holds chunk files), by name."""
    out = Path(out)
    if not out.is_dir():
        return {}
    folders = [p for p in sorted(out.iterdir()) if p.is_dir() and not p.name.startswith(".")]
    infos = {f.name: info for f in folders if (info := _dataset_info(f)) is not None}
    if not infos and (own := _dataset_info(out)) is not None:
        infos[own.name] = own
    return infos


def _dataset_info(folder: Path) -> DatasetInfo | None:
    files = sorted(p for p in folder.glob("*.parquet") if p.is_file())
    temporaries = _temporaries(folder)
    if not files and not temporaries:
        return None
    chunks: list[Chunk] = []
    incomplete: list[Path] = []
    for path in files:
        meta = read_meta(path)
        if meta is None or meta.dataset != folder.name:
            incomplete.append(path)
        else:
            chunks.append(Chunk(path=path, meta=meta, nbytes=path.stat().st_size))
    groups: dict[tuple[int, str, str], list[Chunk]] = {}
    for chunk in chunks:
        key = (chunk.meta.chain_id, chunk.meta.filters_digest, chunk.meta.u256)
        groups.setdefault(key, []).append(chunk)
    series = tuple(_series(key, group) for key, group in sorted(groups.items()))
    return DatasetInfo(
        name=folder.name, folder=folder, series=series, incomplete=tuple(incomplete), temporaries=tuple(temporaries)
    )


def _series(key: tuple[int, str, str], chunks: list[Chunk]) -> SeriesInfo:
    chunks = sorted(chunks, key=lambda c: (c.meta.start, c.meta.end, c.path.name))
    overlaps: list[tuple[Path, Path]] = []
    reach: Chunk | None = None  # the chunk reaching furthest so far
    for chunk in chunks:
        if reach is not None and chunk.meta.start <= reach.meta.end:
            overlaps.append((reach.path, chunk.path))
        if reach is None or chunk.meta.end > reach.meta.end:
            reach = chunk
    ranges = merge_ranges((c.meta.start, c.meta.end) for c in chunks)
    chain_id, digest, u256 = key
    return SeriesInfo(
        chain_id=chain_id,
        filters_digest=digest,
        u256=u256,
        ranges=tuple(ranges),
        gaps=tuple(gaps_between(ranges)),
        rows=sum(c.meta.rows for c in chunks),
        files=len(chunks),
        nbytes=sum(c.nbytes for c in chunks),
        overlaps=tuple(overlaps),
    )


def _spans(spans: Sequence[BlockSpan]) -> str:
    return ", ".join(f"{a}..{b}" for a, b in spans) if spans else "none"


def _count(spans: Sequence[BlockSpan]) -> int:
    return sum(b - a + 1 for a, b in spans)


def format_info(infos: Mapping[str, DatasetInfo]) -> str:
    """A short report: one block per dataset with its ranges, rows, files, size, gaps and problems."""
    blocks: list[str] = []
    for name, info in sorted(infos.items()):
        lines = [f"{name}  ({info.folder})"]
        for s in info.series:
            filters = f"filters {s.filters_digest}" if s.filters_digest else "no filters"
            lines += [
                f"  chain {s.chain_id}, {filters}, u256 {s.u256}",
                f"    blocks  {_spans(s.ranges)}  ({_count(s.ranges):,} blocks)",
                f"    rows    {s.rows:,} in {s.files:,} file{'s' if s.files != 1 else ''}, {s.nbytes / 1e6:,.2f} MB",
                f"    gaps    {_spans(s.gaps)}" + (f"  ({_count(s.gaps):,} blocks missing)" if s.gaps else ""),
            ]
        if not info.series:
            lines.append("  no complete chunks")
        problems = info.problems
        lines.append("  problems:" if problems else "  problems: none")
        lines += [f"    - {p}" for p in problems]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" if blocks else ""
