"""Datasets whose rows are JSON objects of one kind, mapped column -> JSON key (the common case)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import Dataset, build, build_arrow, read_fields

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl


class ObjectDataset(Dataset):
    """Rows are objects of one kind; ``sources`` maps each sourced column to its JSON key."""

    sources: Mapping[str, str]
    answers: ClassVar[int | None] = None
    """How the answers hold the rows, for the native scanner (``chainframe.datasets._native``: RESULT, BATCH or
    BATCH_LISTS); None: the pure path only."""

    @property
    def fields(self) -> dict[str, pl.DataType]:
        return read_fields(self.sources)

    def rows(self, frame: pl.DataFrame, *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        """Rows from a frame of objects (JSON keys as text); subclasses add derived columns."""
        return build(frame, self.sources, self.columns, chain_id=chain_id, u256=u256)

    def native_kinds(self, u256: U256) -> dict[str, tuple[str, Any]]:
        """``column -> (JSON key, kind)`` for the native scanner; subclasses add derived ones (a list's length)."""
        from chainframe.datasets._native import kinds_of  # deferred: the C scanner loads when answers are scanned

        return kinds_of(self.sources, u256)

    def scan_answers(
        self, bodies: Sequence[bytes], kinds: dict[str, tuple[str, Any]]
    ) -> tuple[int, dict[str, pa.Array]] | None:
        """A piece's answers' rows through the native scanner, in one call (None: one was declined); subclasses add
        derived columns."""
        from chainframe.datasets import _native  # deferred: the C scanner loads when answers are scanned

        assert self.answers is not None
        return _native.scan(bodies, kinds, self.answers)

    def scanned(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table | None:
        """The answers' rows through the native scanner, or None when it is off, not built, or declines one answer
        (then the pure path decodes them all, and names any bad value)."""
        from chainframe.datasets import _native  # deferred: the C scanner loads when answers are scanned

        if self.answers is None or not _native.available():
            return None
        scanned = self.scan_answers(bodies, self.native_kinds(u256))
        if scanned is None:
            return None
        n, out = scanned
        return build_arrow(out, self.columns, n, chain_id=chain_id, u256=u256)

    def from_objects(self, array: bytes, *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        """Rows from a JSON array of objects of this dataset's kind (e.g. recorded answers)."""
        frame = pl.read_json(io.BytesIO(array), schema=self.fields) if array.strip() != b"[]" else None
        return self.rows(frame if frame is not None else pl.DataFrame(schema=self.fields), chain_id=chain_id, u256=u256)

    def stack(self, frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
        """One frame for a whole chunk, so each column is converted once (per-call overheads are paid once)."""
        frames = [f for f in frames if f.height]
        return pl.concat(frames, how="vertical") if frames else pl.DataFrame(schema=self.fields)

    def concat(self, tables: Sequence[pa.Table], u256: U256 = "decimal") -> pa.Table:
        tables = [t for t in tables if t.num_rows]
        return pa.concat_tables(tables) if tables else self.empty(u256)
