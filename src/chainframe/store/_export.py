"""One-off exports: the asked blocks of a series written as one CSV, JSON or Parquet file beside the series.

The series stays the table (binary columns, chunk files that resume, repair and verify); an export is a copy for a
tool that wants one file: CSV and JSON (one object per line) always carry binary columns as ``0x`` hex text, since
neither can hold bytes; a Parquet export does with ``hex``. ``columns`` picks what the export holds, in that order.
DuckDB writes it, streaming from the chunk files, so the export's size is not bounded by memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe._errors import InputError
from chainframe.store._backends import exact_types_of
from chainframe.store._file_types import sql_columns

ExportFormat = Literal["parquet", "csv", "json"]
FORMATS: tuple[ExportFormat, ...] = ("parquet", "csv", "json")
PARQUET_CODECS = ("zstd", "lz4", "snappy", "gzip", "brotli", "uncompressed")
TEXT_CODECS = ("gzip", "zstd", "uncompressed")


def check_compression(compression: str | None, format: ExportFormat) -> str | None:
    """``compression`` (a codec, ``"zstd:3"`` with a level) checked for ``format`` (None: zstd for Parquet, none
    for text)."""
    if compression is None:
        return None
    name, _, level = compression.lower().partition(":")
    codecs = PARQUET_CODECS if format == "parquet" else TEXT_CODECS
    if name not in codecs:
        raise InputError(f"compression {name!r} is not one for {format}: {', '.join(codecs)}")
    if level and (not level.isdigit() or format != "parquet" or name not in ("zstd", "gzip", "brotli")):
        raise InputError(f"compression level {level!r}: a number, for zstd, gzip or brotli Parquet exports")
    return compression.lower()


def export_path(out: Path, series: str, first: int, last: int, format: ExportFormat, compression: str | None) -> Path:
    """``OUT/<series>__<first>_to_<last>.<ext>``: beside the series folders, never inside one (a glob over a series
    reads chunks only)."""
    ext = {"parquet": "parquet", "csv": "csv", "json": "jsonl"}[format]
    codec = (compression or "").partition(":")[0]
    suffix = {"gzip": ".gz", "zstd": ".zst"}.get(codec, "") if format != "parquet" else ""
    return out / f"{series}__{first:010d}_to_{last:010d}.{ext}{suffix}"


def export(
    files: Sequence[str],
    target: Path,
    *,
    ranges: Sequence[tuple[int, int]],
    sort: Sequence[str],
    format: ExportFormat,
    hex: bool,
    columns: Sequence[str] | None,
    compression: str | None,
    block_column: str = "block_number",
) -> int:
    """Write the rows of ``files`` in ``ranges`` (blocks, both ends included) to ``target``; return the rows."""
    import duckdb

    if not files:
        raise InputError(f"nothing to export into {target.name}: the series holds no chunk for these blocks")
    schema = pq.read_schema(files[0])
    names = list(columns) if columns else [f.name for f in schema if not f.name.startswith("__")]
    missing = [c for c in names if c not in schema.names]
    if missing:
        raise InputError(f"column {missing[0]!r} is not in {target.name.split('__')[0]}; its columns: "
                         f"{', '.join(schema.names)}")  # fmt: skip
    hexed = hex or format != "parquet"
    exact = sql_columns(exact_types_of(files[0]))  # a Delta data file's uint64 columns, held as int64
    select = ", ".join(exact[c] if c in exact else _column(schema.field(c), hexed) for c in names)
    listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    where = " OR ".join(f'"{block_column}" BETWEEN {int(a)} AND {int(b)}' for a, b in ranges)
    order = ", ".join(f'"{c}"' for c in sort if c in schema.names)
    options = {"parquet": "FORMAT PARQUET", "csv": "FORMAT CSV, HEADER", "json": "FORMAT JSON"}[format]
    codec, _, level = (compression or ("zstd" if format == "parquet" else "")).partition(":")
    if codec:
        options += f", COMPRESSION '{codec}'" + (f", COMPRESSION_LEVEL {int(level)}" if level else "")
    temporary = target.with_name(f".{target.name}.tmp")
    query = (
        f"SELECT {select} FROM read_parquet([{listed}]) WHERE {where}"  # noqa: S608 (numbers, quoted names and paths)
        + (f" ORDER BY {order}" if order else "")
    )
    con = duckdb.connect()
    try:
        con.execute("SET preserve_insertion_order = true")
        rows = con.execute(f"SELECT count(*) FROM ({query})").fetchone()  # noqa: S608 (as above)
        con.execute(f"COPY ({query}) TO '{str(temporary).replace(chr(39), chr(39) * 2)}' ({options})")
    finally:
        con.close()
    temporary.replace(target)  # whole or absent, as a chunk file
    return int(rows[0]) if rows else 0


def _column(field: pa.Field, hexed: bool) -> str:
    name = '"' + str(field.name).replace('"', '""') + '"'
    kind = field.type
    if hexed and (pa.types.is_binary(kind) or pa.types.is_fixed_size_binary(kind) or pa.types.is_large_binary(kind)):
        return f"'0x' || lower(hex({name})) AS {name}"
    if hexed and pa.types.is_list(kind) and (pa.types.is_binary(kind.value_type) or
                                              pa.types.is_fixed_size_binary(kind.value_type)):  # fmt: skip
        return f"list_transform({name}, lambda x: '0x' || lower(hex(x))) AS {name}"
    return name
