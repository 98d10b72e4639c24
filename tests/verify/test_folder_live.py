"""The devnet chain, extracted whole, verifies; each kind of tampering is caught naming block, check and values."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from chainframe.devnet import Devnet
from chainframe.engine import extract
from chainframe.verify import Report, verify_folder

MAIN = ["blocks", "transactions", "receipts", "logs"]


@pytest.fixture(scope="module")
def chain(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("verified")
    extract(MAIN, blocks="0:latest", rpc=devnet_session.http_url, out=out)
    return out


@pytest.fixture
def copy(chain: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(chain, target)
    return target


def _rewrite(folder: Path, dataset: str, change: object) -> None:
    """Apply ``change(table) -> table`` to the one file holding the most rows of ``dataset``."""
    files = sorted((folder / dataset).glob("*.parquet"), key=lambda f: pq.read_metadata(f).num_rows)
    target = files[-1]
    table = pq.read_table(target)
    assert callable(change)
    pq.write_table(change(table), target)


def _failed(report: Report, check: str) -> list[tuple[str, int, str, str]]:
    return [(f.dataset, f.block_number, f.expected, f.actual) for f in report.failures if f.check == check]


def test_devnet_chain_verifies_completely(chain: Path) -> None:
    report = verify_folder(chain)
    assert report.failures == []
    assert report.skipped == []
    blocks = sum(pq.read_metadata(f).num_rows for f in (chain / "blocks").glob("*.parquet"))
    assert report.blocks_verified["blocks"] == blocks > 1
    for name in MAIN:
        rows = sum(pq.read_metadata(f).num_rows for f in (chain / name).glob("*.parquet"))
        assert report.rows_verified[name] == rows > 0


def _with(table: pa.Table, column: str, index: int, value: object) -> pa.Table:
    values = table[column].to_pylist()
    values[index] = value
    position = table.column_names.index(column)
    return table.set_column(position, column, pa.array(values, type=table.schema.field(column).type))


def test_a_flipped_byte_in_a_header_fails_the_block_hash(copy: Path) -> None:
    def flip(table: pa.Table) -> pa.Table:
        root = table["state_root"][0].as_py()
        return _with(table, "state_root", 0, bytes([root[0] ^ 1]) + root[1:])

    _rewrite(copy, "blocks", flip)
    failed = _failed(verify_folder(copy), "block_hash")
    assert len(failed) == 1
    dataset, _block, stored, computed = failed[0]
    assert dataset == "blocks"
    assert stored != computed
    assert stored.startswith("0x")


def test_a_dropped_log_fails_count_and_bloom(copy: Path) -> None:
    _rewrite(copy, "logs", lambda t: t.slice(1))
    report = verify_folder(copy)
    counts = _failed(report, "log_count")
    assert len(counts) == 1
    assert counts[0][3] == f"{int(counts[0][2].split()[0]) - 1} logs stored"
    assert len(_failed(report, "logs_bloom")) <= 1  # the dropped log's bits may be set by another log too


def test_a_duplicated_log_fails(copy: Path) -> None:
    _rewrite(copy, "logs", lambda t: pa.concat_tables([t, t.slice(0, 1)]))
    report = verify_folder(copy)
    assert len(_failed(report, "log_unique")) == 1
    assert len(_failed(report, "log_count")) == 1


def test_a_changed_log_address_fails_the_bloom(copy: Path) -> None:
    _rewrite(copy, "logs", lambda t: _with(t, "address", 0, b"\x11" * 20))
    failed = _failed(verify_folder(copy), "logs_bloom")
    assert len(failed) == 1
    assert failed[0][0] == "logs"


def test_a_dropped_receipt_fails_the_row_count(copy: Path) -> None:
    _rewrite(copy, "receipts", lambda t: t.filter(pc.invert(pc.equal(pc.field("transaction_index"), 0))))
    report = verify_folder(copy)
    assert _failed(report, "row_count")
    assert {f.dataset for f in report.failures if f.check == "row_count"} == {"receipts"}


def test_cli(chain: Path, copy: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "chainframe.cli", *args], capture_output=True, text=True, check=False
        )

    good = cli("verify", str(chain))
    assert good.returncode == 0, good.stderr
    assert "all checks passed" in good.stdout
    _rewrite(copy, "logs", lambda t: t.slice(1))
    bad = cli("verify", str(copy), "--json")
    assert bad.returncode == 1
    assert '"check": "log_count"' in bad.stdout


def test_a_changed_receipt_status_fails_the_receipts_root(copy: Path) -> None:
    def fail(table: pa.Table) -> pa.Table:
        index = table["status"].to_pylist().index(1)
        return _with(table, "status", index, 0)

    _rewrite(copy, "receipts", fail)
    failed = _failed(verify_folder(copy), "receipts_root")
    assert len(failed) == 1
    assert failed[0][0] == "receipts"
    assert failed[0][2] != failed[0][3]


def test_changed_log_data_fails_the_receipts_root(copy: Path) -> None:
    _rewrite(copy, "logs", lambda t: _with(t, "data", 0, b"\x01" + (t["data"][0].as_py() or b"")))
    assert len(_failed(verify_folder(copy), "receipts_root")) == 1


def test_a_changed_transaction_value_fails_hash_and_root(copy: Path) -> None:
    def richer(table: pa.Table) -> pa.Table:
        value = table["value"][0].as_py()
        bumped = (int.from_bytes(value, "big") + 1).to_bytes(32, "big") if isinstance(value, bytes) else value + 1
        return _with(table, "value", 0, bumped)

    _rewrite(copy, "transactions", richer)
    report = verify_folder(copy)
    assert len(_failed(report, "transaction_hash")) == 1
    assert len(_failed(report, "transactions_root")) == 1


def test_series_covering_fewer_blocks_than_the_headers_verify(devnet: Devnet, tmp_path: Path) -> None:
    """Blocks stored further than the transactions, receipts and logs (the guide's sequence: four datasets to block
    100, then blocks further): a block outside a series is not a block without transactions."""
    extract(MAIN, blocks="0:100", rpc=devnet.node.url, out=tmp_path, progress=False)
    extract(["blocks", "logs"], blocks="0:latest", rpc=devnet.node.url, out=tmp_path, progress=False)
    report = verify_folder(tmp_path)
    assert report.failures == []
    assert report.rows_verified["transactions"] == sum(
        pq.read_metadata(f).num_rows for f in (tmp_path / "transactions").glob("*.parquet")
    )
    assert report.blocks_verified["blocks"] > 200
