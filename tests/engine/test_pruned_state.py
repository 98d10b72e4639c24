"""A node that keeps no old state (a full node, the most common self-hosted kind) is named as such: one error saying
which block's state it lacks and that an archive node serves it, at once, without retrying, and never taken for a
reorganization (issue 40). Each client's own words are played by the gateway in front of the devnet
(docs/research/pruned-state.md), and a real anvil restarted from a saved state without its historical states answers
in its own."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chainframe import extract
from chainframe.cli import main
from chainframe.devnet import AnvilNode, AnvilOptions, Devnet, GatewaySettings, PrunedState
from chainframe.devnet.gateway import PrunedKind
from chainframe.rpc import StateUnavailable

ACCOUNT = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
KINDS: tuple[PrunedKind, ...] = ("geth", "erigon", "reth", "nethermind", "besu", "anvil")


def _state_calls(devnet: Devnet) -> int:
    assert devnet.gateway is not None
    calls: dict[str, int] = devnet.gateway.stats()["calls"]
    return sum(n for method, n in calls.items() if method in ("eth_getBalance", "eth_call", "eth_getProof"))


@pytest.mark.parametrize("like", KINDS)
def test_each_nodes_words_for_pruned_state_end_the_run_at_once(
    devnet: Devnet, tmp_path: Path, like: PrunedKind
) -> None:
    assert devnet.gateway is not None
    blocks = "20:39"
    extract(["balances"], blocks=blocks, out=tmp_path / "clean", rpc=devnet.http_url, addresses=[ACCOUNT],
            progress=False)  # fmt: skip
    clean = _state_calls(devnet)
    devnet.gateway.configure(GatewaySettings(pruned=PrunedState(before=100, like=like)))
    devnet.gateway.reset_stats()
    started = time.monotonic()
    with pytest.raises(StateUnavailable) as raised:
        extract(["balances"], blocks=blocks, out=tmp_path / "pruned", rpc=devnet.http_url, addresses=[ACCOUNT],
                progress=False)  # fmt: skip
    assert time.monotonic() - started < 1.0
    assert 0 < _state_calls(devnet) <= clean  # asked once, never retried
    text = str(raised.value)
    assert "keeps no state" in text
    assert "archive node" in text
    assert "for block 2" in text  # the block whose state is missing (one of 20..39)
    assert "reorganiz" not in text


def test_state_within_the_nodes_window_is_read(devnet: Devnet, tmp_path: Path) -> None:
    """The same node serves the blocks it keeps: only older state is refused."""
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(pruned=PrunedState(before=100, like="geth")))
    report = extract(["balances"], blocks="100:119", out=tmp_path, rpc=devnet.http_url, addresses=[ACCOUNT],
                     progress=False)  # fmt: skip
    assert report.datasets["balances"]["rows"] == 20


def test_a_real_anvil_reloaded_without_its_history_is_named_not_retried(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "state.json"
    with AnvilNode(AnvilOptions(dump_state=dump, historical_states=False)) as node:  # a dump without them
        node.rpc.call("anvil_mine", "0xa")
    with AnvilNode(AnvilOptions(load_state=dump, historical_states=False)) as node:
        started = time.monotonic()
        argv = ["extract", "balances", "--blocks", "5:9", "--addresses", ACCOUNT, "--rpc", node.url, "--out",
                str(tmp_path / "out"), "--no-progress"]  # fmt: skip
        assert main(argv) == 1
        took = time.monotonic() - started
        err = capsys.readouterr().err
        assert took < 1.0, took
        assert err.count("\n") == 1, err
        assert "for block 5" in err
        assert "BlockOutOfRangeError" in err
        assert "archive node" in err
        assert main([*argv[:3], "10:10", *argv[4:]]) == 0  # its latest state is there
