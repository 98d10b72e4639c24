"""What maintenance and a busy table tell the operator (issue 41): counts that are never negative, and the wait
actually in force."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from chainframe import InputError, extract, open_duckdb, scan
from chainframe.devnet import Devnet
from chainframe.store import ObjectLease, load_series, location, snapshot_uris
from tests.store.test_s3 import bucket, s3_endpoint

__all__ = ["bucket", "s3_endpoint"]  # the fixtures this module uses, from the store's S3 tests


def test_a_table_naming_a_missing_file_counts_no_negative_files_outside_it(devnet: Devnet, tmp_path: Path) -> None:
    """A file the table names but that is gone (deleted by hand, or by a vacuum a fenced writer now prevents) is a
    damaged chunk of the series, and the files outside the table are counted as a set, never as a difference."""
    extract(["blocks"], blocks="0:59", out=tmp_path, rpc=devnet.http_url, chunk_size=20, table="delta",
            progress=False)  # fmt: skip
    folder = location(tmp_path / "blocks")
    named = snapshot_uris(folder)
    assert len(named) == 3
    Path(named[1]).unlink()
    series = load_series(folder)
    assert series.outside == 0
    assert [path.name for _, path in series.damaged] == [Path(named[1]).name]
    (Path(named[0]).parent / "blocks__31337__0000000000_to_0000000019__00ff.parquet").write_bytes(b"never committed")
    assert load_series(folder).outside == 1


def test_a_busy_prefix_says_the_wait_of_the_lease_in_force(bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With CHAINFRAME_LEASE_SECONDS=4, a second writer is told the lease can be taken over within seconds (its
    expiry plus half the lease for clocks), not the default's 30 s allowance."""
    monkeypatch.setenv("CHAINFRAME_LEASE_SECONDS", "4")
    root = location(f"{bucket}/busy")
    with ObjectLease(root), pytest.raises(InputError, match=r"can be taken over in \d+ s") as refused:
        ObjectLease(root).__enter__()
    wait = re.search(r"can be taken over in (\d+) s", str(refused.value))
    assert wait is not None
    assert int(wait.group(1)) <= 6, str(refused.value)  # 4 s of lease + 2 s for clocks, at most


def test_a_table_written_before_files_held_uint64_as_int64_stays_one_form(
    devnet: Devnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Delta table whose files hold uint64 as is (chainframe before this version wrote them so) is extended in that
    same form: a table of both forms could not be scanned (Polars: Int64 != UInt64)."""
    from chainframe.engine import _engine
    from chainframe.store import ChunkWriter

    def earlier(path: str, schema: Any, *, delta: bool = False) -> ChunkWriter:
        return ChunkWriter(path, schema)  # the files as an earlier version wrote them: exact types only

    with monkeypatch.context() as patch:
        patch.setattr(_engine, "ChunkWriter", earlier)
        extract(["blocks"], blocks="0:39", out=tmp_path, rpc=devnet.http_url, chunk_size=20, table="delta",
                progress=False)  # fmt: skip
    assert load_series(location(tmp_path / "blocks")).exact_files
    extract(["blocks"], blocks="0:79", out=tmp_path, rpc=devnet.http_url, chunk_size=20, progress=False)
    series = load_series(location(tmp_path / "blocks"))
    assert series.exact_files  # still one form
    assert len(series.chunks) == 4
    frame = scan(tmp_path, "blocks").select(pl.len(), pl.col("block_number").max()).collect()
    assert frame.rows() == [(80, 79)]
    assert open_duckdb(tmp_path).execute("SELECT count(*), max(block_number) FROM blocks").fetchall() == [(80, 79)]
    fresh = tmp_path / "fresh"
    extract(["blocks"], blocks="0:39", out=fresh, rpc=devnet.http_url, chunk_size=20, table="delta", progress=False)
    assert not load_series(location(fresh / "blocks")).exact_files  # a new table takes the newer form
