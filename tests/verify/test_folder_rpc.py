"""``chainframe verify DIR --rpc``: every series in a folder (filtered, decoded, proofs included) proven against the
node's headers and receipts; a file edited on disk fails naming the block and the check. The plain series stored
together prove each other offline, and the series made of logs are proven from their raw logs, so only the headers'
hashes are asked of the node; a stored header that is itself but not the node's fails. Offline, what cannot be proven
from the folder alone is listed as skipped, never as passed."""

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


def test_offline_proves_the_series_made_of_logs_and_says_what_it_cannot_prove(devnet: Devnet, folder: Path) -> None:
    """The token transfers and the decoded event series are what their datasets make of the raw logs stored (and
    proven) beside them; the accounts' proofs need the node."""
    report = verify_folder(folder)
    assert report.failures == []
    event_series = series_folder(folder, "logs", event=TRANSFER, address=devnet.truth.contracts["Token"]).name
    for name in ("erc20_transfers", event_series):
        rows = sum(pq.read_metadata(f).num_rows for f in (folder / name).glob("*.parquet"))
        assert report.rows_verified[name] == rows > 0, name
    assert {(s.dataset.split("__")[0], s.check) for s in report.skipped} == {("account_proofs", "all")}


def test_series_made_of_logs_without_proven_logs_beside_them_are_skipped(
    devnet: Devnet, folder: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    shutil.rmtree(copy / "receipts")  # the raw logs are stored, not proven
    skipped = {s.dataset: s.reason for s in verify_folder(copy).skipped}
    assert "no proven logs stored for these blocks" in skipped["erc20_transfers"]


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
        p
        for p in copy.iterdir()
        if p.name == series or (series.endswith("__f") and p.name.startswith(series[:-1]) and "__f" in p.name)
    )
    target = max(found.glob("*.parquet"), key=lambda f: pq.read_metadata(f).num_rows)
    _edit(target, column, change)
    report = verify_stored(copy, rpc=devnet.node.url)
    assert {f.check for f in report.failures} == {check}
    assert all(f.block_number > 0 for f in report.failures)
    assert main(["verify", str(copy), "--rpc", devnet.node.url]) == 1
    if series in ("erc20_transfers", "logs__f"):  # offline too, from the raw logs beside them
        offline = verify_folder(copy)
        assert {(f.dataset.split("__")[0], f.check) for f in offline.failures} == {(series.split("__")[0], check)}
        assert all(f.expected.startswith(("log_index", "a row", "no row")) for f in offline.failures), offline


def test_the_plain_series_stored_together_and_those_made_of_their_logs_ask_the_node_only_their_hashes(
    devnet: Devnet, tmp_path: Path
) -> None:
    """The series made of logs are what their datasets make of the raw logs proven beside them, as offline: the node
    is asked no receipts for them either."""
    assert devnet.gateway is not None
    plain = ["blocks", "transactions", "receipts", "logs"]
    token = devnet.truth.contracts["Token"]
    extract([*plain, "erc20_transfers"], blocks="0:latest", rpc=devnet.http_url, out=tmp_path, progress=False)
    extract("logs", blocks="0:latest", rpc=devnet.http_url, out=tmp_path, progress=False, event=TRANSFER,
            address=token)  # fmt: skip
    devnet.gateway.reset_stats()
    report = verify_stored(tmp_path, rpc=devnet.http_url)
    assert report.failures == []
    assert report.skipped == []
    calls = devnet.gateway.stats()["calls"]
    blocks = devnet.truth.head + 1
    assert "eth_getBlockReceipts" not in calls, calls
    assert calls["eth_getBlockByNumber"] == blocks, calls  # one header per block: its hash
    event_series = series_folder(tmp_path, "logs", event=TRANSFER, address=token).name
    for name in [*plain, "erc20_transfers", event_series]:
        rows = sum(pq.read_metadata(f).num_rows for f in (tmp_path / name).glob("*.parquet"))
        assert report.rows_verified[name] == rows > 0, name
    assert report.blocks_verified == verify_folder(tmp_path).blocks_verified  # counted as offline counts them


@pytest.mark.parametrize("stored", [["blocks"], ["blocks", "transactions", "receipts", "logs"]])
def test_a_header_that_is_itself_but_not_the_nodes_fails(devnet: Devnet, tmp_path: Path, stored: list[str]) -> None:
    """Its fields rewritten and its hash computed again: alone, it proves offline (nothing else is stored to tell);
    beside its block's rows, offline fails on them and the block is proven against the node's material instead. Either
    way it is not the node's block, said once."""
    from chainframe.verify._hashing import keccak
    from chainframe.verify._headers import header_rlp

    extract(stored, blocks="0:30", rpc=devnet.node.url, out=tmp_path, progress=False)
    path = next((tmp_path / "blocks").glob("*.parquet"))
    file = pq.ParquetFile(path)
    rows = file.read().to_pylist()
    last = rows[-1]
    last["extra_data"] = b"another chain"
    encoded = header_rlp(last)
    assert encoded is not None
    last["block_hash"] = keccak(encoded)
    table = pa.Table.from_pylist(rows, schema=file.schema_arrow)
    footer = {k: v for k, v in (file.metadata.metadata or {}).items() if k != b"ARROW:schema"}
    pq.write_table(table.replace_schema_metadata(footer), path)
    assert (verify_folder(tmp_path).failures == []) == (stored == ["blocks"])
    report = verify_stored(tmp_path, rpc=devnet.node.url)
    assert [(f.block_number, f.check) for f in report.failures] == [(30, "block_hash")]
    assert report.failures[0].actual.startswith("the node's: 0x")


def test_a_blocks_list_of_transaction_hashes_is_proven_against_the_nodes_transactions(
    devnet: Devnet, tmp_path: Path
) -> None:
    """No header field holds it (the root is over the transactions' encodings): without the transactions stored beside
    it, offline says it is not proven; against the node, the node's transactions of the block (proven by the root)
    prove it, and a changed list fails (it went unseen before)."""
    extract("blocks", blocks="0:30", rpc=devnet.node.url, out=tmp_path, progress=False)
    clean = verify_stored(tmp_path, rpc=devnet.node.url)
    assert clean.failures == []
    assert clean.skipped == []
    path = next((tmp_path / "blocks").glob("*.parquet"))
    file = pq.ParquetFile(path)
    rows = file.read().to_pylist()
    busy = next(row for row in rows if row["transaction_hashes"])
    busy["transaction_hashes"] = [b"\x11" * 32] * len(busy["transaction_hashes"])
    footer = {k: v for k, v in (file.metadata.metadata or {}).items() if k != b"ARROW:schema"}
    pq.write_table(pa.Table.from_pylist(rows, schema=file.schema_arrow).replace_schema_metadata(footer), path)
    offline = verify_folder(tmp_path)
    assert offline.failures == []
    assert [s.check for s in offline.skipped] == ["transaction_hashes"]
    report = verify_stored(tmp_path, rpc=devnet.node.url)
    assert [(f.block_number, f.check) for f in report.failures] == [(busy["block_number"], "transaction_hashes")]
    assert report.skipped == []
    assert main(["verify", str(tmp_path), "--rpc", devnet.node.url]) == 1
