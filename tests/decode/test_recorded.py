"""Real mainnet logs from the recorded fixtures (ethereum-etl, erigon-style answers) decode as eth-abi reads them."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
from eth_abi import decode as abi_decode

import chainframe
from chainframe.datasets import LOGS
from chainframe.decode import ERC20_TRANSFER, parse_event

RECORDED = Path(__file__).parents[1] / "data" / "recorded"
TOPIC0 = "0x" + parse_event(ERC20_TRANSFER).topic0.hex()


def _logs_in(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        found = [value] if isinstance(value.get("topics"), list) and "data" in value else []
        return found + [log for v in value.values() for log in _logs_in(v)]
    if isinstance(value, list):
        return [log for v in value for log in _logs_in(v)]
    return []


def recorded_transfer_logs() -> list[dict[str, Any]]:
    logs = []
    for path in sorted(RECORDED.rglob("*.json")):
        try:
            answer = json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        logs += [log for log in _logs_in(answer) if log["topics"] and log["topics"][0] == TOPIC0]
    return logs


def test_every_recorded_transfer_decodes_as_eth_abi_reads_it() -> None:
    logs = recorded_transfer_logs()
    frame = pl.DataFrame(
        {
            "log_index": list(range(len(logs))),
            "topics": [[bytes.fromhex(t[2:]) for t in log["topics"]] for log in logs],
            "data": [bytes.fromhex(log["data"][2:]) for log in logs],
        }
    )
    erc20 = [i for i, log in enumerate(logs) if len(log["topics"]) == 3]
    erc721 = [i for i, log in enumerate(logs) if len(log["topics"]) == 4]
    assert len(erc20) >= 5
    expected = []
    for i in erc20:
        topics = logs[i]["topics"]
        (value,) = abi_decode(["uint256"], bytes.fromhex(logs[i]["data"][2:]))
        (sender,), (to,) = (abi_decode(["address"], bytes.fromhex(t[2:])) for t in topics[1:])
        expected.append((i, bytes.fromhex(sender[2:]), bytes.fromhex(to[2:]), value))
    got = chainframe.erc20_transfers(frame, u256="binary")
    assert [(i, f, t, int.from_bytes(v, "big")) for i, f, t, v in got.rows()] == expected
    assert chainframe.erc721_transfers(frame, u256="binary")["log_index"].to_list() == erc721


def test_an_ethereum_etl_answer_through_the_logs_dataset() -> None:
    folder = RECORDED / "ethereum-etl/tests/resources/test_export_token_transfers_job/block_with_transfers"
    body = (folder / "web3_response.eth_getFilterLogs_0x0.json").read_bytes()
    transfers = chainframe.erc20_transfers(pl.DataFrame(LOGS.transform([body], chain_id=1)))
    reference = json.loads(body)["result"]
    assert transfers["value"].to_list() == [Decimal(int(log["data"], 16)) for log in reference]
    assert ["0x" + a.hex() for a in transfers["to_address"]] == ["0x" + log["topics"][2][-40:] for log in reference]
