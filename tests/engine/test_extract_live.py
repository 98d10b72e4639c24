"""The extraction engine against the devnet through the gateway, with small limits so splitting is real."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe import InputError
from chainframe.cli import main
from chainframe.datasets import BLOCKS, LOGS, RECEIPTS, TRANSACTIONS, BlockRange
from chainframe.devnet import DEV_ACCOUNTS, Devnet, FaultRule, GatewaySettings, LogLimits
from chainframe.engine import collect, extract, folder_info, open_duckdb, scan, series_folder
from chainframe.rpc import AsyncClient
from chainframe.store import read_meta

MAIN = ("blocks", "transactions", "receipts", "logs")


def _configure(devnet: Devnet, **settings: Any) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(**settings))


def _stats(devnet: Devnet) -> dict[str, Any]:
    assert devnet.gateway is not None
    return devnet.gateway.stats()


def _read(out: Path, dataset: str) -> pa.Table:
    table = pq.read_table(out / dataset)
    keys = {"blocks": ["block_number"], "logs": ["block_number", "log_index"]}.get(
        dataset.split("__")[0], ["block_number", "transaction_index"]
    )
    return table.sort_by([(k, "ascending") for k in keys])


def _direct(devnet: Devnet, dataset: Any, blocks: BlockRange, **filters: Any) -> pa.Table:
    """The same dataset read straight from the node in one go (no gateway, no limits): the reference."""

    async def main() -> pa.Table:
        async with AsyncClient(devnet.node.url) as client:
            return dataset.transform(await dataset.fetch(client, blocks, **filters), chain_id=devnet.truth.chain_id)

    table = anyio.run(main)
    return table.sort_by([(k, "ascending") for k in dataset.sort])


def _same(a: pa.Table, b: pa.Table) -> None:
    # Parquet stores timestamps in ms and names list items "element": compare values, not those spellings.
    left, right = pl.from_arrow(a), pl.from_arrow(b)
    assert isinstance(left, pl.DataFrame)
    assert isinstance(right, pl.DataFrame)
    assert left.columns == right.columns
    assert left.cast(right.schema).equals(right)


def test_whole_chain_equals_the_ground_truth_despite_splits(devnet: Devnet, tmp_path: Path) -> None:
    _configure(devnet, limits=LogLimits(max_results=500))
    truth = devnet.truth
    report = extract(list(MAIN), blocks="0:latest", out=tmp_path, rpc=devnet.http_url, chunk_size=50, concurrency=3)
    assert _stats(devnet)["limit_errors"]["results"] > 0  # the gateway really refused
    assert report.splits > 0
    counts = {name: report.datasets[name]["rows"] for name in MAIN}
    assert counts == {
        "blocks": truth.block_count,
        "transactions": truth.tx_count,
        "receipts": truth.tx_count,
        "logs": truth.log_count,
    }
    info = folder_info(tmp_path)
    for name in MAIN:
        assert info[name].ranges == [(0, truth.head)], name
        assert info[name].gaps == []
        assert info[name].problems == []
    everything = BlockRange(0, truth.head)
    for name, dataset in (("blocks", BLOCKS), ("transactions", TRANSACTIONS), ("receipts", RECEIPTS)):
        _same(_read(tmp_path, name), _direct(devnet, dataset, everything))
    logs = _read(tmp_path, "logs")
    assert logs.num_rows == len(set(zip(logs["block_number"].to_pylist(), logs["log_index"].to_pylist(), strict=True)))

    async def from_receipts() -> pa.Table:
        async with AsyncClient(devnet.node.url) as client:
            return LOGS.from_receipts(await RECEIPTS.fetch(client, everything), chain_id=truth.chain_id)

    _same(logs, anyio.run(from_receipts).sort_by([("block_number", "ascending"), ("log_index", "ascending")]))


def test_block_over_the_limit_is_read_from_receipts_and_filtered(devnet: Devnet, tmp_path: Path) -> None:
    _configure(devnet, limits=LogLimits(max_results=20))  # every Emitter block has 60 logs
    emitter = devnet.truth.contracts["Emitter"]
    spam = "0xd206e705546b2223acf1a54e3a1e00bf9679b2f2fa4c4844d439ad808a95058b"  # keccak256("Spam(uint256)")
    sender = "0x" + "00" * 12 + DEV_ACCOUNTS[0][2:]  # LOG3 and LOG4 carry the sender as topic 2: 24 per block
    filters: dict[str, Any] = {"address": [emitter], "topics": [spam, None, [sender, "0x" + "00" * 32]]}
    report = extract("logs", blocks="10:60", out=tmp_path, rpc=devnet.http_url, chunk_size=25, **filters)
    assert report.receipt_fallbacks > 0
    got = _read(tmp_path, series_folder(tmp_path, "logs", **filters).name)
    assert not (tmp_path / "logs").exists()  # a filtered series has a folder of its own
    want = _direct(devnet, LOGS, BlockRange(10, 60), **filters)
    assert want.num_rows > 0
    _same(got, want)
    unfiltered = _direct(devnet, LOGS, BlockRange(10, 60))
    assert unfiltered.num_rows > want.num_rows


def test_a_run_killed_before_its_first_file_leaves_nothing_behind_the_next_run(devnet: Devnet, tmp_path: Path) -> None:
    """A run killed before a series' first commit leaves the series folder holding only its temporary; the next run
    removes it, though the folder holds no chunk yet."""
    dead = 2**31 - 1  # above any pid_max: never a live process
    (tmp_path / "logs").mkdir()
    leftover = (
        tmp_path / "logs" / f".logs__{devnet.truth.chain_id}__0000000000_to_0000000039.parquet.tmp-{dead}-0badcafe"
    )
    leftover.write_bytes(b"PAR1 cut short")
    extract("logs", blocks="0:39", out=tmp_path, rpc=devnet.http_url, chunk_size=40, progress=False)
    assert not leftover.exists()
    assert len(list((tmp_path / "logs").glob("*.parquet"))) == 1


def test_a_rate_limit_is_waited_out_not_split(devnet: Devnet, tmp_path: Path) -> None:
    _configure(devnet, faults=(FaultRule(kind="rate_limit", methods=("eth_getLogs",), times=3, backoff=0.2),))
    report = extract("logs", blocks="0:40", out=tmp_path, rpc=devnet.http_url, chunk_size=100)
    assert report.splits == 0
    assert report.rate_limited == 3
    assert report.datasets["logs"]["rows"] == sum(devnet.truth.logs_per_block()[:41])


def test_resume_after_a_killed_run_gives_the_same_files(devnet: Devnet, tmp_path: Path) -> None:
    _configure(devnet, latency=0.05)
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    blocks, slots = "0:99", 10  # slots a dataset: the whole chain has 25, which each of the four runs below read
    argv = [
        sys.executable, "-m", "chainframe.cli", "extract", "receipts", "logs", "--blocks", blocks,
        "--rpc", devnet.http_url, "--out", str(killed), "--chunk-size", "10", "--concurrency", "1", "--no-progress",
    ]  # fmt: skip
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as run:
        deadline = time.monotonic() + 60
        while len(list((killed / "receipts").glob("*.parquet"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        run.send_signal(signal.SIGKILL)
    before = sorted(killed.rglob("*.parquet"))
    assert 3 <= len(before) < 2 * slots  # interrupted mid-way
    assert all(read_meta(p) is not None for p in before)  # whatever looks complete is complete
    victim = before[-1]
    victim.write_bytes(victim.read_bytes()[:-20])  # a file cut short must be redone, not trusted
    _configure(devnet)
    resumed = extract(["receipts", "logs"], blocks=blocks, out=killed, rpc=devnet.http_url, chunk_size=10)
    assert sum(d["skipped"] for d in resumed.datasets.values()) == len(before) - 1
    assert not list(killed.rglob(".*.tmp-*"))
    extract(["receipts", "logs"], blocks=blocks, out=clean, rpc=devnet.http_url, chunk_size=10)
    names = sorted(p.relative_to(killed) for p in killed.rglob("*.parquet"))
    assert names == sorted(p.relative_to(clean) for p in clean.rglob("*.parquet"))
    for name in names:
        assert pq.read_table(killed / name).equals(pq.read_table(clean / name)), name
        assert read_meta(killed / name) == read_meta(clean / name)
    again = extract(["receipts", "logs"], blocks=blocks, out=killed, rpc=devnet.http_url, chunk_size=10)
    assert sum(d["written"] for d in again.datasets.values()) == 0
    redo = extract(["logs"], blocks=blocks, out=killed, rpc=devnet.http_url, chunk_size=10, overwrite=True)
    assert redo.datasets["logs"]["skipped"] == 0


BAD: list[tuple[dict[str, Any], str]] = [
    ({"datasets": "nope"}, "unknown dataset 'nope'"),
    ({"datasets": []}, "name at least one dataset"),
    ({"blocks": "abc"}, "is not a block number"),
    ({"blocks": "9:3"}, "starts after it ends"),
    ({"address": "0x12"}, "address must be 20 bytes"),
    ({"topics": [None] * 5}, "at most 4"),
    ({"datasets": "blocks", "address": "0x" + "11" * 20}, "takes no filters"),
    ({"datasets": ["blocks", "logs"], "storage_keys": ["0x" + "00" * 32]}, "no chosen dataset takes storage_keys"),
    ({"datasets": "account_proofs"}, "needs addresses"),
    ({"datasets": "call_traces", "calls": [{"data": "0x"}]}, "calls[0] must be a transaction object"),
    ({"chunk_size": 0}, "chunk_size must be a whole number, at least 1"),
    ({"concurrency": 0}, "concurrency must be a whole number, at least 1"),
    ({"u256": "float"}, "u256 must be"),
    ({"rpc": None}, "say where to read from"),
    ({"network": "mainnet"}, "say where to read from"),
]


@pytest.mark.parametrize(("change", "message"), BAD, ids=[b[1][:30] for b in BAD])
def test_bad_input_fails_before_any_request(
    devnet: Devnet, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    options: dict[str, Any] = {"datasets": "logs", "blocks": "0:10", "out": tmp_path / "out", "rpc": devnet.http_url}
    options.update(change)
    datasets = options.pop("datasets")
    with pytest.raises(InputError) as error:
        extract(datasets, **options)
    assert message in str(error.value)
    assert _stats(devnet)["http_requests"] == 0
    assert not (tmp_path / "out").exists()


def test_out_must_be_a_folder(devnet: Devnet, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine")
    with pytest.raises(InputError, match="is a file"):
        extract("logs", blocks="0:1", out=tmp_path / "file", rpc=devnet.http_url)
    assert (tmp_path / "file").read_text() == "mine"


def test_collect_duckdb_and_polars(devnet: Devnet, tmp_path: Path) -> None:
    extract(["receipts", "logs"], blocks="0:60", out=tmp_path, rpc=devnet.http_url, chunk_size=20)
    table = collect("logs", blocks="0:60", rpc=devnet.http_url, chunk_size=20)
    assert isinstance(table, pa.Table)
    _same(_read(tmp_path, "logs"), table)
    frame = collect("receipts", blocks="0:60", rpc=devnet.http_url, output="polars")
    assert isinstance(frame, pl.DataFrame)
    assert frame.height == sum(devnet.truth.txs_per_block()[:61])
    con = open_duckdb(tmp_path)
    row = con.execute("select count(*), sum(log_count) from receipts").fetchone()
    assert row == (frame.height, sum(devnet.truth.logs_per_block()[:61]))
    assert con.execute("select count(*) from logs").fetchone() == (row[1],)
    lazy = scan(tmp_path, "logs").filter(pl.col("block_number") <= 10).collect()
    assert lazy.height == sum(devnet.truth.logs_per_block()[:11])
    with pytest.raises(InputError, match="holds no chunk files"):
        scan(tmp_path, "blocks")


def test_report_progress_and_no_key_anywhere(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = extract(["blocks", "logs"], blocks="0:30", out=tmp_path, rpc=devnet.http_url, progress=True, chunk_size=10)
    err = capsys.readouterr().err
    assert "extract" in err  # the progress bar
    runs = list((tmp_path / ".chainframe" / "runs").glob("*.json"))
    assert len(runs) == 1
    saved = json.loads(runs[0].read_text())
    assert (
        saved["datasets"]["logs"]["rows"] == report.datasets["logs"]["rows"] == sum(devnet.truth.logs_per_block()[:31])
    )
    assert saved["endpoint"].endswith("/v3/<redacted>")
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert devnet.key.encode() not in path.read_bytes(), path
    assert devnet.key not in err + report.summary()
    meta = read_meta(sorted((tmp_path / "blocks").glob("*.parquet"))[0])
    assert meta is not None
    assert meta.first_block_hash is not None
    assert meta.first_block_hash.hex() == _block_hash(devnet, meta.start)


def _block_hash(devnet: Devnet, number: int) -> str:
    async def main() -> str:
        async with AsyncClient(devnet.node.url) as client:
            block = await client.get_block(number)
            assert block is not None
            return block.hash.hex()

    return anyio.run(main)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "chainframe.cli", *args], capture_output=True, text=True, env=env, check=False
    )


def _in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command line's exit code, stdout and stderr, run in this process: a process of its own would cost a start
    and chainframe's imports each time, and what is checked is the command's, not the interpreter's."""
    try:
        code = main(list(args))
    except SystemExit as exit:  # argparse's errors end with status 2
        code = int(exit.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli(devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    helped = _cli("extract", "--help")  # one real process: `python -m chainframe.cli` is the entry point
    assert helped.returncode == 0
    assert "examples:" in helped.stdout
    assert "the end is included" in helped.stdout
    code, _, err = _in_process(capsys, "extract", "logs", "--blocks", "x:y", "--rpc", devnet.http_url, "--out",
                               str(tmp_path))  # fmt: skip
    assert code == 2
    assert "error: block range 'x:y'" in err
    code, out, err = _in_process(
        capsys, "extract", "logs", "--blocks", "0:20", "--rpc", devnet.http_url, "--out", str(tmp_path), "--no-progress"
    )
    assert code == 0, err
    assert f"{sum(devnet.truth.logs_per_block()[:21]):,} rows" in out
    assert devnet.key not in out + err
    code, out, _ = _in_process(capsys, "info", str(tmp_path))
    assert code == 0
    assert "0..20" in out
    code, out, err = _in_process(capsys, "call", "eth_getBlockByNumber", "1", "false", "--rpc", devnet.http_url)
    assert code == 0, err
    assert json.loads(out)["number"] == "0x1"
    code, _, err = _in_process(capsys, "call", "eth_getBlockByNumber", "soon", "--rpc", devnet.http_url)
    assert code == 2
    assert "block must be a block number" in err


@pytest.mark.parametrize("u256", ["decimal", "binary"])
def test_the_native_scanner_and_the_pure_path_write_the_same_rows(
    devnet: Devnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, u256: str
) -> None:
    """The whole devnet chain (every transaction type it mines, the EIP-7702 one included), native and pure: the
    same rows in every dataset the scanner reads, in both encodings of wei columns."""
    native = extract(list(MAIN), blocks="0:latest", out=tmp_path / "native", rpc=devnet.node.url, u256=u256)
    monkeypatch.setenv("CHAINFRAME_NATIVE", "0")
    pure = extract(list(MAIN), blocks="0:latest", out=tmp_path / "pure", rpc=devnet.node.url, u256=u256)
    for name in MAIN:
        assert native.datasets[name]["rows"] == pure.datasets[name]["rows"] > 0
        folder = Path(series_folder(tmp_path, name, u256=u256)).name
        assert _read(tmp_path / "native", folder).equals(_read(tmp_path / "pure", folder)), name
