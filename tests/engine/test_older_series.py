"""A folder written by an older chainframe, before the chain families' columns were added (issue 43), extended by
this one: its series keep the columns they were written with, so a kept part of a chunk is read back into its file,
the folder stays one table every reader reads whole, and it verifies."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from chainframe import extract
from chainframe.devnet import Devnet
from chainframe.families import FAMILIES
from chainframe.store import load_series
from chainframe.verify import verify_folder

NAMES = ("blocks", "transactions", "receipts", "logs")
ADDED = {name: {c for f in FAMILIES for c in f.columns.get(name, {})} for name in NAMES}
"""The columns this chainframe has that the older one did not write."""


def _older(out: Path) -> None:
    """Every chunk rewritten as the older chainframe wrote it: the same rows and footer, without the added columns."""
    for name in NAMES:
        for path in (out / name).glob("*.parquet"):
            table = pq.read_table(path)
            footer = {k: v for k, v in (pq.read_metadata(path).metadata or {}).items() if k != b"ARROW:schema"}
            older = table.drop_columns(sorted(ADDED[name] & set(table.column_names)))
            pq.write_table(older.replace_schema_metadata(footer), path)


def test_an_older_series_keeps_its_columns_when_extended(devnet: Devnet, tmp_path: Path) -> None:
    assert any(ADDED.values())
    options = {"rpc": devnet.http_url, "out": tmp_path, "chunk_size": 10, "progress": False}
    extract(list(NAMES), blocks="0:14", **options)  # slot 10..19 half written: its rows are kept by the next run
    _older(tmp_path)
    before = {name: load_series(tmp_path / name).columns for name in NAMES}
    assert all(not ADDED[name] & set(before[name] or ()) for name in NAMES)
    report = extract(list(NAMES), blocks="0:34", **options)
    assert (report.datasets["blocks"]["written"], report.datasets["blocks"]["skipped"]) == (3, 1)  # 10..19 extended
    for name in NAMES:
        schemas = {tuple(pq.read_schema(p).names) for p in (tmp_path / name).glob("*.parquet")}
        assert schemas == {before[name]}, name
    assert pq.read_table(tmp_path / "blocks")["block_number"].to_pylist() == list(range(35))
    verified = verify_folder(tmp_path)
    assert verified.failures == []
    # A new folder has the columns: only an older series keeps fewer.
    extract(["receipts"], blocks="0:4", **{**options, "out": tmp_path / "new"})
    assert ADDED["receipts"] <= set(pq.read_schema(next((tmp_path / "new" / "receipts").glob("*.parquet"))).names)
