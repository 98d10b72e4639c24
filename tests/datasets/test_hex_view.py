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


def test_duckdb_unhex0x_compares_text_with_binary_columns() -> None:
    con = duckdb.connect()
    register_duckdb(con)
    con.register("logs", LOGS.from_objects(json.dumps([LOG]).encode(), chain_id=1))
    checksummed = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    text = "SELECT count(*) FROM logs WHERE address = ?"
    assert con.execute(text, [checksummed]).fetchone() == (0,)  # the trap: text never equals a blob
    found = con.execute("SELECT log_index FROM logs WHERE address = unhex0x(?)", [checksummed]).fetchall()
    assert found == [(3,)]
    with pytest.raises(duckdb.Error):
        con.execute("SELECT unhex0x('0xzz')").fetchall()


def test_duckdb_ether_is_exact() -> None:
    import decimal

    con = duckdb.connect()
    register_duckdb(con)
    got = con.execute("SELECT ether(7910000000000000000::DECIMAL(38, 0)), ether(-5::DECIMAL(38, 0))").fetchall()
    assert got == [(decimal.Decimal("7.91"), decimal.Decimal("-0.000000000000000005"))]
