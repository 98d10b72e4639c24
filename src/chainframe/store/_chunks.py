"""Chunk files: one Parquet file per aligned slot of blocks, written atomically, describing itself in its footer.

A series folder (see :mod:`chainframe.store._series`) holds one file per *slot*: the blocks
``[k * chunk_size, (k + 1) * chunk_size - 1]``, named ``<dataset>__<chain_id>__<slot start:010d>_to_<slot end:010d>
.parquet``. The file covers a contiguous part of its slot (all of it, or up to the chain's tip); its Parquet key-value
metadata holds a :class:`ChunkMeta` under ``chainframe.*`` keys, one JSON value per field, plus
``chainframe.complete`` (and, in a Delta table's data file, ``chainframe.exact_types``: see
:mod:`chainframe.store._file_types`). Readers trust that metadata, never a file's mere existence: :func:`read_meta`
reads the footer only.

Because a slot always has the same name, every change to a series is one atomic rename over one name: a tip file
replaced by a longer one, a slot rewritten after a reorganization. A reader globbing ``*.parquet`` sees each block's
rows exactly once at every moment, the old version or the new one, never both and never neither.

Atomicity: :class:`ChunkWriter` streams rows into a pending file of the folder's storage and commits it in one atomic
step (:mod:`chainframe.store._storage`): locally a temporary renamed over the final name, on S3 one PUT of the
object. A killed run leaves only a temporary (locally; none on S3), which :func:`clean_temporaries` removes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe import _kernels as pc
from chainframe._redact import redact_url
from chainframe._version import __version__
from chainframe.store._backends import storage
from chainframe.store._file_types import file_schema, held_metadata, to_file
from chainframe.store._storage import Location, Pending, Staged, location

SCHEMA_VERSION = 2
"""Version of the layout of chunk files and their metadata (2: one file per slot, hashes for reorg checks); a file of
another version is foreign to this version."""

PREFIX = b"chainframe."
COMPLETE_KEY = PREFIX + b"complete"
_FIELDS = (
    "dataset",
    "chain_id",
    "start",
    "end",
    "chunk_size",
    "filters",
    "u256",
    "first_block_hash",
    "first_parent_hash",
    "last_block_hash",
    "finalized",
    "recent_hashes",
    "rows",
    "endpoint",
    "tool_version",
    "schema_version",
)
_HASH_FIELDS = ("first_block_hash", "first_parent_hash", "last_block_hash")
_DECODED_WITH = PREFIX + b"decoded_with"
""":attr:`ChunkMeta.decoded_with`'s key, written only where an ABI decoded the file."""
DATASET_NAME = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")  # no "__", which separates the parts of a file name
_HEX = re.compile(r"^0[xX][0-9a-fA-F]*$")

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
    """First block the file covers (included)."""
    end: int
    """Last block the file covers (included); inside the same slot as ``start``."""
    chunk_size: int
    """Blocks per slot of the series: the file's slot is ``start // chunk_size``."""
    filters: Mapping[str, Any] = field(default_factory=dict)
    """The dataset's filters, JSON-able; ``{}`` when none."""
    u256: U256Name = "decimal"
    """How wei columns are stored: ``decimal`` (decimal128) or ``binary`` (32-byte words)."""
    first_block_hash: bytes | None = None
    """Hash of block ``start`` on the chain the rows were checked against."""
    first_parent_hash: bytes | None = None
    """Parent hash of block ``start``: links the file to the one before it (its ``last_block_hash``)."""
    last_block_hash: bytes | None = None
    """Hash of block ``end``; it pins every block of the file through the parent hashes."""
    finalized: int = 0
    """The node's finalized block when the file was written: rows at or below it cannot be reorganized."""
    recent_hashes: bytes = b""
    """Hashes (32 bytes each, concatenated) of blocks ``max(start, finalized + 1) .. end``: where a later
    reorganization forked off is found from them without refetching the file's blocks."""
    rows: int
    """Number of rows; must equal the file's row count."""
    endpoint: str = ""
    """Where the rows came from, with any API key redacted."""
    tool_version: str = __version__
    """chainframe version that wrote the file."""
    schema_version: int = SCHEMA_VERSION
    """Layout version of the file and its metadata."""
    decoded_with: str | None = None
    """The ABI whose entry the series' filter is (``--abi``, ``--abi-dir``): its file's name and its digest,
    ``Token.json sha256:<hex>``; None: given as a signature, or no decoding. Not part of the series: the same
    function or event from two ABIs is one series, each file saying what decoded it."""

    def __post_init__(self) -> None:
        if not DATASET_NAME.match(self.dataset):
            raise ValueError(f"dataset name {self.dataset!r} must be lowercase words joined by single underscores")
        for name in ("chain_id", "start", "end", "rows", "schema_version", "finalized"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative int; got {value!r}")
        if not isinstance(self.chunk_size, int) or isinstance(self.chunk_size, bool) or self.chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive int; got {self.chunk_size!r}")
        if self.start > self.end:
            raise ValueError(f"start ({self.start}) is after end ({self.end}); both are included")
        if self.start // self.chunk_size != self.end // self.chunk_size:
            raise ValueError(f"blocks {self.start}..{self.end} are not inside one slot of {self.chunk_size} blocks")
        if self.u256 not in ("decimal", "binary"):
            raise ValueError(f"u256 must be 'decimal' or 'binary'; got {self.u256!r}")
        for name in _HASH_FIELDS:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, bytes) or len(value) != 32):
                raise ValueError(f"{name} must be 32 bytes or None; got {value!r}")
        if len(self.recent_hashes) != 32 * len(self.recent_blocks):
            raise ValueError(
                f"recent_hashes holds {len(self.recent_hashes) // 32} hashes; blocks {self.start}..{self.end} above "
                f"finalized {self.finalized} need {len(self.recent_blocks)}"
            )
        # Never trust the caller to have redacted: the footer is copied around with the data.
        object.__setattr__(self, "endpoint", redact_url(self.endpoint))
        object.__setattr__(self, "filters", canonical_filters(self.filters))

    @property
    def slot(self) -> BlockSpan:
        """The slot of blocks this file belongs to, both ends included."""
        first = self.start - self.start % self.chunk_size
        return first, first + self.chunk_size - 1

    @property
    def recent_blocks(self) -> range:
        """The blocks whose hashes ``recent_hashes`` holds."""
        return range(max(self.start, self.finalized + 1), self.end + 1)

    def recent_hash(self, block: int) -> bytes | None:
        """The stored hash of ``block`` if it is among the recent ones (else None: it was final when written)."""
        blocks = self.recent_blocks
        if block not in blocks:
            return None
        i = (block - blocks.start) * 32
        return self.recent_hashes[i : i + 32]

    @property
    def filters_digest(self) -> str:
        return filters_digest(self.filters)

    def to_metadata(self) -> dict[bytes, bytes]:
        """Parquet key-value metadata: ``chainframe.<field>`` -> JSON value, plus ``chainframe.complete`` = true."""
        out = {PREFIX + name.encode(): _canonical_json(self._json_value(name)).encode() for name in _FIELDS}
        if self.decoded_with is not None:  # only where an ABI decoded: files without it read as before
            out[_DECODED_WITH] = _canonical_json(self.decoded_with).encode()
        out[COMPLETE_KEY] = b"true"
        return out

    def _json_value(self, name: str) -> Any:
        value = getattr(self, name)
        return "0x" + value.hex() if isinstance(value, bytes) else value

    @classmethod
    def from_metadata(cls, kv: Mapping[bytes, bytes] | None) -> ChunkMeta | None:
        """The chunk's metadata, or None unless ``kv`` describes a complete chunk of this layout version."""
        if not kv or kv.get(COMPLETE_KEY) != b"true":
            return None
        try:
            values = {name: json.loads(kv[PREFIX + name.encode()]) for name in _FIELDS}
            if values["schema_version"] != SCHEMA_VERSION:
                return None
            for name in (*_HASH_FIELDS, "recent_hashes"):
                text = values[name]
                if text is not None:
                    if not isinstance(text, str) or not text.startswith("0x"):
                        return None
                    values[name] = bytes.fromhex(text[2:])
            if not isinstance(values["filters"], dict) or values["recent_hashes"] is None:
                return None
            for name in ("dataset", "u256", "endpoint", "tool_version"):
                if not isinstance(values[name], str):
                    return None
            if _DECODED_WITH in kv:
                values["decoded_with"] = json.loads(kv[_DECODED_WITH])
                if not isinstance(values["decoded_with"], str | None):
                    return None
            return cls(**values)
        except (KeyError, ValueError, TypeError):
            return None


# --- names -----------------------------------------------------------------------------------------------------------


def slot_of(block: int, chunk_size: int) -> BlockSpan:
    """The slot (both ends included) that holds ``block`` in a series of ``chunk_size``-block slots."""
    first = block - block % chunk_size
    return first, first + chunk_size - 1


def chunk_path(folder: Location, *, dataset: str, chain_id: int, slot: BlockSpan) -> Location:
    """The one file name for a slot of a series folder: same slot, same path, whatever part of it the file covers."""
    if not DATASET_NAME.match(dataset):
        raise ValueError(f"dataset name {dataset!r} must be lowercase words joined by single underscores")
    start, end = slot
    if not 0 <= start <= end:
        raise ValueError(f"a slot needs 0 <= start <= end; got {start}..{end}")
    return location(folder) / f"{dataset}__{chain_id}__{start:010d}_to_{end:010d}.parquet"


# --- writing ---------------------------------------------------------------------------------------------------------


class Written(NamedTuple):
    """A chunk file written whole, as a worker hands it to the run's coordinator to publish: plain data (it crosses
    processes). ``staged`` is set when the file is not yet at ``path`` (a Parquet folder's slot, published by the
    coordinator's rename or upload); a Delta table's data file is already at its unique ``path``, invisible until the
    coordinator's commit names it."""

    path: str
    meta: ChunkMeta
    size: int
    blocks: BlockSpan | None
    """The least and greatest ``block_number`` among the rows (None without rows): the data file's statistics."""
    staged: Staged | None = None


def _naming(error: OSError, path: Location) -> OSError:
    """An error from writing a chunk, naming the chunk: pyarrow's says only "No space left on device"."""
    return error if error.filename else OSError(error.errno, error.strerror or str(error), str(path))


class ChunkWriter:
    """One chunk file written as its rows arrive, atomically, zstd-compressed, with its metadata in the footer.

    Rows go to a pending file of the folder's storage, in row groups of ``row_group_rows`` (smaller tables are held
    until a group is full, so memory is bounded by a row group, not by the chunk). :meth:`commit` writes the metadata
    and puts the file at ``path`` in one atomic step; :meth:`abort` (or leaving a ``with`` block on an error) drops the
    pending file. Readers and resumers see either no file or the whole file.

    Rows come in ``schema``, chainframe's exact types; a Delta table's data file (``delta``) holds them in types its
    table's schema declares (:mod:`chainframe.store._file_types`: ``uint64`` as ``int64``, the same bits), converted a
    row group at a time, and records the exact ones in its footer.
    """

    def __init__(
        self, path: Location | str, schema: pa.Schema, *, delta: bool = False, row_group_rows: int = 100_000
    ) -> None:
        if row_group_rows <= 0:
            raise ValueError(f"row_group_rows must be positive; got {row_group_rows}")
        self.path = location(path)
        kept = {k: v for k, v in (schema.metadata or {}).items() if not k.startswith(PREFIX)}
        self.schema = schema.with_metadata(kept)
        """The rows' schema: what :meth:`write` takes."""
        self._file_schema = file_schema(self.schema) if delta else self.schema
        self._types = held_metadata(self.schema) if delta else {}
        self.rows = 0
        self._group = row_group_rows
        self._held: list[pa.Table] = []
        self._held_rows = 0
        self._pending: Pending | None = None
        self._writer: pq.ParquetWriter | None = None
        self._least: int | None = None
        self._greatest: int | None = None

    def fills(self, rows: int) -> bool:
        """Whether :meth:`write` of ``rows`` more rows fills a row group, and so writes to the file (else it only holds
        them: cheap enough to call without a worker thread)."""
        return self._held_rows + rows >= self._group

    def write(self, table: pa.Table) -> None:
        """Append rows (in order); they reach the file whenever a row group is full."""
        if not table.schema.equals(self.schema, check_metadata=False):
            raise ValueError(f"rows for {self.path.name} do not have the chunk's schema:\n{table.schema}")
        if table.num_rows and "block_number" in table.column_names:
            bounds = pc.min_max(table["block_number"])
            least, greatest = bounds["min"].as_py(), bounds["max"].as_py()
            self._least = least if self._least is None else min(self._least, least)
            self._greatest = greatest if self._greatest is None else max(self._greatest, greatest)
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
            self._pending = storage(self.path).begin(self.path)
            # Page checksums: a data page corrupted under an intact footer is caught when the rows are read again.
            # zstd level 1 and min/max statistics only where a range can prune (numbers, times, flags; not hashes or
            # data): 0.10 to 0.06 CPU-s for 312,000 benchmark logs, same size (benchmarks/compare.py's chain).
            self._writer = pq.ParquetWriter(
                self._pending.sink, self._file_schema, compression="zstd", compression_level=1,
                write_page_checksum=True,
                write_statistics=[f.name for f in self.schema if not _is_binary(f.type)] or False,
            )  # fmt: skip
        try:
            self._writer.write_table(to_file(table, self._file_schema), row_group_size=self._group)
        except OSError as exc:
            raise _naming(exc, self.path) from None

    def commit(self, meta: ChunkMeta) -> None:
        """Write what is held, the metadata and the footer, then put the file in place."""
        self.finish(meta, publish=True)

    def finish(self, meta: ChunkMeta, *, publish: bool) -> Written:
        """Write what is held, the metadata and the footer; then put the file in place (``publish``), or stage it for
        the coordinator to publish (:meth:`Storage.publish`)."""
        if meta.rows != self.rows:
            raise ValueError(f"metadata says {meta.rows} rows but {self.rows} were written")
        try:
            if self._held_rows or self._writer is None:
                self._write(pa.concat_tables(self._held) if self._held else pc.empty_table(self.schema))
            self._held = []
            assert self._writer is not None
            assert self._pending is not None
            self._writer.add_key_value_metadata(meta.to_metadata() | self._types)
            self._writer.close()
            staged = self._pending.stage()
            if publish:
                storage(self.path).publish(staged)
        except OSError as exc:
            self.abort()
            raise _naming(exc, self.path) from None
        except BaseException:
            self.abort()
            raise
        self._writer = self._pending = None
        blocks = (self._least, self._greatest) if self._least is not None and self._greatest is not None else None
        return Written(
            path=str(self.path), meta=meta, size=staged.size, blocks=blocks, staged=None if publish else staged
        )

    def abort(self) -> None:
        """Drop the pending file (and what is held); the final path is left as it was."""
        self._held = []
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()  # else its finalizer would write to a closed file
        if self._pending is not None:
            self._pending.abort()
        self._writer = self._pending = None

    def __enter__(self) -> ChunkWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()  # after commit there is nothing left to drop


def _is_binary(dtype: pa.DataType) -> bool:
    while pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        dtype = dtype.value_type
    return bool(pa.types.is_binary(dtype) or pa.types.is_fixed_size_binary(dtype) or pa.types.is_large_binary(dtype))


def write_chunk(table: pa.Table, path: Location | str, meta: ChunkMeta, *, row_group_rows: int = 100_000) -> None:
    """Write ``table`` (already sorted) to ``path`` in one go: see :class:`ChunkWriter`."""
    if table.num_rows != meta.rows:
        raise ValueError(f"metadata says {meta.rows} rows but the table has {table.num_rows}")
    with ChunkWriter(path, table.schema, row_group_rows=row_group_rows) as writer:
        writer.write(table)
        writer.commit(meta)


def clean_temporaries(folder: Location | str) -> int:
    """Remove what killed runs left in ``folder`` (temporaries; on S3, uploads never completed); return how many.
    Locally a temporary whose process is still alive belongs to a concurrent writer and is kept."""
    folder = location(folder)
    return storage(folder).clean_temporaries(folder)


def temporaries(folder: Location) -> list[Location]:
    return storage(folder).temporaries(folder)


# --- reading ---------------------------------------------------------------------------------------------------------


def read_meta(path: Location | str) -> ChunkMeta | None:
    """A chunk's metadata from its footer only; None for a missing, unreadable, truncated or foreign file, one without
    the complete marker, or one whose row count disagrees with its metadata."""
    path = location(path)
    return metas(storage(path).footers([path]))[0]


def metas(footers: list[pq.FileMetaData | None]) -> list[ChunkMeta | None]:
    """The chunk metadata in each footer (see :func:`read_meta`)."""
    out: list[ChunkMeta | None] = []
    for footer in footers:
        meta = ChunkMeta.from_metadata(footer.metadata) if footer is not None else None
        out.append(meta if meta is not None and footer is not None and footer.num_rows == meta.rows else None)
    return out
