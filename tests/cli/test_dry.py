"""``extract --dry``: the plan a run would make, with the node asked only what the range needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet


def _dry(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["extract", *argv, "--dry"]) == 0
    return capsys.readouterr().out.splitlines()


def test_the_plan_asks_only_the_chain_state_and_writes_nothing(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert devnet.gateway is not None
    out = tmp_path / "data"
    lines = _dry(capsys, "blocks", "receipts", "logs", "--blocks", "0:239", "--rpc", devnet.http_url, "--out", str(out),
                 "--chunk-size", "100", "--credits-per-second", "500")  # fmt: skip
    assert lines[0].startswith(f"plan: blocks 0..239 (head {devnet.truth.head}) into {out}; nothing fetched")
    assert "chunks: 3 new; 0 stored; 240 blocks to fetch: 240 eth_getBlockByNumber calls, 19,600 credits" in lines[1]
    assert "240 eth_getBlockReceipts calls, 240,400 credits" in lines[2]  # 1,000 each, and 5 batches of 50 at 80
    assert "3 new; 0 stored; 240 blocks to fetch: >= 3 eth_getLogs calls, >= 765 credits" in lines[3]
    assert lines[4] == "  total: >= 483 calls, >= 260,765 credits (Infura's weights)"
    assert lines[5] == "  at 500 credits/s: at least 522 s"
    assert "in one batch as a run asks: eth_chainId, eth_blockNumber, eth_getBlockByNumber." in lines[6]
    assert devnet.gateway.stats()["calls"] == {"eth_chainId": 1, "eth_blockNumber": 1, "eth_getBlockByNumber": 1}
    assert not out.exists()


def test_the_plan_skips_what_is_stored_and_extends_the_tip(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert devnet.gateway is not None
    base = ["blocks", "--rpc", devnet.http_url, "--out", str(tmp_path), "--chunk-size", "100"]
    assert main(["extract", *base, "--blocks", "0:149", "--no-progress"]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in (tmp_path / "blocks").iterdir())
    devnet.gateway.reset_stats()
    lines = _dry(capsys, *base, "--blocks", "-100:")  # to the finalized block, asked for
    assert lines[0].startswith(f"plan: blocks {devnet.truth.head - 64 - 99}..{devnet.truth.head - 64} ")
    assert "chunks: 1 extend; 1 stored; 27 blocks to fetch: 27 eth_getBlockByNumber" in lines[1]
    assert "eth_chainId, eth_blockNumber, eth_getBlockByNumber." in lines[-1]  # one batch, as a run reads them
    assert devnet.gateway.stats()["calls"] == {"eth_chainId": 1, "eth_blockNumber": 1, "eth_getBlockByNumber": 1}
    assert sorted(p.name for p in (tmp_path / "blocks").iterdir()) == before


def test_the_plan_counts_calls_per_address_and_refuses_what_a_run_refuses(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, nest = devnet.truth.contracts["Store"], devnet.truth.contracts["Nest"]
    lines = _dry(capsys, "account_proofs", "--blocks", "200:239", "--addresses", store, nest, "--rpc", devnet.http_url,
                 "--out", str(tmp_path))  # fmt: skip
    assert "40 blocks to fetch: 80 eth_getProof calls, 6,560 credits" in lines[1]
    code = main(["extract", "logs", "--blocks", "0:10", "--addresses", store, "--rpc", "http://127.0.0.1:9",
                 "--out", str(tmp_path), "--dry"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "dataset 'logs' takes only address" in err
    assert "got addresses" in err
