"""Issue 41: every Delta reader reads every column of every dataset, and chainframe's readers give its exact types.

A Delta table declares ``uint64`` as ``long`` and its data files hold such columns (at any depth) as ``int64`` with
the same 64 bits. Every dataset of the catalogue, in both u256 encodings, is extracted from the session devnet as a
Delta table and as plain Parquet, and read back through each reader: the foreign ones (deltalake's pyarrow dataset,
Polars' native ``scan_delta``, DuckDB over that dataset) must give the plain extraction's values in the declared types
(``uint64`` as the same bits), chainframe's (``scan``, ``open_duckdb``, the store's pyarrow reader) the plain
extraction's types and values exactly. A unit test puts values >= 2^63 (top level and nested) through every reader.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import deltalake
import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe import open_duckdb, scan
from chainframe.datasets import DATASETS
from chainframe.devnet import DEV_ACCOUNTS, Devnet
from chainframe.engine import extract
from chainframe.store import (
    ChunkMeta,
    ChunkWriter,
    data_file,
    delta_schema,
    export,
    read_batches,
    read_meta,
    read_table,
    snapshot_uris,
    write_chunk,
)
from chainframe.store._delta import DeltaWriter
from chainframe.store._file_types import KEY

BLOCKS = "0:12"
"""The devnet's first blocks: its EIP-7702 transaction (block 2), nested calls and transfers, so every nested uint64
but a withdrawal's (anvil makes none) holds values; 4 extractions of every dataset take about 5 s."""
SLOT = "0x" + "00" * 31 + "01"
TOTAL_SUPPLY = "0x18160ddd"


@dataclass(frozen=True)
class Extracted:
    plain: Path
    delta: Path
    series: list[str]
    """Every series both hold: each dataset in each u256 encoding."""


@pytest.fixture(scope="module")
def extracted(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Extracted:
    root = tmp_path_factory.mktemp("every_reader")
    store, token = devnet_session.truth.contracts["Store"], devnet_session.truth.contracts["Token"]
    filters = {"addresses": [store, DEV_ACCOUNTS[0]], "tokens": [token], "storage_keys": [SLOT],
               "calls": [{"to": token, "data": TOTAL_SUPPLY}]}  # fmt: skip
    for table in ("parquet", "delta"):
        for u256 in ("decimal", "binary"):
            extract(list(DATASETS), blocks=BLOCKS, out=root / table, rpc=devnet_session.node.url, table=table,
                    u256=u256, progress=False, **filters)  # fmt: skip
    series = sorted(p.name for p in (root / "parquet").iterdir() if p.is_dir() and not p.name.startswith("."))
    assert series == sorted(p.name for p in (root / "delta").iterdir() if p.is_dir() and not p.name.startswith("."))
    assert len(series) == 2 * len(DATASETS)  # both encodings of every dataset (some hold no u256 column)
    return Extracted(root / "parquet", root / "delta", series)


def _plain(extracted: Extracted, series: str) -> pa.Table:
    """The plain extraction's rows of ``series``, as written."""
    return pa.concat_tables(pq.read_table(f) for f in sorted((extracted.plain / series).glob("*.parquet")))


def _has_uint64(dtype: pa.DataType) -> bool:
    if pa.types.is_uint64(dtype):
        return True
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _has_uint64(dtype.value_type)
    return pa.types.is_struct(dtype) and any(_has_uint64(f.type) for f in dtype)


def _differences(got: pl.DataFrame, want: pl.DataFrame) -> list[str]:
    """The columns whose type or values differ, rows matched by sorting both on every column that is not nested."""
    if got.columns != want.columns:
        return [f"columns {got.columns} instead of {want.columns}"]
    if got.height != want.height:
        return [f"{got.height} rows instead of {want.height}"]
    keys = [c for c, t in want.schema.items() if not t.is_nested()]
    got, want = got.sort(keys, nulls_last=True), want.sort(keys, nulls_last=True)
    out = []
    for column in want.columns:
        if got[column].dtype != want[column].dtype:
            out.append(f"{column}: {got[column].dtype} instead of {want[column].dtype}")
        elif not got[column].equals(want[column]):
            out.append(f"{column}: values differ")
    return out


# --- the readers -----------------------------------------------------------------------------------------------------


def _deltalake(out: Path, series: str) -> pa.Table:
    return deltalake.DeltaTable(str(out / series)).to_pyarrow_dataset().to_table()


def _scan_delta(out: Path, series: str) -> pa.Table:
    return pl.scan_delta(str(out / series)).collect().to_arrow()  # Polars' own reader (no use_pyarrow)


def _duckdb_over_dataset(out: Path, series: str) -> pa.Table:
    con = duckdb.connect()
    try:
        con.register("rows", deltalake.DeltaTable(str(out / series)).to_pyarrow_dataset())
        return con.sql("SELECT * FROM rows").to_arrow_table()
    finally:
        con.close()


FOREIGN: dict[str, Callable[[Path, str], pa.Table]] = {
    "deltalake": _deltalake,
    "scan_delta": _scan_delta,
    "duckdb": _duckdb_over_dataset,
}


def _scan(out: Path) -> Callable[[str], pl.DataFrame]:
    return lambda series: scan(out, series).collect()


def _open_duckdb(out: Path) -> Callable[[str], pa.Table]:
    con = open_duckdb(out)  # one view per series: opened once for all of them
    return lambda series: con.sql(f'SELECT * FROM "{series}"').to_arrow_table()  # noqa: S608 (a series name)


def _read_table(out: Path) -> Callable[[str], pa.Table]:
    def read(series: str) -> pa.Table:
        folder = out / series
        delta = (folder / "_delta_log").is_dir()
        files = snapshot_uris(folder) if delta else sorted(map(str, folder.glob("*.parquet")))
        return pa.concat_tables(read_table(f) for f in files)

    return read


OWN: dict[str, Callable[[Path], Callable[[str], pa.Table | pl.DataFrame]]] = {
    "scan": _scan,
    "open_duckdb": _open_duckdb,
    "read_table": _read_table,
}


def _arrow_types(got: pa.Table, want: pa.Table) -> list[str]:
    """The columns whose Arrow types differ (Polars, which compares the values, would merge some: fixed-size and
    plain binaries)."""
    return [f"{f.name}: {got.schema.field(f.name).type} instead of {f.type}" for f in want.schema
            if f.name in got.column_names and got.schema.field(f.name).type != f.type]  # fmt: skip


@pytest.mark.parametrize("reader", FOREIGN)
def test_other_readers_read_every_column_as_the_table_declares(extracted: Extracted, reader: str) -> None:
    """Values equal to the plain extraction's, in the declared types: a ``uint64`` as a ``long`` of the same bits."""
    problems, columns, rows, started = [], 0, 0, time.monotonic()
    for series in extracted.series:
        want = _plain(extracted, series)
        declared = delta_schema(extracted.delta / series)  # the types its log declares
        try:
            got = FOREIGN[reader](extracted.delta, series)
        except Exception as exc:
            problems.append(f"{series}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        signed = [
            f.name for f in want.schema if pa.types.is_uint64(f.type) and got.schema.field(f.name).type != pa.int64()
        ]
        problems += [f"{series}.{c}: {got.schema.field(c).type}, not int64" for c in signed]
        same_bits = pl.from_arrow(want.cast(declared, safe=False))  # the 64 bits of a uint64, as a long
        problems += [f"{series}.{p}" for p in _differences(pl.from_arrow(got.cast(declared)), same_bits)]  # type: ignore[arg-type]
        columns, rows = columns + want.num_columns, rows + want.num_rows
    took = time.monotonic() - started
    print(f"\n{reader}: {len(extracted.series)} series, {columns} columns, {rows} rows in {took:.1f} s")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("reader", OWN)
def test_chainframes_readers_give_the_plain_types_and_values(extracted: Extracted, reader: str) -> None:
    problems, started = [], time.monotonic()
    plain, delta = OWN[reader](extracted.plain), OWN[reader](extracted.delta)
    for series in extracted.series:
        want, got = plain(series), delta(series)
        if isinstance(want, pa.Table):
            assert isinstance(got, pa.Table)
            problems += [f"{series}.{p}" for p in _arrow_types(got, want)]
            got, want = pl.from_arrow(got), pl.from_arrow(want)
        problems += [f"{series}.{p}" for p in _differences(got, want)]  # type: ignore[arg-type]
    print(f"\n{reader}: {len(extracted.series)} series in {time.monotonic() - started:.1f} s")
    assert problems == [], "\n".join(problems)


def test_nested_uint64_columns_hold_values(extracted: Extracted) -> None:
    """The matrix above reads nested uint64 values, not only empty lists."""
    for series, column in (("transactions", "authorization_list"), ("traces", "trace_address")):
        rows = _plain(extracted, series)
        assert _has_uint64(rows.schema.field(column).type)
        assert pa.compute.sum(pa.compute.list_value_length(rows[column])).as_py() > 0, series


# --- values past 2^63 ------------------------------------------------------------------------------------------------

AUTHORIZATION = pa.struct([("chain_id", pa.uint64()), ("address", pa.binary(20)), ("nonce", pa.uint64()),
                           ("y_parity", pa.uint8())])  # fmt: skip
WITHDRAWAL = pa.struct([("index", pa.uint64()), ("amount", pa.uint64())])
SCHEMA = pa.schema([
    ("block_number", pa.uint64()), ("nonce", pa.uint64()), ("trace_address", pa.list_(pa.uint64())),
    ("authorization_list", pa.list_(AUTHORIZATION)), ("withdrawal", WITHDRAWAL),
    ("decoded_value", pa.uint64()),  # a decoded event's column: in no catalogue
    ("address", pa.binary(20)),
])  # fmt: skip
TOP = 2**64 - 2  # an EIP-7702 authorization's nonce can be this


def _rows() -> pa.Table:
    auth = {"chain_id": TOP, "address": b"\x01" * 20, "nonce": 2**63, "y_parity": 1}
    return pa.table({
        "block_number": [3, 4, 5],
        "nonce": [TOP, 2**63, None],
        "trace_address": [[2**63, 0, TOP], None, []],
        "authorization_list": [[auth, None], None, [{**auth, "chain_id": 1, "nonce": 2**63 - 1}]],
        "withdrawal": [{"index": TOP, "amount": 2**64 - 1}, None, {"index": 0, "amount": 2**63}],
        "decoded_value": [2**64 - 1, 0, 2**63],
        "address": [b"\x02" * 20] * 3,
    }, schema=SCHEMA)  # fmt: skip


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, Path, str]:
    """The same rows as a Delta table ``tmp/delta/transactions`` (one data file, committed) and as a plain folder."""
    rows, meta = _rows(), ChunkMeta(dataset="transactions", chain_id=1, start=3, end=5, chunk_size=10, rows=3,
                                    finalized=9)  # fmt: skip
    folder = tmp_path / "delta" / "transactions"
    writer = DeltaWriter(folder, SCHEMA, name="transactions")
    with ChunkWriter(data_file(folder, dataset="transactions", chain_id=1, slot=(0, 9)), SCHEMA, delta=True,
                     row_group_rows=2) as chunk:  # fmt: skip
        for i in range(rows.num_rows):  # one row at a time: held, then written a row group at a time
            chunk.write(rows.slice(i, 1))
        done = chunk.finish(meta, publish=True)
    assert done.blocks == (3, 5)
    writer.publish([done])
    plain = tmp_path / "plain" / "transactions"
    write_chunk(rows, plain / "transactions__1__0000000000_to_0000000009.parquet", meta)
    return tmp_path / "delta", tmp_path / "plain", done.path


def test_values_past_2_63_survive_every_reader(written: tuple[Path, Path, str], tmp_path: Path) -> None:
    delta, plain, path = written
    rows = _rows()
    footer = pq.read_metadata(path).metadata
    assert KEY in footer
    assert read_meta(path) is not None  # the chunk's metadata reads beside the extra key
    assert pq.read_schema(path).field("nonce").type == pa.int64()  # as the table declares
    assert KEY not in (pq.read_metadata(plain / "transactions" / "transactions__1__0000000000_to_0000000009.parquet")
                       .metadata)  # fmt: skip
    assert pq.read_schema(plain / "transactions" / "transactions__1__0000000000_to_0000000009.parquet") == SCHEMA

    # chainframe's readers: exactly the rows written.
    assert read_table(path).equals(rows)
    assert pa.Table.from_batches(list(read_batches(path, batch_size=1))).equals(rows)
    assert read_table(path, columns=["trace_address"])["trace_address"].equals(rows["trace_address"])
    scanned, written_rows = scan(delta, "transactions").collect(), pl.DataFrame(rows)
    assert scanned.schema == written_rows.schema
    assert scanned.equals(written_rows)
    assert scanned["authorization_list"][0][0]["chain_id"] == TOP

    def duck(out: Path) -> pa.Table:
        con = open_duckdb(out)
        try:
            return con.sql("SELECT * FROM transactions ORDER BY block_number").to_arrow_table()
        finally:
            con.close()

    assert duck(delta).equals(duck(plain))
    assert duck(delta)["withdrawal"].to_pylist()[0] == {"index": TOP, "amount": 2**64 - 1}
    exported = []
    for folder, files in ((delta, [path]), (plain, [str(p) for p in (plain / "transactions").glob("*.parquet")])):
        target = tmp_path / f"{folder.name}.parquet"
        export(files, target, ranges=[(0, 9)], sort=["block_number"], format="parquet", hex=False, columns=None,
               compression=None)  # fmt: skip
        exported.append(pq.read_table(target))
    assert [f.type for f in exported[0].schema] == [f.type for f in exported[1].schema]  # DuckDB may say "not null"
    assert exported[0].to_pylist() == exported[1].to_pylist()
    assert exported[0]["decoded_value"].to_pylist() == [2**64 - 1, 0, 2**63]

    # Other readers: the declared long, holding the same 64 bits.
    declared = delta_schema(delta / "transactions")  # the types its log declares
    same_bits = rows.cast(declared, safe=False)
    assert same_bits["nonce"].to_pylist() == [-2, -(2**63), None]
    native = pl.scan_delta(str(delta / "transactions")).collect()
    assert native["nonce"].dtype == pl.Int64
    assert native.to_arrow().cast(declared).equals(same_bits)
    assert (
        deltalake.DeltaTable(str(delta / "transactions"))
        .to_pyarrow_dataset()
        .to_table()
        .cast(declared)
        .equals(same_bits)
    )
