"""What a cryo user types runs as typed (issue 28.1): short flags, $ETH_RPC_URL, --contract, the txs/events names,
several ranges, steps, blocks from a Parquet column; column selection and CSV/JSON/hex exports that DuckDB reads back;
and where our meaning differs from cryo's (the end of A:B is included, A: stops at the safe end) the output says so."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe import collect, extract, scan
from chainframe.cli import main
from chainframe.devnet import Devnet
from chainframe.engine import parse_blocks, parse_range

TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"  # the workload's first contract: it emits logs


def _rows(folder: Path, dataset: str, **filters: object) -> pl.DataFrame:
    return scan(folder, dataset, **filters).collect().sort(pl.all())


def test_a_cryo_command_line_gives_our_rows(
    devnet: Devnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ETH_RPC_URL", devnet.http_url)
    cryo = ["extract", "txs", "events", "-b", "0:10", "20:30", "-o", str(tmp_path / "cryo"), "--chunk-size", "10",
            "--contract", TOKEN, "--no-progress"]  # fmt: skip
    assert main(cryo) == 0  # --contract filters the logs (the dataset that takes it), not the transactions
    out = capsys.readouterr().out
    assert "22 blocks in 2 runs: 0..10, 20..30 (ends included)" in out
    assert "/v3/<redacted>" in out  # $ETH_RPC_URL is redacted like --rpc
    assert devnet.http_url not in out
    # Ours, the long way: the same rows, block for block.
    ours = tmp_path / "ours"
    assert main(["extract", "transactions", "logs", "--blocks", "0:30", "--rpc", devnet.http_url, "--out", str(ours),
                 "--no-progress", "--address", TOKEN]) == 0  # fmt: skip
    asked = pl.col("block_number").is_between(0, 10) | pl.col("block_number").is_between(20, 30)
    for dataset, filters in (("transactions", {}), ("logs", {"address": [TOKEN]})):
        got = _rows(tmp_path / "cryo", dataset, **filters)
        assert got.height > 0
        assert got.equals(_rows(ours, dataset, **filters).filter(asked))


def test_contract_is_the_address_filter(devnet: Devnet, tmp_path: Path) -> None:
    argv = ["extract", "events", "-b", "0:40", "--rpc", devnet.http_url, "-o", str(tmp_path), "--no-progress"]
    assert main([*argv, "--contract", TOKEN]) == 0
    rows = _rows(tmp_path, "logs", address=[TOKEN])
    assert rows.height > 0
    assert set(rows["address"]) == {bytes.fromhex(TOKEN[2:])}
    assert main([*argv, "--address", TOKEN]) == 0  # the same series: nothing new to fetch
    assert _rows(tmp_path, "logs", address=[TOKEN]).equals(rows)


def test_without_rpc_or_eth_rpc_url_the_refusal_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ETH_RPC_URL", raising=False)
    with pytest.raises(SystemExit):
        main(["extract", "blocks", "-b", "0:1", "-o", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert "--rpc" in err[0]
    assert "--help" in err[1]


def test_a_step_fetches_only_its_blocks(devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert devnet.gateway is not None
    argv = ["extract", "blocks", "-b", "0:40:10", "--chunk-size", "10", "--rpc", devnet.http_url, "-o", str(tmp_path),
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert sorted(_rows(tmp_path, "blocks")["block_number"]) == [0, 10, 20, 30, 40]
    # cryo's "n values total", with our end included: 5 blocks from 100 to 200.
    assert main([*argv[:3], "100:200/5", *argv[4:]]) == 0
    assert sorted(_rows(tmp_path, "blocks")["block_number"])[5:] == [100, 125, 150, 175, 200]
    capsys.readouterr()
    # A step finer than the chunks would have the blocks between fetched: refused in one line, saying what to do.
    assert main(["extract", "blocks", "-b", "0:40:10", "--rpc", devnet.http_url, "-o", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--chunk-size at most the step" in err


def test_blocks_from_a_parquet_column(devnet: Devnet, tmp_path: Path) -> None:
    wanted = tmp_path / "wanted.parquet"
    pq.write_table(pa.table({"number": pa.array([17, 3, 4, 5, 90, 17], pa.uint64())}), wanted)
    argv = ["extract", "blocks", "-b", f"{wanted}:number", "--chunk-size", "10", "--rpc", devnet.http_url,
            "-o", str(tmp_path / "out"), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert sorted(_rows(tmp_path / "out", "blocks")["block_number"]) == [3, 4, 5, 17, 90]
    with pytest.raises(Exception, match="its columns: number"):
        parse_blocks(f"{wanted}:block")


def test_open_end_says_how_to_reach_the_tip(devnet: Devnet, tmp_path: Path) -> None:
    report = extract("blocks", blocks="150:", rpc=devnet.http_url, out=tmp_path, progress=False)
    assert report.head is not None
    assert report.finalized is not None
    assert report.head > report.finalized
    assert report.stop.startswith(f"stopped at finalized {report.finalized}")
    assert report.stop.endswith("write 150:latest for the tip")
    assert f"blocks 150..{report.finalized} ({report.finalized} included)" in report.summary()


def test_columns_select_what_the_export_holds(devnet: Devnet, tmp_path: Path) -> None:
    argv = ["extract", "blocks", "-b", "0:20", "--rpc", devnet.http_url, "-o", str(tmp_path), "--no-progress"]
    assert main([*argv, "--columns", "block_number", "timestamp", "--compression", "zstd", "3"]) == 0
    picked = pq.read_table(tmp_path / "blocks__0000000000_to_0000000020.parquet")
    assert picked.column_names == ["block_number", "timestamp"]
    whole = _rows(tmp_path, "blocks")  # the series stays whole
    assert "block_hash" in whole.columns
    assert pl.from_arrow(picked).sort("block_number").equals(whole.select("block_number", "timestamp"))
    report = extract("blocks", blocks="0:20", rpc=devnet.http_url, out=tmp_path, progress=False,
                     exclude_columns=["block_hash"], hex=True)  # fmt: skip
    (path,) = report.exports
    hexed = pq.read_table(path)
    assert "block_hash" not in hexed.column_names
    assert hexed.num_rows == 21
    assert hexed.schema.field("parent_hash").type == pa.string()
    assert hexed["parent_hash"][1].as_py() == "0x" + whole["block_hash"][0].hex()


@pytest.mark.parametrize(("flag", "reader"), [("--csv", "read_csv"), ("--json", "read_json")])
def test_csv_and_json_exports_round_trip_with_duckdb(devnet: Devnet, tmp_path: Path, flag: str, reader: str) -> None:
    argv = ["extract", "txs", "logs", "-b", "0:10", "20:30", "--rpc", devnet.http_url, "-o", str(tmp_path),
            "--no-progress", flag]  # fmt: skip
    assert main(argv) == 0
    ext = "csv" if flag == "--csv" else "jsonl"
    con = duckdb.connect()
    for dataset, key in (("transactions", "transaction_hash"), ("logs", "log_index")):
        path = tmp_path / f"{dataset}__0000000000_to_0000000030.{ext}"
        query = f"SELECT * FROM {reader}('{path}') ORDER BY block_number, {key}"  # noqa: S608
        exported = pl.from_arrow(con.sql(query).to_arrow_table())
        stored = collect(dataset, blocks="0:10 20:30", rpc=devnet.http_url, output="polars", progress=False)
        stored = stored.sort("block_number", key)
        assert exported.height == stored.height > 0
        assert exported["block_number"].cast(pl.Int64).to_list() == stored["block_number"].cast(pl.Int64).to_list()
        hashes = ["0x" + h.hex() for h in stored["transaction_hash"]]
        assert exported["transaction_hash"].to_list() == hashes
        if dataset == "logs":
            first = exported["topics"].to_list()[0]
            topics = first if isinstance(first, list) else first.strip("[]").replace("'", "").split(", ")
            assert topics == ["0x" + t.hex() for t in stored["topics"][0]]


def test_refusals_are_one_line_saying_what_to_do(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["extract", "blocks", "-b", "0:5", "--rpc", devnet.http_url, "-o", str(tmp_path), "--no-progress"]
    cases = [
        (["--columns", "nope"], "blocks has no column 'nope'; its columns:"),
        (["--columns", "timestamp", "-e", "block_hash"], "not both"),
        (["--compression", "lz4"], "applies to exports"),
        (["--csv", "--compression", "lz4"], "is not one for csv"),
        (["--csv", "--follow"], "go with a plain run"),
    ]
    for extra, message in cases:
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, (extra, err)
        assert message in err, (extra, err)
    for text, message in (("1:2:3:4", "more than two ':'"), ("0:+5:2", "a step needs a range")):
        with pytest.raises(Exception, match=message):
            parse_range(text)
