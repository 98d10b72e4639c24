"""The extract command's transport and pacing flags reach the client: a ws:// URL is used over WebSocket, and a
credit budget keeps a run under the provider's limit (no 429s), as free tiers need."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from chainframe import series_folder
from chainframe.cli import main
from chainframe.devnet import Devnet, GatewaySettings


def test_a_websocket_url_is_used_over_websocket(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    argv = ["extract", "blocks", "--blocks", "0:50", "--rpc", devnet.ws_url, "--out", str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    stats = devnet.gateway.stats()
    assert stats["ws_messages"] > 0
    assert stats["http_requests"] == 0


def test_a_credit_budget_keeps_the_run_under_the_limit(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(credits_per_second=8000.0))
    argv = ["extract", "blocks", "logs", "--blocks", "0:120", "--rpc", devnet.http_url, "--out", str(tmp_path),
            "--no-progress", "--credits-per-second", "6000"]  # fmt: skip
    assert main(argv) == 0
    assert devnet.gateway.stats()["rate_limited"] == 0


@pytest.mark.parametrize("flag", ["--requests-per-second", "--credits-per-second", "--max-in-flight"])
def test_pacing_flags_are_in_the_help(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["extract", "--help"])
    assert flag in capsys.readouterr().out


def test_topic0_takes_an_event_signature(devnet: Devnet, tmp_path: Path) -> None:
    transfer = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
    argv = ["extract", "logs", "--blocks", "0:60", "--rpc", devnet.node.url, "--out", str(tmp_path), "--no-progress",
            "--topic0", "Transfer(address,address,uint256)"]  # fmt: skip
    assert main(argv) == 0
    folder = series_folder(tmp_path, "logs", topics=[transfer])
    topics = pl.read_parquet(folder / "*.parquet")["topics"]
    assert topics.len() > 0
    assert topics.list.get(0).to_list() == [bytes.fromhex(transfer[2:])] * topics.len()


def test_event_flag_takes_signatures_and_abi_files(devnet: Devnet, tmp_path: Path) -> None:
    import json
    from importlib import resources

    from chainframe import scan

    artifacts = json.loads(resources.files("chainframe.devnet").joinpath("contracts/artifacts.json").read_text())
    abi_file = tmp_path / "token.abi.json"
    abi_file.write_text(json.dumps(artifacts["contracts"]["Token"]["abi"]))
    transfer = "Transfer(address indexed from, address indexed to, uint256 value)"
    base = ["extract", "logs", "--blocks", "0:60", "--rpc", devnet.node.url, "--no-progress"]
    assert main([*base, "--out", str(tmp_path / "sig"), "--event", transfer]) == 0
    assert main([*base, "--out", str(tmp_path / "abi"), "--event", str(abi_file)]) == 0
    by_signature = scan(tmp_path / "sig", "logs", event=transfer).collect()
    by_abi = scan(tmp_path / "abi", "logs", event=artifacts["contracts"]["Token"]["abi"]).collect()
    assert by_signature.height > 0
    assert by_signature["value"].to_list() == by_abi.filter(pl.col("from").is_not_null())["value"].to_list()
    assert main([*base, "--out", str(tmp_path / "bad"), "--event", "no-such-file.json"]) == 2
    no_events = tmp_path / "functions-only.abi.json"  # an ABI with nothing for --event: refused, not an empty filter
    no_events.write_text(json.dumps([e for e in artifacts["contracts"]["Token"]["abi"] if e.get("type") != "event"]))
    assert main([*base, "--out", str(tmp_path / "none"), "--event", str(no_events)]) == 2
    assert not (tmp_path / "none").exists()


def test_a_repeated_input_flag_adds_its_values(devnet: Devnet, tmp_path: Path) -> None:
    """``--addresses A --addresses B`` reads both accounts, as ``--addresses A B`` does (it read B alone)."""
    first, second = "0x" + "11" * 20, "0x" + "22" * 20
    argv = ["extract", "balances", "--blocks", "10:12", "--rpc", devnet.http_url, "--out", str(tmp_path),
            "--no-progress", "--addresses", first, "--addresses", second]  # fmt: skip
    assert main(argv) == 0
    rows = pl.read_parquet(series_folder(tmp_path, "balances", addresses=[first, second]) / "*.parquet")
    assert sorted(set(rows["address"].to_list())) == [bytes.fromhex(first[2:]), bytes.fromhex(second[2:])]
    assert rows.height == 6
