"""Keys, networks, transports, batches and the method allowlist, through the real gateway."""

from __future__ import annotations

import json

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from chainframe.devnet import Devnet
from tests.conftest import SECOND_CHAIN_ID, SECOND_NETWORK
from tests.devnet.rpc import call, post, result, ws_exchange


def test_unknown_key_gets_infura_401(devnet: Devnet) -> None:
    response = post(devnet.http_url.replace(devnet.key, "0" * 32), call("eth_chainId"))
    assert response.status_code == 401
    assert response.text == "invalid project id\n"
    assert response.headers["content-type"].startswith("text/plain")
    assert "invalid project id" in response.headers["www-authenticate"]


@pytest.mark.parametrize("path", ["/v3", "/v3/"])
def test_missing_key_gets_401(devnet: Devnet, path: str) -> None:
    assert devnet.gateway is not None
    response = post(devnet.gateway.base_url + path, call("eth_chainId"))
    assert response.status_code == 401
    assert response.text == "project id required in the url\n"


def test_websocket_with_unknown_key_is_refused_before_upgrade(devnet: Devnet) -> None:
    with pytest.raises(InvalidStatus) as refused:
        connect(devnet.ws_url.replace(devnet.key, "f" * 32))
    assert refused.value.response.status_code == 401


def test_admin_needs_its_token(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    response = httpx.get(devnet.gateway.base_url + "/_gateway/stats", headers={"X-Admin-Token": devnet.key})
    assert response.status_code == 403


def test_http_and_websocket_carry_the_same_json_text(devnet: Devnet) -> None:
    request = call("eth_getBlockByNumber", "0x5", True)
    over_http = post(devnet.http_url, request).content
    with connect(devnet.ws_url, max_size=None) as ws:
        ws.send(json.dumps(request))
        over_ws = ws.recv(timeout=30)
    assert json.loads(over_http)["result"]["number"] == "0x5"
    assert over_ws == over_http.decode()


def test_answers_equal_the_node_behind_it(devnet: Devnet) -> None:
    for request in (
        call("eth_getBlockReceipts", "0x7"),
        call("eth_getLogs", {"fromBlock": "0x3", "toBlock": "0x9"}),
    ):
        via_gateway = post(devnet.http_url, request).json()
        direct = post(devnet.node.url, request).json()
        assert via_gateway == direct
        assert via_gateway["result"]


def test_batch_answers_every_item_by_id(devnet: Devnet) -> None:
    batch = [call("eth_getBlockByNumber", hex(n), False, id=100 + n) for n in range(10)]
    batch.append(call("eth_chainId", id=7))
    answers = post(devnet.http_url, batch).json()
    assert sorted(a["id"] for a in answers) == sorted(c["id"] for c in batch)
    by_id = {a["id"]: a for a in answers}
    assert all(by_id[100 + n]["result"]["number"] == hex(n) for n in range(10))
    assert by_id[7]["result"] == "0x7a69"
    assert devnet.gateway is not None
    stats = devnet.gateway.stats()
    assert stats["batches"] == 1
    assert stats["calls"]["eth_getBlockByNumber"] == 10


def test_mixed_batch_keeps_each_items_place_and_answer(devnet: Devnet) -> None:
    """Plain calls go to the node as one batch, logs one by one, refusals never leave: answers keep their places."""
    batch = [
        call("eth_getBlockByNumber", "0x4", False, id="a"),
        {"jsonrpc": "2.0", "id": "bad"},  # no method
        call("eth_getLogs", {"fromBlock": "0x3", "toBlock": "0x3"}, id="logs"),
        call("eth_sendRawTransaction", "0x00", id="denied"),
        call("eth_getBlockByNumber", "0x6", False, id=6),
        call("eth_chainId", id=6),  # a repeated id: matched by place, not by id
    ]
    answers = post(devnet.http_url, batch).json()
    assert [a["id"] for a in answers] == ["a", "bad", "logs", "denied", 6, 6]
    assert answers[0]["result"]["number"] == "0x4"
    assert answers[1]["error"]["code"] == -32600
    assert len(answers[2]["result"]) == devnet.truth.logs_per_block()[3]
    assert answers[3]["error"]["code"] == -32601
    assert answers[4]["result"]["number"] == "0x6"
    assert answers[5]["result"] == "0x7a69"


def test_websocket_batch_and_many_requests_in_flight(devnet: Devnet) -> None:
    batch = [call("eth_getBlockByNumber", hex(n), False, id=n) for n in range(5)]
    assert sorted(a["id"] for a in ws_exchange(devnet.ws_url, batch)) == list(range(5))
    with connect(devnet.ws_url, max_size=None) as ws:
        for n in range(60):  # all sent before any answer is read
            ws.send(json.dumps(call("eth_getBlockByNumber", hex(n), False, id=1000 + n)))
        answers = [json.loads(ws.recv(timeout=30)) for _ in range(60)]
    assert {a["id"]: a["result"]["number"] for a in answers} == {1000 + n: hex(n) for n in range(60)}


def test_host_header_picks_the_network(devnet: Devnet) -> None:
    default = post(devnet.http_url, call("eth_chainId")).json()["result"]
    second = post(devnet.http_url, call("eth_chainId"), headers={"Host": f"{SECOND_NETWORK}.localhost"})
    assert int(default, 16) == devnet.truth.chain_id
    assert int(second.json()["result"], 16) == SECOND_CHAIN_ID


def test_methods_outside_the_spec_are_not_found(devnet: Devnet) -> None:
    for method in ("eth_sendTransaction", "anvil_mine", "evm_mine", "eth_estimateGas", "eth_sendRawTransaction"):
        answer = post(devnet.http_url, call(method)).json()
        assert answer["error"]["code"] == -32601, method
        assert method in answer["error"]["message"]


def test_every_spec_method_is_served(devnet: Devnet) -> None:
    truth = devnet.truth
    tx = next(t for t in truth.txs if t.kind == "dive")
    block = result(devnet.http_url, "eth_getBlockByNumber", hex(tx.block), False)
    nest = truth.contracts["Nest"]
    dive = "0xa8d85c2e" + format(2, "064x")
    calls = {
        "eth_blockNumber": [],
        "eth_chainId": [],
        "eth_getBlockByNumber": [hex(tx.block), True],
        "eth_getBlockReceipts": [hex(tx.block)],
        "eth_getTransactionReceipt": [tx.hash],
        "eth_getTransactionByBlockNumberAndIndex": [hex(tx.block), hex(tx.index)],
        "eth_getTransactionByBlockHashAndIndex": [block["hash"], hex(tx.index)],
        "eth_getUncleByBlockNumberAndIndex": [hex(tx.block), "0x0"],
        "eth_getUncleByBlockHashAndIndex": [block["hash"], "0x0"],
        "eth_getLogs": [{"blockHash": block["hash"]}],
        "eth_getProof": [truth.contracts["Store"], ["0x" + "00" * 31 + "01"], hex(tx.block)],
        "debug_traceCall": [{"to": nest, "data": dive}, hex(tx.block), {"tracer": "callTracer"}],
        "eth_getBalance": [tx.sender, hex(tx.block)],
        "eth_getTransactionCount": [tx.sender, hex(tx.block)],
        "eth_getCode": [nest, hex(tx.block)],
        "eth_getStorageAt": [nest, "0x0", hex(tx.block)],
        "eth_call": [{"to": truth.contracts["Token"], "data": "0x18160ddd"}, hex(tx.block)],  # totalSupply()
    }
    answers = post(devnet.http_url, [call(m, *p, id=i) for i, (m, p) in enumerate(calls.items())]).json()
    by_method = {list(calls)[a["id"]]: a for a in answers}
    for method, answer in by_method.items():
        assert "error" not in answer, (method, answer)
    assert by_method["eth_getTransactionReceipt"]["result"]["transactionHash"] == tx.hash
    assert len(by_method["eth_getLogs"]["result"]) == sum(t.logs for t in truth.txs if t.block == tx.block)
    assert by_method["eth_getUncleByBlockNumberAndIndex"]["result"] is None  # anvil makes no uncles
    assert int(by_method["eth_getBalance"]["result"], 16) > 0  # the state reads, at the dive's block
    assert int(by_method["eth_getTransactionCount"]["result"], 16) > 0  # it sent the dive
    assert len(by_method["eth_getCode"]["result"]) > 2
    assert len(by_method["eth_getStorageAt"]["result"]) == 66
    assert int(by_method["eth_call"]["result"], 16) == 10**27  # the workload's Token supply
    trace = by_method["debug_traceCall"]["result"]
    assert trace["calls"][0]["calls"][0]["type"] == "CALL"  # dive(2): two nested external calls


def test_malformed_requests_get_jsonrpc_errors(devnet: Devnet) -> None:
    response = httpx.post(devnet.http_url, content=b"{not json", headers={"content-type": "application/json"})
    assert response.json()["error"]["code"] == -32700
    assert post(devnet.http_url, []).json()["error"]["code"] == -32600
    assert post(devnet.http_url, [{"id": 3}]).json()[0]["error"]["code"] == -32600
