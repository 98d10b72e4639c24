"""The hex helpers show binary columns as nodes do, in Polars and in DuckDB."""

from __future__ import annotations

import json

import duckdb
import polars as pl
import pytest

from chainframe.datasets import LOGS, hex_view, register_duckdb

LOG = {
    "address": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    "topics": ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", "0x" + "00" * 32],
    "data": "0x00ff",
    "blockHash": "0x" + "ab" * 32,
    "blockNumber": "0x10",
    "transactionHash": "0x" + "cd" * 32,
    "transactionIndex": "0x0",
    "logIndex": "0x3",
    "removed": False,
}


def test_polars_hex_view_matches_the_node_text() -> None:
    table = LOGS.from_objects(json.dumps([LOG]).encode(), chain_id=1)
    frame = hex_view(pl.from_arrow(table))
    assert isinstance(frame, pl.DataFrame)
    row = frame.row(0, named=True)
    assert row["address"] == LOG["address"]
    assert row["topics"] == LOG["topics"]
    assert row["data"] == LOG["data"]
    assert row["block_number"] == 16
    lazy = hex_view(pl.from_arrow(table).lazy()).collect()  # type: ignore[union-attr]
    assert lazy.equals(frame)


def test_duckdb_macros() -> None:
    table = LOGS.from_objects(json.dumps([LOG]).encode(), chain_id=1)
    con = duckdb.connect()
    register_duckdb(con)
    con.register("logs", table)
    address, topics, data = con.execute("select hex0x(address), hex0x_list(topics), hex0x(data) from logs").fetchone()  # type: ignore[misc]
    assert (address, topics, data) == (LOG["address"], LOG["topics"], LOG["data"])
    # Amounts sum as numbers; fixed-size binaries compare against hex literals via unhex.
    count = con.execute("select count(*) from logs where address = unhex(?)", [LOG["address"][2:]]).fetchone()
    assert count == (1,)


def test_hex_text_becomes_the_binary_a_filter_compares_with() -> None:
    import duckdb

    from chainframe import InputError
    from chainframe.datasets import hex_bytes, register_duckdb

    frame = pl.DataFrame({"address": [bytes.fromhex("5fbdb2315678afecb367f032d93f642f64180aa3"), b"\x00" * 20]})
    checksummed = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    assert frame.filter(pl.col("address") == hex_bytes(checksummed)).height == 1
    with pytest.raises(InputError, match="not 0x-prefixed hex"):
        hex_bytes("5fbd")
    con = duckdb.connect()
    register_duckdb(con)
    con.register("t", frame.to_arrow())
    assert con.execute("SELECT count(*) FROM t WHERE address = unhex0x(?)", [checksummed]).fetchall() == [(1,)]


def test_wei_become_exact_ether_or_floats_on_request() -> None:
    import decimal

    import duckdb
    import pyarrow as pa

    from chainframe.datasets import register_duckdb, wei_to_ether

    wei = pa.array([decimal.Decimal(7_910_000_000_000_000_000), decimal.Decimal(123456789012345678901234567)],
                   pa.decimal128(38, 0))  # fmt: skip
    exact = wei_to_ether(wei)
    assert exact.type == pa.decimal128(38, 18)
    assert exact.to_pylist() == [decimal.Decimal("7.91"), decimal.Decimal("123456789.012345678901234567")]
    assert wei_to_ether(pl.Series("v", wei), exact=False).to_list()[0] == pytest.approx(7.91)
    con = duckdb.connect()
    register_duckdb(con)
    got = con.execute("SELECT ether(7910000000000000000::DECIMAL(38, 0)), ether(-5::DECIMAL(38, 0))").fetchall()
    assert got == [(decimal.Decimal("7.91"), decimal.Decimal("-0.000000000000000005"))]
