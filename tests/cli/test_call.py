"""``chainframe call``: the spec's methods checked as people type them, any other method passed through."""

from __future__ import annotations

import json

import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet, FaultRule, GatewaySettings


def _call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object, str]:
    code = main(["call", *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


def test_hex_indexes_and_numbers_as_typed(devnet: Devnet, capsys: pytest.CaptureFixture[str]) -> None:
    first = next(t for t in devnet.truth.txs if t.block == 10 and t.index == 0)
    code, tx, _ = _call(capsys, "eth_getTransactionByBlockNumberAndIndex", "0xa", "0x0", "--rpc", devnet.http_url)
    assert code == 0
    assert isinstance(tx, dict)
    assert tx["hash"] == first.hash
    assert _call(capsys, "eth_getTransactionByBlockNumberAndIndex", "10", "0", "--rpc", devnet.http_url)[1] == tx


def test_a_short_storage_key_is_padded(devnet: Devnet, capsys: pytest.CaptureFixture[str]) -> None:
    store = devnet.truth.contracts["Store"]
    code, proof, _ = _call(capsys, "eth_getProof", store, '["0x1"]', "latest", "--rpc", devnet.http_url)
    assert code == 0
    assert isinstance(proof, dict)
    assert [p["key"] for p in proof["storageProof"]] == ["0x" + "00" * 31 + "01"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eth_getBlockByNumber", "5"], "eth_getBlockByNumber takes <block> <full transactions (true/false)>; got 1 "
         "argument; missing: full transactions (true/false)"),
        (["eth_getProof", "0x" + "11" * 20, '["0x0"]'], "missing: block"),
        (["eth_getBlockByNumber", "5", "yes"], "full transactions (true/false) must be true or false; got 'yes'"),
        (["eth_getTransactionByBlockNumberAndIndex", "5", "-1"], "index must be a non-negative integer"),
        (["eth_getProof", "0x" + "11" * 20, '["0x' + "1" * 65 + '"]', "latest"], "storage keys[0] must be 32 bytes"),
        (["not a method"], "is not a JSON-RPC method name"),
    ],
)  # fmt: skip
def test_bad_arguments_are_refused_before_sending(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["call", *argv, "--rpc", "http://127.0.0.1:9"])  # nothing listens there: no request was tried
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert "retrying" not in err


def test_other_methods_pass_through(devnet: Devnet, capsys: pytest.CaptureFixture[str]) -> None:
    store, node = devnet.truth.contracts["Store"], devnet.node.url
    account = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"
    code, balance, _ = _call(capsys, "eth_getBalance", account, "200", "--rpc", node)  # 200: sent as 0xc8
    assert code == 0
    assert _call(capsys, "eth_getBalance", account, "200", "--rpc", devnet.http_url)[1] == balance  # the gateway's
    assert isinstance(balance, str)
    assert int(balance, 16) > 0
    code, code_hex, _ = _call(capsys, "eth_getCode", store, "latest", "--rpc", node)
    assert isinstance(code_hex, str)
    assert len(code_hex) > 100
    counter = "0x61bc221a"  # counter()
    code, word, _ = _call(capsys, "eth_call", json.dumps({"to": store, "data": counter}), "latest", "--rpc", node)
    assert word == "0x" + "00" * 32
    # The gateway serves only the spec's methods: its refusal is one clean line.
    code, _, err = _call(capsys, "eth_getUncleCountByBlockNumber", "latest", "--rpc", devnet.http_url)
    assert code == 1
    assert err.startswith("error: eth_getUncleCountByBlockNumber via ")
    assert "does not exist/is not available [-32601]" in err
    assert devnet.key not in err


def test_a_websocket_url_is_used(devnet: Devnet, capsys: pytest.CaptureFixture[str]) -> None:
    assert devnet.gateway is not None
    code, head, _ = _call(capsys, "eth_blockNumber", "--rpc", devnet.ws_url)
    assert code == 0
    assert head == hex(devnet.truth.head)
    assert devnet.gateway.stats()["ws_messages"] == 1


def test_retries_are_shown_on_stderr_without_the_key(devnet: Devnet, capsys: pytest.CaptureFixture[str]) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(faults=(FaultRule(kind="http_5xx", times=2),), seed=1))
    code, head, err = _call(capsys, "eth_blockNumber", "--rpc", devnet.http_url)
    assert code == 0
    assert head == hex(devnet.truth.head)
    lines = err.splitlines()
    assert [line.split(" in ")[0] for line in lines] == ["retrying (1/6)", "retrying (2/6)"]
    assert all("eth_blockNumber via http://127.0.0.1:" in line and "/v3/<redacted>" in line for line in lines)
    assert devnet.key not in err
