"""What a dataset is: its columns (from the one table), its sort order, how it is fetched, and a pure transform from
answer bytes to an Arrow table.

Fetching is kept apart from transforming: ``fetch`` returns the answers as received, ``transform`` is a pure function
of those bytes (so a chunk can be re-decoded, tested on recorded answers, or run in a worker thread).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.datasets._columns import COLUMNS, U256, schema
from chainframe.datasets._convert import constant, convert_frame, read_dtype

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


@dataclass(frozen=True)
class BlockRange:
    """Blocks ``start`` to ``end``, both included."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"a block range needs 0 <= start <= end; got {self.start}..{self.end}")

    def __iter__(self) -> Any:
        return iter(range(self.start, self.end + 1))

    def __len__(self) -> int:
        return self.end - self.start + 1


class Dataset(ABC):
    """One dataset. Subclasses set the class attributes and implement ``fetch`` and ``transform``."""

    name: str
    columns: tuple[str, ...]
    sort: tuple[str, ...]
    doc: str
    unprovable: ClassVar[Mapping[str, str]] = {}
    """Columns no check proves against the chain, each with why (``chainframe schema`` lists them); every other
    column is proven by ``verify`` from a header hash, a root, the bloom, a signature or derivation."""

    @property
    def schema(self) -> pa.Schema:
        return schema(self.columns)

    def schema_for(self, u256: U256) -> pa.Schema:
        return schema(self.columns, u256)

    @abstractmethod
    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        """The answers (as received) that ``transform`` needs for these blocks."""

    @abstractmethod
    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        """Answers to rows: pure, vectorized. ``u256`` picks how wei columns are stored (see the type rules)."""

    def empty(self, u256: U256 = "decimal") -> pa.Table:
        return self.schema_for(u256).empty_table()


def read_fields(sources: Mapping[str, str]) -> dict[str, pl.DataType]:
    """The JSON keys to read for a column -> key mapping, each as text of the right shape."""
    return {key: read_dtype(COLUMNS[column].kind) for column, key in sources.items()}


def build(
    frame: pl.DataFrame,
    sources: Mapping[str, str],
    columns: tuple[str, ...],
    *,
    chain_id: int,
    u256: U256 = "decimal",
    extra: Mapping[str, pa.Array] | None = None,
) -> pa.Table:
    """Convert ``frame`` (JSON keys as text) into a table of ``columns``: sourced ones converted, ``chain_id`` and
    ``block_time`` derived, ``extra`` ones given; anything else is null (the node did not send it)."""
    n = frame.height
    kinds = {column: (key, COLUMNS[column].kind_for(u256)) for column, key in sources.items()}
    out: dict[str, pa.Array] = {**convert_frame(frame, kinds, block_key=sources.get("block_number")), **(extra or {})}
    return build_arrow(out, columns, n, chain_id=chain_id, u256=u256)


def build_arrow(
    out: Mapping[str, pa.Array], columns: tuple[str, ...], n: int, *, chain_id: int, u256: U256 = "decimal"
) -> pa.Table:
    """Typed arrays -> the dataset's table: ``chain_id`` and ``block_time`` derived, missing columns null."""
    out = dict(out)
    out["chain_id"] = constant(chain_id, n, pa.uint64())
    if "block_time" in columns:
        seconds = out.get("block_timestamp", out.get("timestamp"))
        if seconds is not None:
            out["block_time"] = pc.cast(pc.cast(seconds, pa.int64()), pa.timestamp("s", tz="UTC"))
    target = schema(columns, u256)
    arrays = []
    for field in target:
        given = out.get(field.name)
        arrays.append(pa.nulls(n, field.type) if given is None else pc.cast(given, field.type))
    return pa.Table.from_arrays(arrays, schema=target)
