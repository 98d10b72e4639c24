"""The gateway playing another node than anvil: a method it lacks in that node's words, keys its answers leave out,
block tags it does not know. Seen on the wire, over HTTP and WebSocket alike."""

from __future__ import annotations

import pytest

from chainframe.devnet import Devnet, GatewaySettings, MissingMethod, OmitKeys
from tests.devnet.rpc import call, post, result, ws_exchange


def _settings(devnet: Devnet, **settings: object) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(**settings))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("like", "code", "message"),
    [
        ("geth", -32601, "the method eth_getBlockReceipts does not exist/is not available"),
        ("hardhat", -32004, "Method eth_getBlockReceipts is not supported"),
        ("ganache", -32700, "The method eth_getBlockReceipts does not exist/is not available"),
    ],
)
def test_a_missing_method_is_answered_in_the_nodes_words(devnet: Devnet, like: str, code: int, message: str) -> None:
    _settings(devnet, missing=(MissingMethod(method="eth_getBlockReceipts", like=like),))  # type: ignore[arg-type]
    batch = [
        call("eth_getBlockReceipts", "0x1", id=7),
        call("eth_getTransactionReceipt", devnet.truth.txs[0].hash, id=8),
    ]
    for answers in (post(devnet.http_url, batch).json(), ws_exchange(devnet.ws_url, batch)):
        by_id = {a["id"]: a for a in answers}
        assert by_id[7]["error"] == {"code": code, "message": message}
        assert by_id[8]["result"]["transactionHash"] == devnet.truth.txs[0].hash  # the others are served


@pytest.mark.parametrize(
    ("like", "status", "text"),
    [
        ("http_404", 404, "Not Found: eth_getBlockReceipts is not served"),
        ("http_405", 405, "Method Not Allowed: eth_getBlockReceipts"),
    ],
)
def test_a_gateway_refuses_the_whole_http_request_naming_the_method(
    devnet: Devnet, like: str, status: int, text: str
) -> None:
    _settings(devnet, missing=(MissingMethod(method="eth_getBlockReceipts", like=like),))  # type: ignore[arg-type]
    alone = [call("eth_getTransactionReceipt", devnet.truth.txs[0].hash, id=8)]
    refused = post(devnet.http_url, [call("eth_getBlockReceipts", "0x1", id=7), *alone])
    assert refused.status_code == status
    assert refused.text.startswith(text)
    assert post(devnet.http_url, alone).json()[0]["result"]["transactionHash"] == devnet.truth.txs[0].hash
    (answer,) = ws_exchange(devnet.ws_url, [call("eth_getBlockReceipts", "0x1", id=7)])  # no status: geth's words
    assert answer["error"]["code"] == -32601


def test_omitted_keys_are_gone_everywhere_in_the_answer(devnet: Devnet) -> None:
    block = hex(devnet.truth.txs[0].block)
    served = result(devnet.http_url, "eth_getBlockReceipts", block)
    assert "blockTimestamp" in served[0]
    _settings(devnet, omit=(OmitKeys(methods=("eth_getBlockReceipts",), keys=("blockTimestamp",)),))
    receipts = result(devnet.http_url, "eth_getBlockReceipts", block)
    assert "blockTimestamp" not in repr(receipts)  # receipts and their logs
    for receipt in served:
        receipt.pop("blockTimestamp")
        for log in receipt["logs"]:
            log.pop("blockTimestamp", None)
    assert receipts == served  # nothing else changed
    assert "blockTimestamp" in result(devnet.http_url, "eth_getLogs", {"fromBlock": block, "toBlock": block})[0]


def test_an_unknown_tag_is_answered_null(devnet: Devnet) -> None:
    assert result(devnet.http_url, "eth_getBlockByNumber", "finalized", False) is not None  # anvil knows it
    _settings(devnet, unknown_tags=("finalized",))
    assert result(devnet.http_url, "eth_getBlockByNumber", "finalized", False) is None
    assert result(devnet.http_url, "eth_getBlockByNumber", "latest", False) is not None
