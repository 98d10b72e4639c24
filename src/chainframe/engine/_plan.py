"""What to extract: validated inputs and the chunk tasks they make.

A :class:`ChunkTask` is plain data (JSON-able): it names a dataset, the blocks its file will cover, its filters, the
final file (its slot's name) and how many rows of the file already there it keeps. Running it twice gives the same
file, so tasks can be retried, resumed, or shipped to other workers.

Planning compares what is asked with what the series folder holds: a slot whose file already covers the asked blocks
is left alone; a tip file is extended (its rows kept, only the new blocks fetched); a slot with a repair is rewritten
from its fork block; ``overwrite`` refetches every asked slot whole. A slot's file always covers one contiguous run of
blocks, so a request that would leave a hole inside a slot fetches the hole too.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import pyarrow as pa

from chainframe._errors import InputError
from chainframe.datasets import DATASETS, U256, BlockRange
from chainframe.families import ChainFamily, family_named
from chainframe.store import DELTA_DATA, Layout, Series, chunk_path, slot_of


def check_datasets(names: Sequence[str]) -> list[str]:
    """The datasets named, each once, by their own names (an alias such as cryo's ``txs`` stands for its dataset)."""
    if isinstance(names, str):
        names = [names]
    if not names:
        raise InputError(f"name at least one dataset: {', '.join(DATASETS)}")
    aliases = {alias: d.name for d in DATASETS.values() for alias in d.aliases}
    unknown = [n for n in names if n not in DATASETS and n not in aliases]
    if unknown:
        raise InputError(f"unknown dataset {unknown[0]!r}; the datasets are: {', '.join(DATASETS)}")
    return list(dict.fromkeys(aliases.get(n, n) for n in names))


def check_filters(dataset: str, filters: Mapping[str, Any]) -> dict[str, Any]:
    """Validate and normalize a dataset's filters (JSON-able, lowercase hex) without sending anything."""
    out = DATASETS[dataset].check_inputs(filters)
    json.dumps(out)  # JSON-able by construction; fail here rather than in a worker
    return out


@dataclass(frozen=True, kw_only=True)
class ChunkTask:
    dataset: str
    start: int
    """First block the finished file covers."""
    end: int
    """Last block the finished file covers (included)."""
    filters: Mapping[str, Any] = field(default_factory=dict)
    u256: U256 = "decimal"
    chunk_size: int
    path: str
    """The slot's file name: in a Parquet folder, the file itself (written to a temporary, published over this
    name); in a Delta table, the name each written file extends with a token of its own (:meth:`target`)."""
    layout: Layout = "parquet"
    exact_files: bool = False
    """A Delta table whose files hold ``uint64`` as is (written before chainframe held it as ``int64`` there): this
    task's file does too, so every file of the table reads alike (:attr:`chainframe.store.Series.exact_files`)."""
    current: str | None = None
    """The slot's file now, whose rows of blocks ``start..keep_through`` are kept (None: ``path``)."""
    keep_through: int | None = None
    """Rows of blocks ``start..keep_through`` come from the slot's current file; the rest are fetched."""
    reason: str = "new"
    """Why the task exists: ``new``, ``extend``, ``repair`` or ``overwrite`` (for reports)."""
    verify: bool = False
    """Prove each piece's rows against its blocks' headers before keeping them (:mod:`chainframe.engine._verified`)."""
    family: str | None = None
    """The chain family whose rules ``verify`` proves the rows by, by name (None: the chain id's)."""
    decoded_with: str | None = None
    """The ABI whose entry its filter is, for the file's footer (:attr:`chainframe.store.ChunkMeta.decoded_with`)."""
    columns: tuple[str, ...] | None = None
    """The columns the file holds, where its series was written with fewer than the dataset has now (by an older
    chainframe, before columns were added): its chunks keep that schema, so the folder stays one table that every
    reader reads whole, and a kept part of a chunk is not refused. None: the dataset's columns."""

    @property
    def blocks(self) -> BlockRange:
        return BlockRange(self.start, self.end)

    @property
    def chain_family(self) -> ChainFamily | None:
        """:attr:`family` itself (None: the chain id's)."""
        return family_named(self.family) if self.family is not None else None

    @property
    def fetch_start(self) -> int:
        return self.start if self.keep_through is None else self.keep_through + 1

    @property
    def kept_from(self) -> str:
        """The file the kept rows are read from."""
        return self.current or self.path

    def target(self) -> str:
        """Where this attempt writes its file: the slot's name (Parquet), or a new unique name (Delta: a file is
        never written twice, so a late attempt cannot change a file another attempt's commit named)."""
        if self.layout == "parquet":
            return self.path
        stem = self.path.removesuffix(".parquet")
        return f"{stem}__{secrets.token_hex(8)}.parquet"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def schema(self) -> pa.Schema:
        """The schema of the task's file (with its filters: logs extracted with ``event`` add decoded columns)."""
        schema = DATASETS[self.dataset].schema_with(self.filters, self.u256)
        if self.columns is None:
            return schema
        return pa.schema([schema.field(name) for name in self.columns], metadata=schema.metadata)

    def stored(self, table: pa.Table) -> pa.Table:
        """``table``'s columns that the file holds (see :attr:`columns`)."""
        return table if self.columns is None else table.select(list(self.columns))


def slots(blocks: BlockRange, chunk_size: int) -> Iterator[BlockRange]:
    """The parts of ``blocks`` in each aligned slot of ``chunk_size`` blocks."""
    first = blocks.start - blocks.start % chunk_size
    for aligned in range(first, blocks.end + 1, chunk_size):
        yield BlockRange(max(aligned, blocks.start), min(aligned + chunk_size - 1, blocks.end))


class Wanted(NamedTuple):
    """One series a round is asked to cover."""

    dataset: str
    filters: Mapping[str, Any]
    u256: U256
    chunk_size: int | None
    """None: the series' own (or the dataset's default for a new series)."""
    decoded_with: str | None = None
    """The ABI whose entry its filter is (:attr:`chainframe.store.ChunkMeta.decoded_with`), for its files' footers."""


def plan(
    want: Wanted,
    blocks: BlockRange | list[BlockRange] | None,
    *,
    series: Series,
    chain_id: int,
    overwrite: bool = False,
    repairs: Mapping[int, int | None] | None = None,
    head: int,
    layout: Layout = "parquet",
) -> tuple[list[ChunkTask], list[str]]:
    """Tasks of ``want``'s series for the asked ``blocks`` (one range or several; None: repairs only) and ``repairs``
    (slot start -> keep rows through, or None), plus the files to delete (slots wholly above a head that moved back).
    Two asked ranges in one slot make one task over both and the blocks between (a file holds one run of blocks)."""
    dataset, filters, u256 = want.dataset, want.filters, want.u256
    chunk_size = want.chunk_size or DATASETS[dataset].chunk_size_for(filters)
    repairs = dict(repairs or {})
    asked: dict[int, BlockRange] = {}
    for run in [blocks] if isinstance(blocks, BlockRange) else blocks or ():
        for piece in slots(run, chunk_size):
            slot = piece.start - piece.start % chunk_size
            had = asked.get(slot)
            asked[slot] = piece if had is None else BlockRange(min(had.start, piece.start), max(had.end, piece.end))
    tasks: list[ChunkTask] = []
    deletions: list[str] = []
    damaged = {start for start, _ in series.damaged}
    columns = _older_columns(series, DATASETS[dataset].schema_with(filters, u256))
    for slot_start in sorted(set(asked) | set(repairs)):
        stored = series.at(slot_start)
        have = (stored.meta.start, min(stored.meta.end, head)) if stored else None
        if stored is not None and stored.meta.start > head:
            deletions.append(str(stored.path))
            have = None
        part: BlockRange | None = asked.get(slot_start)
        cover = [x for x in (have, (part.start, part.end) if part else None) if x is not None]
        if not cover:
            continue
        start, end = min(c[0] for c in cover), max(c[1] for c in cover)
        if slot_start in repairs:
            keep = repairs[slot_start] if have is not None and have[0] == start else None
            reason = "repair"
        elif slot_start in damaged:
            keep, reason = None, "repair"  # the file at the slot's name is unreadable: written anew
        elif have is not None and not overwrite and have[0] == start:
            keep, reason = have[1], "extend"
        else:
            keep, reason = None, "overwrite" if overwrite and have is not None else "new"
        if keep is not None and keep >= end:
            continue  # the stored file already covers it
        folder = series.folder / DELTA_DATA if layout == "delta" else series.folder
        path = chunk_path(folder, dataset=dataset, chain_id=chain_id, slot=slot_of(start, chunk_size))
        tasks.append(
            ChunkTask(
                dataset=dataset,
                start=start,
                end=end,
                filters=dict(filters),
                u256=u256,
                chunk_size=chunk_size,
                path=str(path),
                layout=layout,
                exact_files=series.exact_files,
                current=str(stored.path) if stored is not None and layout == "delta" else None,
                keep_through=keep,
                reason=reason,
                columns=columns,
                decoded_with=want.decoded_with,
            )
        )
    return tasks, deletions


def _older_columns(series: Series, schema: pa.Schema) -> tuple[str, ...] | None:
    """The series' columns where they are fewer than ``schema``'s (written before columns were added), else None.
    Kept for every chunk it gets, --overwrite's too: a table's schema is its chunks' (a Delta table's is in its log), so
    the new columns come with a new folder. A series with a column the dataset no longer has is not changed here."""
    stored = series.columns
    if stored is None or not set(stored) < set(schema.names):
        return None
    return stored
