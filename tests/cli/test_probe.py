"""``chainframe probe``: the table and ``--json`` against the devnet, the key in neither."""

from __future__ import annotations

import json
import re

import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet, GatewaySettings, MissingMethod

BY_TRANSACTION = "eth_getBlockByNumber + eth_getTransactionReceipt"


def test_the_command_prints_the_table_and_json(devnet: Devnet, capsys: pytest.CaptureFixture[str]) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(missing=(MissingMethod(method="eth_getBlockReceipts", like="ganache"),)))
    assert main(["probe", "--rpc", devnet.http_url]) == 0
    table = capsys.readouterr().out
    assert re.search(r"^receipts +yes +" + re.escape(BY_TRANSACTION), table, re.M), table
    assert re.search(r"^missing methods: eth_getBlockReceipts\b", table, re.M), table
    assert "6 requests" in table
    assert main(["probe", "--rpc", devnet.http_url, "--json"]) == 0
    out = capsys.readouterr().out
    found = json.loads(out)
    assert found["chain_id"] == devnet.truth.chain_id
    assert "eth_getBlockReceipts" in found["missing"]
    by_name = {r["dataset"]: r for r in found["datasets"]}
    assert by_name["receipts"]["route"] == BY_TRANSACTION
    assert by_name["receipts"]["works"]
    assert devnet.http_url.rsplit("/", 1)[1] not in out + table
