"""``chainframe verify DIR --rpc``: every series in a folder (filtered, decoded, proofs included) proven against the
node's headers and receipts; a file edited on disk fails naming the block and the check. Offline, what cannot be
proven from the folder alone is listed as skipped, never as passed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet
from chainframe.engine import extract, series_folder, verify_stored
from chainframe.verify import verify_folder

TRANSFER = "Transfer(address indexed from, address indexed to, uint256 value)"


@pytest.fixture(scope="module")
def folder(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stored")
    url, token = devnet_session.node.url, devnet_session.truth.contracts["Token"]
    extract(["blocks", "transactions", "receipts", "logs", "erc20_transfers"], blocks="0:latest", rpc=url, out=out,
            progress=False)  # fmt: skip
    extract("logs", blocks="0:latest", rpc=url, out=out, progress=False, event=TRANSFER, address=token)
    extract("account_proofs", blocks="1:40", rpc=url, out=out, progress=False, addresses=[token])
    return out


def _edit(path: Path, column: str, change: object) -> None:
    """Change one value of ``column`` in the file, keeping its footer (as a tool editing in place would)."""
    file = pq.ParquetFile(path)
    table = file.read()
    values = table[column].to_pylist()
    index = next(i for i, v in enumerate(values) if v is not None)
    assert callable(change)
    values[index] = change(values[index])
    table = table.set_column(
        table.column_names.index(column), column, pa.array(values, table.schema.field(column).type)
    )
    footer = {k: v for k, v in (file.metadata.metadata or {}).items() if k != b"ARROW:schema"}
    pq.write_table(table.replace_schema_metadata(footer), path)


def test_every_series_verifies_against_the_node(devnet: Devnet, folder: Path) -> None:
    report = verify_stored(folder, rpc=devnet.node.url)
    assert report.failures == []
    assert report.skipped == []
    event_series = series_folder(folder, "logs", event=TRANSFER, address=devnet.truth.contracts["Token"]).name
    proofs = next(folder.glob("account_proofs__f*")).name
    for name in ("blocks", "transactions", "receipts", "logs", "erc20_transfers", event_series, proofs):
        rows = sum(pq.read_metadata(f).num_rows for f in (folder / name).glob("*.parquet"))
        assert report.rows_verified[name] == rows > 0, name


def test_offline_says_what_it_cannot_prove(folder: Path) -> None:
    report = verify_folder(folder)
    assert report.failures == []
    skipped = {(s.dataset, s.check) for s in report.skipped}
    assert ("erc20_transfers", "all") in skipped
    assert any(dataset.startswith("logs__f") for dataset, _ in skipped)


@pytest.mark.parametrize(
    ("series", "column", "change", "check"),
    [
        ("erc20_transfers", "to_address", lambda v: b"\x11" * 20, "log_set"),
        ("logs__f", "value", lambda v: v + 1, "log_set"),
        ("logs", "data", lambda v: b"\x01" + v, "log_set"),
        ("receipts", "gas_used", lambda v: v + 1, "gas_used"),
    ],
)
def test_an_edited_file_fails_naming_block_and_check(
    devnet: Devnet, folder: Path, tmp_path: Path, series: str, column: str, change: object, check: str
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    found = next(
        p for p in copy.iterdir() if p.name == series or (series.endswith("__f") and p.name.startswith(series))
    )
    target = max(found.glob("*.parquet"), key=lambda f: pq.read_metadata(f).num_rows)
    _edit(target, column, change)
    report = verify_stored(copy, rpc=devnet.node.url)
    assert {f.check for f in report.failures} == {check}
    assert all(f.block_number > 0 for f in report.failures)
    assert main(["verify", str(copy), "--rpc", devnet.node.url]) == 1
