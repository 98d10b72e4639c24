"""How far back a node serves state (issue 40): ``probe`` finds the oldest block by bisection of ``eth_getBalance``,
and a run (or ``--dry``) whose state-reading series start below it is refused before any work, naming the first
block it can ask for. Checked on the gateway playing each client's words for dropped state and on a real anvil
restarted from a saved state without its history; each window is checked independently by asking the node for the
state just below and at the block found."""

from __future__ import annotations

import math
import time
from pathlib import Path

import httpx
import pytest

from chainframe import extract, probe
from chainframe.cli import main
from chainframe.devnet import AnvilNode, AnvilOptions, Devnet, GatewaySettings, PrunedState
from chainframe.devnet.gateway import PrunedKind
from chainframe.rpc import StateUnavailable

ACCOUNT = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
ZERO = "0x" + "00" * 20


def _balance_error(url: str, block: int) -> object:
    """The node's error for the zero address's balance at ``block`` (None: answered), asked by hand."""
    answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance", "params": [ZERO, hex(block)]})
    return answer.json().get("error")


@pytest.mark.parametrize("like", ["geth", "erigon", "anvil"])
def test_probe_finds_the_oldest_state_a_pruned_node_serves(devnet: Devnet, like: PrunedKind) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(pruned=PrunedState(before=100, like=like)))
    devnet.gateway.reset_stats()
    found = probe(rpc=devnet.http_url)
    assert found.archive is False
    assert found.state_from == 100
    assert _balance_error(devnet.http_url, 99) is not None
    assert _balance_error(devnet.http_url, 100) is None
    # The head's state, then one call per halving of 1..head: never more than that.
    assert 1 <= found.state_calls <= 1 + math.ceil(math.log2(found.head))
    counted = devnet.gateway.stats()["calls"]["eth_getBalance"]
    assert (
        counted == 3 + found.state_calls + 2
    )  # the probe's batch (the head's, block 1's, block 0's), the bisection, ours
    assert "state served from block 100 on" in found.table()
    assert found.route("balances").note == "old state not served: state from block 100 on only"


def test_an_archive_serves_state_from_genesis_at_no_extra_call(devnet: Devnet) -> None:
    found = probe(rpc=devnet.http_url)
    assert found.archive is True
    assert (found.state_from, found.state_calls) == (0, 0)
    assert found.to_json()["state_from"] == 0


def test_a_run_below_the_window_is_refused_before_any_work(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(pruned=PrunedState(before=100, like="geth")))
    devnet.gateway.reset_stats()
    started = time.monotonic()
    with pytest.raises(StateUnavailable) as raised:
        extract(["balances"], blocks="20:119", out=tmp_path, rpc=devnet.http_url, addresses=[ACCOUNT], progress=False)
    assert time.monotonic() - started < 1.0
    text = str(raised.value)
    assert "keeps no state for block 20" in text
    assert "missing trie node" in text  # the node's own words
    assert "serves state from block 100 on" in text
    assert "--blocks 100:" in text
    assert "reorganiz" not in text
    assert not list(tmp_path.rglob("*.parquet"))  # nothing fetched for the series, nothing written
    counted = devnet.gateway.stats()["calls"]
    # The routes' check, block 20's, the head's, then one per halving of 20..head.
    assert counted["eth_getBalance"] <= 3 + math.ceil(math.log2(devnet.truth.head - 20))


def test_a_replay_reads_the_state_before_its_block(devnet: Devnet, tmp_path: Path) -> None:
    """balance_diffs replays a block from its parent's state: block 100 needs 99's, which is gone; 101 does not."""
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(pruned=PrunedState(before=100, like="geth")))
    with pytest.raises(StateUnavailable) as raised:
        extract(["balance_diffs"], blocks="100:109", out=tmp_path, rpc=devnet.http_url, progress=False)
    assert "keeps no state for block 99" in str(raised.value)
    assert "--blocks 101:" in str(raised.value)
    report = extract(["balance_diffs"], blocks="101:109", out=tmp_path, rpc=devnet.http_url, progress=False)
    assert report.datasets["balance_diffs"]["rows"] > 0


def test_dry_refuses_what_the_run_would_refuse(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(pruned=PrunedState(before=100, like="nethermind")))
    argv = ["extract", "balances", "--addresses", ACCOUNT, "--rpc", devnet.http_url, "--out", str(tmp_path), "--dry"]
    assert main([*argv, "--blocks", "50:59"]) == 1
    err = capsys.readouterr().err
    assert "serves state from block 100 on" in err
    assert "--blocks 100:" in err
    assert main([*argv, "--blocks", "100:109"]) == 0
    assert "eth_getBalance at the oldest block whose state a series reads" in capsys.readouterr().out
    assert not tmp_path.exists() or not list(tmp_path.iterdir())


def test_a_real_anvil_reloaded_without_its_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "state.json"
    with AnvilNode(AnvilOptions(dump_state=dump, historical_states=False)) as node:
        node.rpc.call("anvil_mine", "0x14")
    with AnvilNode(AnvilOptions(load_state=dump, historical_states=False)) as node:
        found = probe(rpc=node.url)
        assert found.archive is False
        assert found.state_from == 20
        assert _balance_error(node.url, 19) is not None
        assert _balance_error(node.url, 20) is None
        argv = ["extract", "balances", "--blocks", "5:20", "--addresses", ACCOUNT, "--rpc", node.url, "--out",
                str(tmp_path / "out"), "--no-progress"]  # fmt: skip
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert "BlockOutOfRangeError" in err
        assert "serves state from block 20 on" in err
