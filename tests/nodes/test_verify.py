"""extract --verify and verify --rpc on real Hardhat and Ganache chains: every block from 1 on proves; Hardhat's
genesis does not, because its own header disagrees with its empty transaction list (transactionsRoot = keccak of empty
bytes), and the failure says so rather than suggesting the stored data was changed.

What these nodes do differently, and what the runs do about it (each said in the summary or the verify report):
neither sends ``chainId`` for a legacy transaction (stored: the one its EIP-155 ``v`` signs) nor ``blockTimestamp`` in a
log (stored: its block's, from the header); neither serves eth_getBlockReceipts (receipts by transaction); Ganache
numbers its receipts' logs per transaction (renumbered by position in the block, as its eth_getLogs does) and its
headers' receipts roots encode a failed status as 0x00 (proven with that encoding, which still catches a change)."""

from __future__ import annotations

import glob
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet

MAIN = ("blocks", "transactions", "receipts", "logs")
HEADER_DISAGREES = "the header itself disagrees with its empty transaction list"


def _extract(devnet: Devnet, out: Path, first: int, *flags: str) -> int:
    return main(["extract", *MAIN, "erc20_transfers", "--blocks", f"{first}:{devnet.truth.head}", "--rpc",
                 devnet.http_url, "--out", str(out), "--no-progress", *flags])  # fmt: skip


def test_extract_verify_and_verify_rpc_pass_from_block_1(
    real_node: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _extract(real_node, tmp_path, 1, "--verify") == 0, capsys.readouterr().out
    summary = capsys.readouterr().out
    assert "eth_getBlockReceipts not served by the node" in summary
    for dataset in (*MAIN, "erc20_transfers"):
        assert re.search(rf"^  {dataset} .*\n +verified: {real_node.truth.head} blocks", summary, re.M), summary
    assert main(["verify", str(tmp_path), "--rpc", real_node.http_url]) == 0
    printed = capsys.readouterr().out
    assert "FAILED" not in printed
    assert printed.rstrip().endswith("verified: all checks passed")
    ganache = real_node.node_name == "ganache"
    assert ("numbers its receipts' logs per transaction" in summary) == ganache
    assert ("note     receipts for" in printed and "encoded as the byte 0x00" in printed) == ganache


def _tampered(folder: Path, dataset: str, column: str, change: object) -> None:
    """The stored chunk of ``dataset`` rewritten with ``column`` changed by ``change`` (rows -> its new values)."""
    (path,) = glob.glob(str(folder / dataset / "*.parquet"))
    table = pq.read_table(path)
    at = table.schema.get_field_index(column)
    values = change(table.to_pylist())  # type: ignore[operator]
    table = table.set_column(at, table.schema.field(at), pa.array(values, table.schema.field(at).type))
    footer = {k: v for k, v in (pq.read_metadata(path).metadata or {}).items() if k != b"ARROW:schema"}
    pq.write_table(table.replace_schema_metadata(footer), path)  # in place, as a tool editing the file would


def test_a_changed_value_still_fails_where_the_node_sent_none_or_encodes_its_own_way(
    real_node: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What was filled or proven another way on these nodes is still proven: a log's timestamp set to null, a legacy
    transaction's chain id set to null, and (Ganache's 0x00 encoding) a failed receipt's status set to success fail."""
    assert _extract(real_node, tmp_path, 1) == 0
    capsys.readouterr()

    def first(rows: list[dict[str, Any]], column: str, wanted: Any, to: Any) -> list[Any]:
        at = next(i for i, row in enumerate(rows) if wanted(row))
        changed.append(rows[at]["block_number"])
        return [to if i == at else row[column] for i, row in enumerate(rows)]

    changed: list[int] = []
    _tampered(tmp_path, "logs", "block_timestamp", lambda rows: first(rows, "block_timestamp", lambda r: True, None))
    _tampered(
        tmp_path,
        "transactions",
        "transaction_chain_id",
        lambda rows: first(rows, "transaction_chain_id", lambda r: r["transaction_type"] == 0, None),
    )
    _tampered(tmp_path, "receipts", "status", lambda rows: first(rows, "status", lambda r: r["status"] == 0, 1))
    assert main(["verify", str(tmp_path), "--rpc", real_node.http_url]) == 1
    failed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("FAILED")]
    logs, legacy, reverted = changed
    assert f"FAILED   logs block {logs} block_timestamp: stored null, computed " in "\n".join(failed), failed
    assert any(f"transactions block {legacy} transaction_chain_id: stored null" in line for line in failed), failed
    assert any(f"receipts block {reverted} receipts_root: " in line for line in failed), failed


def test_genesis_transactions_root_verifies_on_ganache_and_fails_on_hardhat_naming_the_header(
    real_node: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _extract(real_node, tmp_path, 0) == 0
    capsys.readouterr()
    code = main(["verify", str(tmp_path), "--rpc", real_node.http_url])
    lines = capsys.readouterr().out.splitlines()
    # Only the roots here: the other failures are the known gaps of the test above.
    failed = [line for line in lines if line.startswith("FAILED") and " transactions_root:" in line]
    assert any(line.startswith("blocks ") for line in lines)  # the header checks ran
    if real_node.node_name == "ganache":
        assert failed == []
        return
    assert code != 0
    assert failed  # transactions, and receipts (which prove their transactions too), at block 0 only
    for line in failed:
        assert (
            " block 0 transactions_root: stored 0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
            in line
        )
        assert HEADER_DISAGREES in line
        assert "not a sign that stored data was changed" in line


def test_receipts_alone_by_transaction_verify(real_node: Devnet, tmp_path: Path) -> None:
    """Receipts read by transaction (neither node has eth_getBlockReceipts) are proven in the run: their logs, which
    the proof rebuilds the receipts root from, carry their block's timestamp and (Ganache) their place in the block."""
    argv = ["extract", "receipts", "--blocks", f"1:{real_node.truth.head}", "--rpc", real_node.http_url, "--out",
            str(tmp_path), "--no-progress", "--verify"]  # fmt: skip
    assert main(argv) == 0
    assert main(["verify", str(tmp_path), "--rpc", real_node.http_url]) == 0
