"""Series: the chunk files of one dataset with one set of filters and one wei encoding, kept in a folder of their own.

An output folder holds one sub-folder per series, named ``<dataset>`` for the dataset without filters,
``<dataset>__f<digest>`` with filters (the digest names them; the files' metadata holds them in full) and a
``__binary`` suffix for ``u256="binary"``. So a plain glob ``OUT/logs/*.parquet`` never mixes logs of another filter or
encoding, and one output folder holds one chain.

A series that decodes one event or one function (``event=``/``function=`` of one entry: what ``--abi-dir`` writes,
one series per entry) is named after it too: ``<dataset>__<name>__f<digest>`` (``logs__Transfer__f1a2b3c4d``,
``transactions__transfer__f5e6f7a8b``), the name cut to letters, digits and ``_`` (safe in every file system, S3 key,
Delta table path and glob: no ``(``, ``,``, ``[``), at most 64 of them. The digest stays: a name is a function of the
footer's filters alone, so every writer and reader (another machine, another bucket client) finds the same folder
without reading any, and one event name is several tables: ERC-20's and ERC-721's ``Transfer`` (another indexed
parameter), WETH's (other parameter names), one event of two ``--address`` sets, two overloads of one function.
The footer holds the entry's full text (types, names, ``indexed``, ``returns``): what decoded the folder.
A folder an older chainframe named ``<dataset>__f<digest>`` for such a series is that series still
(:func:`legacy_name`): runs extend it in place, readers find it (:func:`stored_series`, :func:`series_folder`).

A series folder holds at most one file per slot (see :mod:`chainframe.store._chunks`). Adjacent files are *linked*
when the later one's ``first_parent_hash`` is the earlier one's ``last_block_hash``: a linked run of files is one
stretch of one chain, pinned by its last hash. :meth:`Series.segments` gives those runs, from the footers alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, NamedTuple

from chainframe._errors import InputError
from chainframe.store._backends import storage
from chainframe.store._chunks import (
    DATASET_NAME,
    BlockSpan,
    ChunkMeta,
    chunk_path,
    filters_digest,
    metas,
    temporaries,
)
from chainframe.store._delta import DATA, Layout, is_table, latest_if_table
from chainframe.store._file_types import KEY
from chainframe.store._storage import Location, location

BINARY_SUFFIX = "__binary"
NAMED_BY = ("event", "function")
"""The inputs whose one entry (an event's or a function's text) names its series."""
_LABEL_SIZE = 64
_NAMED = re.compile(r"^(?P<dataset>[a-z0-9]+(?:_[a-z0-9]+)*)__(?:[A-Za-z0-9_]+)__(?P<rest>f[0-9a-f]{8}(?:__binary)?)$")


def _label(filters: Mapping[str, Any] | None) -> str:
    """The event's or function's name a series of one of them is named after ("" for any other series)."""
    named = [v for k, v in (filters or {}).items() if k in NAMED_BY and v]
    if len(named) != 1:
        return ""
    entries = named[0] if isinstance(named[0], list | tuple) else [named[0]]
    if len(entries) != 1 or not isinstance(entries[0], str) or "(" not in entries[0]:
        return ""  # several entries share the series (told apart by a column), or an ABI entry as given
    head = entries[0].split("(", 1)[0].split()  # "Transfer", or "event Transfer" as some ABIs' texts are written
    word = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", head[-1] if head else ""))
    return word.strip("_")[:_LABEL_SIZE].strip("_")  # no "__" in it, none at its ends: "__" separates the parts


def series_name(dataset: str, filters: Mapping[str, Any] | None, u256: str) -> str:
    """The folder name of a series: ``logs``, ``logs__f1a2b3c4d``, ``logs__Transfer__f1a2b3c4d``,
    ``blocks__binary``, ..."""
    digest = filters_digest(filters)
    label = _label(filters) if digest else ""
    return (
        dataset + (f"__{label}" if label else "") + (f"__f{digest}" if digest else "")
        + (BINARY_SUFFIX if u256 == "binary" else "")
    )  # fmt: skip


def legacy_name(name: str) -> str:
    """The name an older chainframe gave the series named ``name``: without its event's or function's name
    (``logs__Transfer__f1a2b3c4d`` -> ``logs__f1a2b3c4d``); other names are their own."""
    named = _NAMED.match(name)
    return f"{named.group('dataset')}__{named.group('rest')}" if named else name


def series_folder(out: Location | str, name: str) -> Location:
    """The folder of the series named ``name`` under ``out``: ``out/name``, or the folder an older chainframe
    named it (:func:`legacy_name`) where only that one holds it."""
    out = location(out)
    old = legacy_name(name)
    if old != name and not _exists(out / name) and _exists(out / old):
        return out / old
    return out / name


def _exists(folder: Location) -> bool:
    return is_table(folder) or bool(storage(folder).files(folder))


def stored_series(out: Location | str) -> dict[str, Series]:
    """Every series under ``out`` by its name (:attr:`Series.key`: a folder an older chainframe named holds the
    series of the name this one gives it). Two folders holding one series (both names) refused: a reader of either
    would miss the other's rows."""
    found: dict[str, Series] = {}
    for folder in series_folders(out):
        series = load_series(folder)
        if series.key in found:
            raise InputError(
                f"{found[series.key].folder} and {folder} both hold series {series.key!r} (one under the name an "
                "older chainframe gave it): keep one of them"
            )
        found[series.key] = series
    return found


def dataset_of(name: str) -> str | None:
    """The dataset a series folder name is for, or None if the name is not a series folder's."""
    dataset = name.split("__", 1)[0]
    return dataset if DATASET_NAME.match(dataset) else None


class StoredChunk(NamedTuple):
    """One chunk file of a series, as its footer describes it."""

    path: Location
    meta: ChunkMeta
    nbytes: int
    folder: Location
    """The series folder (a Delta table's files are in its ``data/``)."""

    @property
    def series(self) -> str:
        """The series' name (:attr:`Series.key`): its folder's, or, in a folder an older chainframe named, the name
        this one gives it."""
        return series_name(self.meta.dataset, self.meta.filters, self.meta.u256)


@dataclass(frozen=True, kw_only=True)
class Series:
    """What a series folder holds, read from the Parquet footers only."""

    folder: Location
    chunks: tuple[StoredChunk, ...]
    """The series' chunk files, by block."""
    foreign: tuple[tuple[Location, str], ...] = ()
    """Parquet files that are not chunks of this series under their slot's name, with why."""
    damaged: tuple[tuple[int, Location], ...] = ()
    """Files named for a slot of this series that are not complete chunks (cut short, corrupted): slot start, path.
    An extraction over the slot writes it anew."""
    temporaries: tuple[Location, ...] = ()
    """Leftover temporaries of killed runs (or of a run still going); on S3, uploads never completed."""
    mixed: tuple[str, ...] = field(default=())
    """Disagreements between the chunks (chain ids, chunk sizes, filters): the folder is not one table."""
    layout: Layout | None = None
    """``parquet`` (a folder of slot files), ``delta`` (a Delta table) or None (nothing there yet)."""
    version: int | None = None
    """A Delta table's version (of its log) that the chunks were read from."""
    outside: int = 0
    """A Delta table's files that are not in it: replaced by later commits (kept for readers of older versions), or
    written by a run that never committed them; ``vacuum`` frees them."""
    columns: tuple[str, ...] | None = None
    """The columns its chunks were written with (one chunk's; None: no chunk yet). Fewer than its dataset has now
    where an older chainframe wrote them: the chunks it gets keep these (``ChunkTask.columns``), one table still."""
    exact_files: bool = False
    """A Delta table whose data files hold ``uint64`` as is, written before chainframe held it as ``int64`` there
    (:mod:`chainframe.store._file_types`): the files it gets keep that form, so every file of the table reads alike
    (Polars' ``scan_delta`` reads only the newer form: extract with ``--overwrite`` into it, or into a new folder)."""

    @property
    def name(self) -> str:
        """Its folder's name."""
        return self.folder.name

    @property
    def key(self) -> str:
        """The series' name as :func:`series_name` gives it from its chunks' footers: its folder's, unless an older
        chainframe named the folder (:func:`legacy_name`); an empty folder's own."""
        meta = self.meta
        return series_name(meta.dataset, meta.filters, meta.u256) if meta is not None else self.name

    @property
    def dataset(self) -> str:
        return dataset_of(self.name) or self.name

    @property
    def meta(self) -> ChunkMeta | None:
        """The metadata of the series' last chunk (chain id, filters, encoding, chunk size are the same in all)."""
        return self.chunks[-1].meta if self.chunks else None

    def at(self, slot_start: int) -> StoredChunk | None:
        for chunk in self.chunks:
            if chunk.meta.slot[0] == slot_start:
                return chunk
        return None

    @property
    def ranges(self) -> list[BlockSpan]:
        return merge_ranges((c.meta.start, c.meta.end) for c in self.chunks)

    @property
    def gaps(self) -> list[BlockSpan]:
        return gaps_between(self.ranges)

    @property
    def rows(self) -> int:
        return sum(c.meta.rows for c in self.chunks)

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.chunks)

    def segments(self) -> list[list[StoredChunk]]:
        """Runs of adjacent, linked chunks, in block order: each is one stretch of one chain."""
        out: list[list[StoredChunk]] = []
        for chunk in self.chunks:
            if out and linked(out[-1][-1].meta, chunk.meta):
                out[-1].append(chunk)
            else:
                out.append([chunk])
        return out

    def broken_links(self) -> list[tuple[StoredChunk, StoredChunk]]:
        """Adjacent chunks (no gap between them) whose hashes do not link: one of them is on an abandoned fork."""
        return [
            (a, b) for a, b in pairwise(self.chunks) if a.meta.end + 1 == b.meta.start and not linked(a.meta, b.meta)
        ]

    @property
    def problems(self) -> list[str]:
        out = list(self.mixed)
        out += [f"not a chunk of this series (ignored by chainframe, read by globs): {p.name}: {why}" for p, why in
                self.foreign]  # fmt: skip
        out += [f"damaged (not a complete chunk; extract its blocks again): {p.name}" for _, p in self.damaged]
        out += [f"leftover temporary of a killed run: {p.name}" for p in self.temporaries]
        out += [
            f"blocks {a.meta.end} and {b.meta.start} do not link (a reorganization since {a.path.name} was written): "
            "re-run the extraction, or 'chainframe repair', to rewrite what is off the chain"
            for a, b in self.broken_links()
        ]
        return out


def linked(earlier: ChunkMeta, later: ChunkMeta) -> bool:
    return (
        earlier.end + 1 == later.start
        and earlier.last_block_hash is not None
        and earlier.last_block_hash == later.first_parent_hash
    )


def load_series(folder: Location | str) -> Series:
    """The series in ``folder`` (which need not exist yet): a folder of slot files, or a Delta table's snapshot."""
    folder = location(folder)
    where = storage(folder)
    dataset = dataset_of(folder.name)
    snapshot = latest_if_table(folder)
    delta = snapshot is not None
    files = snapshot.files if snapshot is not None else where.files(folder)
    layout: Layout | None = "delta" if delta else "parquet" if files else None
    chunks: list[StoredChunk] = []
    foreign: list[tuple[Location, str]] = []
    damaged: list[tuple[int, Location]] = []
    token = r"__[0-9a-f]+" if delta else ""
    slot_name = re.compile(rf"^{re.escape(dataset or '')}__\d+__(\d{{10}})_to_\d{{10}}{token}\.parquet$")
    footers = where.footers([e.path for e in files])
    columns: tuple[str, ...] | None = None
    for entry, footer, meta in zip(files, footers, metas(footers), strict=True):
        path = entry.path
        why = _not_member(path, meta, folder.name, dataset, delta=delta)
        if meta is None and (named := slot_name.match(path.name)):
            damaged.append((int(named.group(1)), path))
        elif why:
            foreign.append((path, why))
        else:
            assert meta is not None
            chunks.append(StoredChunk(path=path, meta=meta, nbytes=entry.size, folder=folder))
            if columns is None and footer is not None:
                columns = tuple(footer.schema.to_arrow_schema().names)
    chunks.sort(key=lambda c: c.meta.start)
    mixed: list[str] = []
    slots = [c.meta.slot for c in chunks]
    if len(set(slots)) < len(slots):
        mixed.append("more than one file for a slot")
    for what in ("chain_id", "chunk_size"):
        values = sorted({getattr(c.meta, what) for c in chunks})
        if len(values) > 1:
            mixed.append(f"chunks of more than one {what.replace('_', ' ')}: {', '.join(map(str, values))}")
    if len({repr(c.meta.filters) for c in chunks}) > 1:
        mixed.append("chunks with different filters under one name (a digest collision): extract into another --out")
    return Series(
        folder=folder,
        chunks=tuple(chunks),
        foreign=tuple(foreign),
        damaged=tuple(damaged),
        temporaries=tuple(temporaries(folder / DATA if delta else folder)),
        mixed=tuple(mixed),
        columns=columns,
        layout=layout,
        version=snapshot.version if snapshot is not None else None,
        outside=len({str(e.path) for e in where.files(folder / DATA)} - {str(e.path) for e in files}) if delta else 0,
        exact_files=delta and bool(chunks) and not any(f is not None and KEY in (f.metadata or {}) for f in footers),
    )


def _not_member(path: Location, meta: ChunkMeta | None, name: str, dataset: str | None, *, delta: bool) -> str:
    """Why ``path`` is not a chunk of the series folder ``name`` ("" when it is one)."""
    if meta is None:
        return "not a complete chunk of this chainframe layout (foreign, truncated, unfinished or older)"
    named = series_name(meta.dataset, meta.filters, meta.u256)
    if meta.dataset != dataset or name not in (named, legacy_name(named)):
        return f"a chunk of series {named!r}"
    named = chunk_path(path.parent, dataset=meta.dataset, chain_id=meta.chain_id, slot=meta.slot).name
    if (path.name.rsplit("__", 1)[0] + ".parquet" if delta else path.name) != named:
        return f"covers blocks {meta.start}..{meta.end} but is not named for their slot"
    return ""


def series_folders(out: Location | str) -> list[Location]:
    """The series folders under an output folder (sub-folders named like one that hold Parquet files)."""
    out = location(out)
    where = storage(out)
    return [p for p in named_series_folders(out) if is_table(p) or where.files(p)]  # Delta (S3's default): one listing


def named_series_folders(out: Location | str) -> list[Location]:
    """The sub-folders of an output folder named like a series, with or without a file: a run killed before its
    first commit leaves a folder holding only its temporary."""
    out = location(out)
    return [p for p in storage(out).folders(out) if not p.name.startswith(".") and dataset_of(p.name)]


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
