"""extract --verify and verify --rpc on real Hardhat and Ganache chains: every block from 1 on proves; Hardhat's
genesis does not, because its own header disagrees with its empty transaction list (transactionsRoot = keccak of empty
bytes), and the failure says so rather than suggesting the stored data was changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet

MAIN = ("blocks", "transactions", "receipts", "logs")
HEADER_DISAGREES = "the header itself disagrees with its empty transaction list"


def _extract(devnet: Devnet, out: Path, first: int, *flags: str) -> int:
    return main(["extract", *MAIN, "erc20_transfers", "--blocks", f"{first}:{devnet.truth.head}", "--rpc",
                 devnet.http_url, "--out", str(out), "--no-progress", *flags])  # fmt: skip


@pytest.mark.xfail(
    strict=True,
    reason="known gaps on both nodes, found by these tests (issue 31), in code outside the devnet: legacy transactions "
    "without chainId in JSON store transaction_chain_id null (verify derives it from v); logs without blockTimestamp "
    "store block_timestamp/block_time null; extract --verify of receipts by transaction checks block_timestamp "
    "before headers fill it; on Ganache logIndex restarts per transaction, so log_unique fails",
)
def test_extract_verify_and_verify_rpc_pass_from_block_1(
    real_node: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _extract(real_node, tmp_path, 1, "--verify") == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["verify", str(tmp_path), "--rpc", real_node.http_url]) == 0
    printed = capsys.readouterr().out
    assert "FAILED" not in printed
    assert "eth_getBlockReceipts" in printed or "passed" in printed


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
