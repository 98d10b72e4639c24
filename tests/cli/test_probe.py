"""``chainframe probe``: the table and ``--json`` against the devnet, the key in neither."""

from __future__ import annotations

import json
import re

import pytest

from chainframe.cli import main
from chainframe.devnet import AnvilNode, AnvilOptions, Devnet, GatewaySettings, MissingMethod
from chainframe.families import ETHEREUM, OP_STACK

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


def test_the_command_names_the_chain_family_and_says_when_it_is_assumed(
    devnet: Devnet, capsys: pytest.CaptureFixture[str]
) -> None:
    assert devnet.truth.chain_id not in ETHEREUM.chain_ids  # 31337: no family knows it
    assert main(["probe", "--rpc", devnet.http_url]) == 0
    table = capsys.readouterr().out
    assert re.search(r"^family +ethereum, assumed: chain id not known$", table, re.M), table
    assert re.search(r"^  proven +withdrawals root$", table, re.M), table
    assert main(["probe", "--rpc", devnet.http_url, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["family"]["name"] == "ethereum"
    assert found["family"]["assumed"] is True
    assert found["family"]["network"] is None
    assert {"chain_id", "head", "checks", "datasets", "missing"} <= found.keys()  # the shape kept, a field added


def test_the_command_names_op_mainnet_and_what_its_headers_do_not_prove(capsys: pytest.CaptureFixture[str]) -> None:
    # A real anvil reporting OP Mainnet's chain id, its genesis after Isthmus: the family is read from the id alone.
    with AnvilNode(AnvilOptions(chain_id=10, genesis_timestamp=1_800_000_000)) as node:
        assert main(["probe", "--rpc", node.url]) == 0
        table = capsys.readouterr().out
        assert main(["probe", "--rpc", node.url, "--json"]) == 0
        family = json.loads(capsys.readouterr().out)["family"]
    assert re.search(r"^family +OP Mainnet, op-stack$", table, re.M), table
    assert "receipts.effective_gas_price" not in table  # Arbitrum's, not OP's
    withdrawals = OP_STACK.withdrawals_root(10, 1_800_000_000)
    assert withdrawals is not None
    assert f"  skipped  blocks.withdrawals_root: {withdrawals}" in table
    assert family["name"] == "op-stack"
    assert family["assumed"] is False
    assert family["network"] == "OP Mainnet"
    assert family["skipped"]["blocks.withdrawals_root"] == withdrawals
    assert family["skipped"]["receipts.l1_fee"] == OP_STACK.unprovable["receipts.l1_fee"]
    assert "withdrawals root" not in family["proven"]
    assert any("0x7e deposit" in p for p in family["proven"])


def test_several_endpoints_are_probed_apart_and_what_differs_is_said(
    devnet: Devnet, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gateway (Infura's eth_getLogs limits) and a bare anvil of another chain, given together as a shared run
    would be: each probed with its own requests, then the other chain and the limits that differ named."""
    with AnvilNode(AnvilOptions(chain_id=10, genesis_timestamp=1_800_000_000)) as node:
        assert main(["probe", "--rpc", devnet.http_url, "--rpc", node.url]) == 0
        table = capsys.readouterr().out
        assert main(["probe", "--rpc", devnet.http_url, "--rpc", node.url, "--json"]) == 0
        found = json.loads(capsys.readouterr().out)
    assert [f["chain_id"] for f in found] == [devnet.truth.chain_id, 10]
    assert table.count("== endpoint ") == 2
    assert re.search(r"^family +OP Mainnet, op-stack$", table, re.M), table  # the second endpoint's own table
    assert re.search(rf"^  chain: endpoint 1 serves {devnet.truth.chain_id}; endpoint 2 \(10\) another chain", table,
                     re.M), table  # fmt: skip
    logs = re.search(r"^  getLogs differ: endpoint 1: (.*); endpoint 2: (.*)$", table, re.M)
    assert logs is not None, table
    assert "10000 results limit" in logs.group(1)  # the gateway's, as Infura's
    assert logs.group(2) == "no block range limit, no results limit"  # anvil has none
    assert devnet.http_url.rsplit("/", 1)[1] not in table + json.dumps(found)
