"""The capability probe against the real devnet: as it is (everything served), and with the gateway playing Hardhat
and Ganache (issue 31), whose missing methods it must name and route around."""

from __future__ import annotations

import json

import pytest

from chainframe import aprobe, probe
from chainframe.datasets import DATASETS
from chainframe.devnet import Devnet, GatewaySettings, LogLimits, MissingMethod
from chainframe.engine import Capabilities
from chainframe.engine._routes import Check, routes

TRACES = ("call_traces", "prestate_accounts", "prestate_storage")
BY_TRANSACTION = "eth_getBlockByNumber + eth_getTransactionReceipt"


def _key(devnet: Devnet) -> str:
    return devnet.http_url.rsplit("/", 1)[1]


def _works(found: Capabilities) -> dict[str, bool]:
    return {r.dataset: r.works for r in found.datasets}


def test_the_devnet_as_it_is_serves_every_dataset(devnet: Devnet) -> None:
    found = probe(rpc=devnet.http_url)
    assert found.chain_id == devnet.truth.chain_id
    assert found.head == devnet.truth.head
    assert [r.dataset for r in found.datasets] == list(DATASETS)  # every dataset, in the catalogue's order
    assert all(_works(found).values())
    assert found.route("receipts").route == "eth_getBlockReceipts"
    assert found.route("logs").route == "eth_getLogs"
    assert found.batches
    assert found.batch_answered == 100
    assert found.batch_refused is None
    assert found.finalized
    assert found.safe
    assert found.archive is True  # the gateway serves the state reads at old blocks: eth_getBalance at block 1 tells
    assert "eth_getBalance" in found.archive_by
    # The gateway serves the spec's methods only (Infura's shape): no client version; the trace and state-read
    # methods are passed through too, but not trace_replayBlockTransactions: the state diffs' second route serves.
    assert found.client_version is None
    assert found.missing == ("trace_replayBlockTransactions",)
    assert found.route("balance_diffs").route == "debug_traceBlockByNumber prestateTracer diffMode"
    assert found.requests == 6  # two batches of checks, two of getLogs limits, two of the batch size
    assert _key(devnet) not in json.dumps(found.to_json()) + found.table()
    assert found.endpoint.endswith("/v3/<redacted>")


def test_without_eth_getbalance_eth_getproof_tells_old_state_is_kept(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(missing=(MissingMethod(method="eth_getBalance"),)))
    found = probe(rpc=devnet.http_url)
    assert "eth_getBalance" in found.missing
    assert found.archive is True
    assert "eth_getProof at block 1 answered" in found.archive_by
    assert found.route("balances").works  # read by eth_call (BALANCE of each account), not eth_getBalance
    assert found.route("nonces").works  # the other state reads have their methods


def test_anvil_itself_serves_the_trace_methods_and_tells_its_version(devnet: Devnet) -> None:
    found = probe(rpc=devnet.node.url)
    assert found.client_version is not None
    assert found.client_version.startswith("anvil/")
    assert found.missing == ()
    assert all(found.check(m).ok for m in ("trace_block", "debug_traceBlockByNumber", "debug_traceTransaction"))  # type: ignore[union-attr]
    assert found.archive is True
    assert "eth_getBalance" in found.archive_by


def test_hardhat_receipts_by_transaction_no_finalized_no_uncles(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    lacks = ("eth_getBlockReceipts", "eth_getUncleByBlockNumberAndIndex", "eth_getUncleByBlockHashAndIndex")
    devnet.gateway.configure(GatewaySettings(
        missing=tuple(MissingMethod(method=m, like="hardhat") for m in lacks), unknown_tags=("finalized",),
    ))  # fmt: skip
    found = probe(rpc=devnet.http_url)
    assert set(lacks) <= set(found.missing)
    assert found.check("eth_getBlockReceipts").answer == "Method eth_getBlockReceipts is not supported [-32004]"  # type: ignore[union-attr]
    assert found.route("receipts").works
    assert found.route("receipts").route == BY_TRANSACTION
    assert "lacks eth_getBlockReceipts" in found.route("receipts").note
    assert found.route("logs").works
    assert BY_TRANSACTION in found.route("logs").note
    # Without the uncle method, blocks whose own lists name no uncle (every block since the merge) still read.
    assert found.route("uncles").works
    assert found.route("uncles").route == "eth_getBlockByNumber"
    assert "lacks eth_getUncleByBlockNumberAndIndex" in found.route("uncles").note
    assert not found.finalized
    assert found.safe
    assert all(_works(found)[name] for name in TRACES)  # Hardhat's refusal of tracers: see the unit test below


@pytest.mark.anyio
async def test_ganache_receipts_by_transaction_and_no_traces(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    lacks = ("eth_getBlockReceipts", "debug_traceCall")
    devnet.gateway.configure(GatewaySettings(missing=tuple(MissingMethod(method=m, like="ganache") for m in lacks)))
    found = await aprobe(rpc=devnet.http_url)
    assert set(lacks) <= set(found.missing)
    assert found.route("receipts").route == BY_TRANSACTION
    for name in TRACES:
        assert not found.route(name).works
        assert found.route(name).note == "the node lacks debug_traceCall"
    works = _works(found)
    assert {name for name, ok in works.items() if not ok} == set(TRACES)


def test_a_refused_tracer_is_not_a_missing_method() -> None:
    """Hardhat answers debug_traceCall with a tracer -32602 "Hardhat currently only supports the default tracer"."""
    refused = "Hardhat currently only supports the default tracer [-32602]"
    found = {name: Check(name=name, status="served") for name in ("eth_getBlockByNumber", "eth_getProof")}
    found |= {f"debug_traceCall {t}": Check(name=f"debug_traceCall {t}", status="error", answer=refused)
              for t in ("callTracer", "prestateTracer")}  # fmt: skip
    by_name = {r.dataset: r for r in routes(found, archive=None)}
    assert not by_name["call_traces"].works
    assert by_name["call_traces"].note == f"the node refuses debug_traceCall callTracer: {refused}"
    assert not by_name["receipts"].works
    assert "eth_getBlockReceipts" in by_name["receipts"].note
    assert by_name["account_proofs"].works


@pytest.mark.parametrize(
    ("limits", "results", "blocks", "said"),
    [
        (LogLimits(), 10_000, None, "range: 241 blocks answered; results: 10,000"),  # Infura's, as the gateway plays it
        (LogLimits(max_results=500, max_range=100), 500, 100, "range: 100 blocks; results: 500"),
        (LogLimits(max_results=100_000), None, None, "results: 10,146 answered in one call (164 blocks)"),
    ],
)
def test_getlogs_limits_are_found_in_three_calls(
    devnet: Devnet, limits: LogLimits, results: int | None, blocks: int | None, said: str
) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(limits=limits))
    devnet.gateway.reset_stats()
    found = probe(rpc=devnet.http_url)
    assert (found.log_results, found.log_blocks) == (results, blocks)
    assert said in found.log_limits
    assert f"getLogs    {found.log_limits}" in found.table()
    assert found.to_json()["log_results"] == results
    # The probe's own eth_getLogs at the head, then the limits' two or three: never a scan of the chain.
    assert devnet.gateway.stats()["calls"]["eth_getLogs"] <= 4
