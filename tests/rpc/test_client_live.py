"""The client against the real devnet through the gateway, over HTTP and WebSocket: every method, and every error
class provoked for real with the gateway's fault knobs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from chainframe.devnet import Devnet, FaultRule, GatewaySettings, LogLimits
from chainframe.rpc import (
    AsyncClient,
    Client,
    Endpoint,
    InvalidParams,
    KeyRefused,
    LimitExceeded,
    MalformedResponse,
    MethodNotFound,
    Prestate,
    PrestateDiff,
    QuotaExhausted,
    RateLimited,
    RetryPolicy,
    ServerError,
    ServiceUnavailable,
    TransportError,
)

pytestmark = pytest.mark.anyio
QUICK = RetryPolicy(attempts=3, initial_wait=0.05, max_wait=0.2, rate_limit_total=1.0)


def _configure(devnet: Devnet, *rules: FaultRule, **settings: Any) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(faults=rules, **settings))


def _stats(devnet: Devnet) -> dict[str, Any]:
    assert devnet.gateway is not None
    return devnet.gateway.stats()


@pytest.fixture(params=["http", "ws"])
async def client(request: pytest.FixtureRequest, devnet: Devnet) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(devnet.http_url, transport=request.param, retry=QUICK) as c:
        yield c


async def test_head_and_chain(client: AsyncClient, devnet: Devnet) -> None:
    assert await client.block_number() == devnet.truth.head
    assert await client.chain_id() == devnet.truth.chain_id


async def test_blocks_transactions_receipts_match_the_ground_truth(client: AsyncClient, devnet: Devnet) -> None:
    truth = devnet.truth
    tx = next(t for t in truth.txs if t.kind == "revert_nest")
    block = await client.get_block(tx.block, full_transactions=True)
    assert block is not None
    assert block.number == tx.block
    assert block.timestamp == truth.timestamp(tx.block)
    assert (
        [t.hash.hex() for t in block.transactions]
        == [  # type: ignore[union-attr]
            t.hash[2:] for t in truth.txs if t.block == tx.block
        ]
    )
    hashes_only = await client.get_block(tx.block)
    assert hashes_only is not None
    assert hashes_only.hash == block.hash
    assert all(isinstance(h, bytes) and len(h) == 32 for h in hashes_only.transactions)
    receipts = await client.get_block_receipts(tx.block)
    assert receipts is not None
    assert [r.status for r in receipts] == [t.status for t in truth.txs if t.block == tx.block]
    receipt = await client.get_transaction_receipt(tx.hash)
    assert receipt is not None
    assert receipt.status == 0
    assert receipt.logs == ()
    by_number = await client.get_transaction_by_block_number_and_index(tx.block, tx.index)
    by_hash = await client.get_transaction_by_block_hash_and_index(block.hash, tx.index)
    assert by_number == by_hash
    assert by_number is not None
    assert by_number.hash.hex() == tx.hash[2:]
    assert by_number.type == tx.tx_type


async def test_not_found_is_none(client: AsyncClient, devnet: Devnet) -> None:
    beyond = devnet.truth.head + 10
    assert await client.get_block(beyond) is None
    assert await client.get_block_receipts(beyond) is None
    assert await client.get_transaction_receipt(b"\x00" * 32) is None
    assert await client.get_transaction_by_block_number_and_index(1, 999) is None
    assert await client.get_uncle_by_block_number_and_index(5, 0) is None  # anvil makes no uncles
    block = await client.get_block(5)
    assert block is not None
    assert await client.get_uncle_by_block_hash_and_index(block.hash, 0) is None


async def test_logs_with_filters(client: AsyncClient, devnet: Devnet) -> None:
    truth = devnet.truth
    per_block = truth.logs_per_block()
    logs = await client.get_logs(from_block=3, to_block=9)
    assert len(logs) == sum(per_block[3:10])
    assert all(3 <= log.block_number <= 9 for log in logs)
    emitter = truth.contracts["Emitter"]
    only_emitter = await client.get_logs(from_block=3, to_block=9, address=emitter)
    assert {log.address.hex() for log in only_emitter} == {emitter[2:].lower()}
    spam = only_emitter[1].topics[0]  # LOG1..LOG4 share the Spam topic0
    matched = await client.get_logs(from_block=3, to_block=9, address=[emitter], topics=[spam, None, [b"\x00" * 32]])
    assert matched == tuple(log for log in only_emitter if len(log.topics) >= 3 and log.topics[2] == b"\x00" * 32)
    block = await client.get_block(4)
    assert block is not None
    assert len(await client.get_logs(block_hash=block.hash)) == per_block[4]


async def test_proof_and_traces(client: AsyncClient, devnet: Devnet) -> None:
    truth = devnet.truth
    store = truth.contracts["Store"]
    # Which slot does Store.set(5, 7) write? The prestate diff says; its pre value is the slot's value at head.
    set_5 = "0x1ab06ee5" + format(5, "064x") + format(7, "064x")
    diff = await client.trace_prestate(to=store, data=set_5, block=truth.head, diff_mode=True)
    assert isinstance(diff, PrestateDiff)
    store_key = bytes.fromhex(store[2:])
    ((slot, written),) = diff.post[store_key].storage.items()
    assert int.from_bytes(written, "big") == 7
    before = diff.pre[store_key].storage.get(slot, b"\x00")
    proof = await client.get_proof(store, [slot], truth.head)
    assert proof.address == store_key
    assert proof.storage_proof[0].key == slot
    assert proof.storage_proof[0].value == int.from_bytes(before, "big")
    assert proof.account_proof  # Merkle nodes from the state root down
    dive = "0xa8d85c2e" + format(3, "064x")
    frame = await client.trace_call(to=truth.contracts["Nest"], data=dive, block=truth.head, with_log=True)
    assert len(frame.logs) == 1  # Dived(3) at the top level; deeper levels log inside their own frames
    depth = 0
    while frame.calls:
        frame = frame.calls[0]
        depth += 1
    assert depth == 3
    top = await client.trace_call(to=truth.contracts["Nest"], data=dive, only_top_call=True)
    assert top.calls == ()
    plain = await client.trace_prestate(to=truth.contracts["Nest"], data=dive)
    assert isinstance(plain, Prestate)


async def test_batch_in_order_with_per_item_errors(client: AsyncClient, devnet: Devnet) -> None:
    calls: list[tuple[str, list[Any]]] = [("eth_getBlockByNumber", [hex(n), False]) for n in range(120)]
    calls.insert(7, ("eth_sendTransaction", [{}]))
    results = await client.batch(calls)
    assert isinstance(results[7], MethodNotFound)
    assert results[7].method == "eth_sendTransaction"
    blocks = results[:7] + results[8:]
    assert [int(b["number"], 16) for b in blocks] == list(range(120))


async def test_batch_survives_reordered_and_missing_items(client: AsyncClient, devnet: Devnet) -> None:
    _configure(devnet, FaultRule(kind="batch_reorder"), FaultRule(kind="batch_drop_item", times=3), seed=5)
    results = await client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in range(40)])
    assert [int(b["number"], 16) for b in results] == list(range(40))
    assert client.stats.retries >= 1


async def test_429_backoff_is_waited_out_then_succeeds(
    client: AsyncClient, devnet: Devnet, caplog: pytest.LogCaptureFixture
) -> None:
    _configure(devnet, FaultRule(kind="http_429", backoff=1.0, times=1))
    started = time.monotonic()
    with caplog.at_level("INFO", logger="chainframe.rpc"):
        assert await client.block_number() == devnet.truth.head
    assert "retrying" in caplog.text
    assert devnet.key not in caplog.text
    assert time.monotonic() - started >= 1.0
    assert client.stats.rate_limited == 1
    assert _stats(devnet)["faults"] == {"http_429": 1}


async def test_rate_limit_32005_is_retried(client: AsyncClient, devnet: Devnet) -> None:
    _configure(devnet, FaultRule(kind="rate_limit", backoff=0.3, times=2))
    assert await client.chain_id() == devnet.truth.chain_id
    assert client.stats.rate_limited == 2


async def test_persistent_rate_limit_is_waited_out_within_its_own_budget(client: AsyncClient, devnet: Devnet) -> None:
    """Rate limits do not use up the error attempts (3 here): they are waited out for rate_limit_total (1 s)."""
    _configure(devnet, FaultRule(kind="rate_limit", backoff=0.1))
    started = time.monotonic()
    with pytest.raises(RateLimited) as error:
        await client.chain_id()
    assert 1.0 <= time.monotonic() - started < 3.0
    assert error.value.backoff == 0.1
    assert _stats(devnet)["calls"]["eth_chainId"] > QUICK.attempts


async def test_quota_is_fatal_and_not_retried(devnet: Devnet) -> None:
    _configure(devnet, FaultRule(kind="http_402"))
    async with AsyncClient(devnet.http_url, retry=QUICK) as client:
        with pytest.raises(QuotaExhausted):
            await client.block_number()
    assert _stats(devnet)["http_requests"] == 1


async def test_refused_key_is_fatal_after_one_retry_and_never_shown(devnet: Devnet) -> None:
    wrong = "f" * 32
    for transport in ("http", "ws"):
        async with AsyncClient(devnet.http_url.replace(devnet.key, wrong), transport=transport, retry=QUICK) as c:
            with pytest.raises(KeyRefused) as error:
                await c.block_number()
        text = str(error.value) + repr(error.value) + repr(c)
        assert wrong not in text
        assert "<redacted>" in str(error.value)
    assert _stats(devnet)["auth_failures"] == 4  # one retry each, over HTTP and over WebSocket


async def test_limit_errors_carry_reason_and_hint(client: AsyncClient, devnet: Devnet) -> None:
    with pytest.raises(LimitExceeded) as error:
        await client.get_logs(from_block=0, to_block=devnet.truth.head)
    assert error.value.reason == "results"
    assert error.value.hint is not None
    assert error.value.hint[0] == 0
    assert error.value.blocks == (0, devnet.truth.head)
    assert _stats(devnet)["calls"]["eth_getLogs"] == 1  # terminal: not retried
    _configure(devnet, limits=LogLimits(timeout_blocks=10))
    with pytest.raises(LimitExceeded) as timeout:
        await client.get_logs(from_block=1, to_block=50)
    assert timeout.value.reason == "timeout"
    _configure(devnet, limits=LogLimits(max_range=20))
    with pytest.raises(LimitExceeded) as too_wide:
        await client.get_logs(from_block=1, to_block=50)
    assert too_wide.value.reason == "range"
    assert too_wide.value.code == -32602


async def test_invalid_params_method_not_found_and_server_errors(client: AsyncClient, devnet: Devnet) -> None:
    with pytest.raises(InvalidParams):
        await client.request("eth_getLogs", [{"blockHash": "0x" + "00" * 32, "fromBlock": "0x1"}])
    with pytest.raises(MethodNotFound):
        await client.request("eth_sendTransaction", [{}])
    with pytest.raises(ServerError) as error:  # anvil: -32603 for a tracer it does not know
        await client.request("debug_traceCall", [{"to": devnet.truth.contracts["Nest"]}, "latest", {"tracer": "nope"}])
    assert error.value.code == -32603
    assert error.value.method == "debug_traceCall"


async def test_transient_faults_are_retried(client: AsyncClient, devnet: Devnet) -> None:
    transport = client._transport_kind
    for kind in ("drop", "truncate", "http_5xx"):
        _configure(devnet, FaultRule(kind=kind, times=1))  # type: ignore[arg-type]
        block = await client.get_block(3, full_transactions=True)
        assert block is not None, (transport, kind)
        assert block.number == 3
    assert client.stats.retries == 3


async def test_persistent_faults_end_in_their_class(devnet: Devnet) -> None:
    expected = {
        ("http", "drop"): TransportError,
        ("http", "truncate"): TransportError,  # httpx reads a short body as a broken connection
        ("http", "http_5xx"): ServiceUnavailable,
        ("ws", "drop"): TransportError,
        ("ws", "truncate"): MalformedResponse,
        ("ws", "http_5xx"): TransportError,  # over WebSocket a 5xx is a close with code 1011
    }
    for (transport, kind), error in expected.items():
        _configure(devnet, FaultRule(kind=kind))  # type: ignore[arg-type]
        async with AsyncClient(devnet.http_url, transport=transport, retry=QUICK) as client:  # type: ignore[arg-type]
            with pytest.raises(error):
                await client.get_block(3, full_transactions=True)


async def test_pacing_requests_per_second(devnet: Devnet) -> None:
    from chainframe.rpc import Pacing

    async with AsyncClient(devnet.http_url, pacing=Pacing(requests_per_second=20)) as client:
        started = time.monotonic()
        for _ in range(40):  # the bucket holds 20; the other 20 wait for refill
            await client.chain_id()
        assert time.monotonic() - started >= 0.9


async def test_credit_pacing_keeps_under_the_gateway_limit(devnet: Devnet) -> None:
    from chainframe.rpc import Pacing

    _configure(devnet, credits_per_second=800.0)
    calls = [("eth_getBlockByNumber", [hex(n), False]) for n in range(30)]
    async with AsyncClient(devnet.http_url, batch_size=1, retry=QUICK) as unpaced:
        await unpaced.batch(calls)
    assert _stats(devnet)["rate_limited"] > 0  # without pacing, the gateway says 429
    devnet.gateway.reset_stats()  # type: ignore[union-attr]
    _configure(devnet, credits_per_second=800.0)
    async with AsyncClient(devnet.http_url, batch_size=1, pacing=Pacing(credits_per_second=700)) as paced:
        results = await paced.batch(calls)
    assert [int(b["number"], 16) for b in results] == list(range(30))
    assert _stats(devnet)["rate_limited"] == 0
    assert paced.pacer.waited > 1.0


async def test_concurrency_cap(devnet: Devnet) -> None:
    from chainframe.rpc import Pacing

    _configure(devnet, FaultRule(kind="slow", delay=0.3))
    async with AsyncClient(devnet.http_url, batch_size=1, pacing=Pacing(max_concurrency=2)) as client:
        started = time.monotonic()
        await client.batch([("eth_chainId", [])] * 6)
        assert time.monotonic() - started >= 0.9  # 6 calls, 2 at a time, 0.3 s each


async def test_failover_while_the_primary_is_down(devnet: Devnet) -> None:
    dead = "http://127.0.0.1:9/v3/" + devnet.key  # discard port: connection refused
    async with AsyncClient(dead, fallbacks=[devnet.http_url], retry=QUICK) as client:
        logs = await client.get_logs(from_block=2, to_block=2)
        assert len(logs) == devnet.truth.logs_per_block()[2]
        assert client.stats.failovers == 1
        await client.get_logs(from_block=3, to_block=3)
        assert client.stats.failovers == 2
        assert await client.block_number() == devnet.truth.head  # every method fails over
        assert client.stats.failovers == 3
        assert list(client.stats.set_aside) == ["http://127.0.0.1:9/v3/<redacted>"]


async def test_failover_uses_the_fallback_first_during_cooldown(devnet: Devnet) -> None:
    from chainframe.devnet import GatewayConfig, GatewayProcess

    broken = GatewayProcess(
        GatewayConfig(
            networks={"devnet": devnet.node.url},
            default_network="devnet",
            keys=(devnet.key,),
            admin_token="t",
            settings=GatewaySettings(faults=(FaultRule(kind="http_5xx", status=503),)),
        )
    )
    with broken:
        async with AsyncClient(broken.http_url(devnet.key), fallbacks=[devnet.http_url], retry=QUICK) as client:
            for n in range(1, 4):
                assert len(await client.get_logs(from_block=n, to_block=n)) == devnet.truth.logs_per_block()[n]
        # Its chain id is asked before its first answer would be used; after that 503, the primary rests.
        assert broken.stats()["calls"] == {"eth_chainId": 1}
        assert client.stats.set_aside == {broken.http_url("<redacted>"): "HTTP 503: upstream error"}


async def test_websocket_reconnects_after_a_drop(devnet: Devnet) -> None:
    async with AsyncClient(devnet.http_url, transport="ws", retry=QUICK) as client:
        assert await client.chain_id() == devnet.truth.chain_id
        _configure(devnet, FaultRule(kind="drop", transport="ws", times=1))
        assert await client.block_number() == devnet.truth.head
    assert _stats(devnet)["ws_connections"] == 2


async def test_websocket_many_in_flight(devnet: Devnet) -> None:
    async with AsyncClient(devnet.http_url, transport="ws", batch_size=1) as client:
        results = await client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in range(100)])
    assert [int(b["number"], 16) for b in results] == list(range(100))
    assert _stats(devnet)["ws_connections"] == 1


async def test_http2_option(devnet: Devnet) -> None:
    async with AsyncClient(devnet.http_url, http2=True) as client:  # the gateway speaks HTTP/1.1: negotiated down
        assert await client.chain_id() == devnet.truth.chain_id


def test_sync_client_inside_a_running_event_loop(devnet: Devnet) -> None:
    async def notebook_cell() -> int:  # Jupyter runs cells while its loop is running
        with Client(devnet.http_url) as client:
            return client.block_number()

    assert asyncio.run(notebook_cell()) == devnet.truth.head
    with Client(Endpoint.from_url(devnet.http_url), transport="ws") as client:
        assert client.get_block(1) is not None
        assert devnet.key not in repr(client)
        results = client.batch([("eth_chainId", [])] * 3)
        assert results == [hex(devnet.truth.chain_id)] * 3


async def test_credit_pacing_counts_what_a_batch_costs_itself(devnet: Devnet) -> None:
    """A batch of 5 costs 6 calls' credits (Infura: 30 calls count as 31); a pacer that forgot it would send 20%
    too fast and be answered 429 here."""
    from chainframe.rpc import Pacing

    assert Pacing().cost(["eth_getBlockByNumber"] * 5) == 6 * 80
    assert Pacing().cost(["eth_getBlockByNumber"]) == 80
    _configure(devnet, credits_per_second=4000.0)
    calls = [("eth_getBlockByNumber", [hex(n % 200), False]) for n in range(120)]  # 24 batches: 11,520 credits
    async with AsyncClient(devnet.http_url, batch_size=5, pacing=Pacing(credits_per_second=4000)) as paced:
        results = await paced.batch(calls)
    assert [int(b["number"], 16) for b in results] == [n % 200 for n in range(120)]
    assert _stats(devnet)["rate_limited"] == 0
    assert paced.pacer.waited > 1.0
