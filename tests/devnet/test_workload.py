"""The node serves exactly the ground truth the workload plan implies."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from chainframe.devnet import TEST_WORKLOAD, AnvilNode, AnvilOptions, Devnet, WorkloadSpec, plan_workload
from chainframe.devnet._workload import build_chain
from tests.devnet.rpc import call, post, result


def _batched(devnet: Devnet, method: str, params: list[list[Any]]) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(params), 50):
        chunk = params[start : start + 50]
        answers = post(devnet.http_url, [call(method, *p, id=i) for i, p in enumerate(chunk)]).json()
        out += [a["result"] for a in sorted(answers, key=lambda a: a["id"])]
    return out


@pytest.fixture(scope="module")
def chain(devnet_session: Devnet) -> dict[str, Any]:
    head = devnet_session.truth.head
    blocks = _batched(devnet_session, "eth_getBlockByNumber", [[hex(n), True] for n in range(head + 1)])
    receipts = _batched(devnet_session, "eth_getBlockReceipts", [[hex(n)] for n in range(head + 1)])
    return {"blocks": blocks, "receipts": receipts}


def test_block_count(devnet: Devnet, chain: dict[str, Any]) -> None:
    assert int(result(devnet.http_url, "eth_blockNumber"), 16) == devnet.truth.head == TEST_WORKLOAD.blocks
    assert len(chain["blocks"]) == devnet.truth.block_count
    assert result(devnet.http_url, "eth_getBlockByNumber", hex(devnet.truth.head + 1), False) is None


def test_every_transaction_where_the_plan_put_it(devnet: Devnet, chain: dict[str, Any]) -> None:
    served = [
        (int(t["blockNumber"], 16), int(t["transactionIndex"], 16), t["hash"])
        for b in chain["blocks"]
        for t in b["transactions"]
    ]
    expected = [(t.block, t.index, t.hash) for t in devnet.truth.txs]
    assert served == expected


def test_timestamps_follow_the_spec(devnet: Devnet, chain: dict[str, Any]) -> None:
    assert [int(b["timestamp"], 16) for b in chain["blocks"][1:]] == [
        devnet.truth.timestamp(n) for n in range(1, devnet.truth.head + 1)
    ]


def test_transaction_types(devnet: Devnet, chain: dict[str, Any]) -> None:
    served = Counter(int(t["type"], 16) for b in chain["blocks"] for t in b["transactions"])
    assert served == Counter(devnet.truth.txs_by_type())
    assert set(served) == {0, 1, 2, 4}  # legacy, EIP-2930, EIP-1559 and EIP-7702 (type 3 needs blob sidecars)
    assert all(t["accessList"] for b in chain["blocks"] for t in b["transactions"] if t["type"] == "0x1")
    (set_code,) = [t for b in chain["blocks"] for t in b["transactions"] if t["type"] == "0x4"]
    assert set_code["authorizationList"][0]["address"] == devnet.truth.contracts["Store"]


def test_statuses_logs_and_creations(devnet: Devnet, chain: dict[str, Any]) -> None:
    receipts = [r for block in chain["receipts"] for r in block]
    truth = devnet.truth
    assert [int(r["status"], 16) for r in receipts] == [t.status for t in truth.txs]
    assert [len(r["logs"]) for r in receipts] == [t.logs for t in truth.txs]
    assert sum(1 for r in receipts if r["status"] == "0x0") == truth.reverted_count > 0
    creations = [r for r in receipts if r["contractAddress"] is not None]
    assert len(creations) == truth.creation_count >= 5
    assert all(r["to"] is None for r in creations)
    assert sum(len(r["logs"]) for r in receipts) == truth.log_count > 10_000


def test_erc20_and_eth_transfers(devnet: Devnet, chain: dict[str, Any]) -> None:
    transfer_topic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
    logs = [log for block in chain["receipts"] for r in block for log in r["logs"]]
    transfers = [log for log in logs if log["topics"] and log["topics"][0] == transfer_topic]
    kinds = devnet.truth.txs_by_kind()
    # Each erc20_transfer logs one Transfer, and each Token creation (deploy, create_token) logs its mint.
    assert len(transfers) == kinds["erc20_transfer"] + kinds["create_token"] + 1
    value_txs = [t for b in chain["blocks"] for t in b["transactions"] if t["input"] == "0x" and int(t["value"], 16)]
    assert len(value_txs) == kinds["eth_transfer"]


def test_logs_cover_every_topic_count(devnet: Devnet, chain: dict[str, Any]) -> None:
    counts = Counter(len(log["topics"]) for block in chain["receipts"] for r in block for log in r["logs"])
    assert set(counts) == {0, 1, 2, 3, 4}


def test_nested_calls_for_call_traces(devnet: Devnet) -> None:
    dive = next(t for t in devnet.truth.txs if t.kind == "dive")
    tx = result(devnet.http_url, "eth_getTransactionByBlockNumberAndIndex", hex(dive.block), hex(dive.index))
    depth = int(tx["input"][10:], 16)
    trace = result(
        devnet.http_url,
        "debug_traceCall",
        {"from": tx["from"], "to": tx["to"], "data": tx["input"]},
        hex(dive.block - 1),
        {"tracer": "callTracer"},
    )
    levels = 0
    while trace.get("calls"):
        trace = trace["calls"][0]
        levels += 1
    assert levels == depth


def test_plan_is_pure() -> None:
    assert plan_workload(TEST_WORKLOAD) == plan_workload(TEST_WORKLOAD)
    assert plan_workload(WorkloadSpec(seed=8)) != plan_workload(TEST_WORKLOAD)


def test_building_twice_gives_the_same_chain() -> None:
    spec = WorkloadSpec(name="tiny", blocks=30, creation_every=10, empty_every=7)
    heads = []
    for _ in range(2):
        with AnvilNode(AnvilOptions(auto_mine=False)) as node:
            truth = build_chain(spec, node)
            heads.append(node.rpc.call("eth_getBlockByNumber", hex(truth.head), False)["hash"])
    assert heads[0] == heads[1]


def test_loaded_chain_keeps_historical_state(devnet: Devnet) -> None:
    # eth_getProof at an old block needs that block's state, which survives the dump only with history preserved.
    store = devnet.truth.contracts["Store"]
    early = result(devnet.http_url, "eth_getProof", store, [], "0x1")
    assert early["address"].lower() == store.lower()
