"""Failover for every method: several endpoints, the first dead (connection refused), failing (5xx) or of another
chain; the calls are answered all the same, each endpoint's chain id is asked once, and what was set aside says why."""

from __future__ import annotations

import logging
import socket
from typing import Any

import anyio
import pytest
from aiohttp import web

from chainframe.devnet import Devnet, FaultRule, GatewaySettings
from chainframe.rpc import AsyncClient, Endpoint, RetryPolicy
from tests.threaded_server import serve_in_thread

pytestmark = pytest.mark.anyio
QUICK = RetryPolicy(attempts=3, initial_wait=0.05, max_wait=0.2, rate_limit_total=1.0)
REFUSED = "connection failed (ConnectionRefusedError)"


def dead_url(key: str) -> str:
    """A localhost URL nothing listens on (the port was bound, then closed), carrying ``key`` as Infura's do."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v3/{key}"


class FakeNode:
    """A JSON-RPC server on 127.0.0.1 that answers eth_chainId with ``chain_id`` and everything else with null (or
    HTTP ``status``), recording every method it was asked."""

    def __init__(self, chain_id: int = 1, status: int = 200) -> None:
        self.chain_id, self.status = chain_id, status
        self.methods: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        calls = body if isinstance(body, list) else [body]
        self.methods += [c["method"] for c in calls]
        if self.status != 200:
            return web.Response(status=self.status, text="down for maintenance")
        answers = [
            {"jsonrpc": "2.0", "id": c["id"], "result": hex(self.chain_id) if c["method"] == "eth_chainId" else None}
            for c in calls
        ]
        return web.json_response(answers if isinstance(body, list) else answers[0])

    def serve(self) -> Any:
        return serve_in_thread([("/{tail:.*}", self.handle)])


@pytest.fixture
def dead(devnet: Devnet) -> str:
    return dead_url(devnet.key)


async def _number(client: AsyncClient, n: int) -> int:
    block = await client.get_block(n)
    assert block is not None
    assert block.number is not None
    return block.number


def _gateway_calls(devnet: Devnet) -> dict[str, int]:
    assert devnet.gateway is not None
    calls: dict[str, int] = devnet.gateway.stats()["calls"]
    return calls


async def test_every_method_is_answered_when_the_first_endpoint_is_dead(
    devnet: Devnet, dead: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="chainframe.rpc")
    async with AsyncClient(devnet.http_url) as direct:
        block = await direct.get_block(5, full_transactions=True)
        receipts = await direct.get_block_receipts(5)
        logs = [log.to_json() for log in await direct.get_logs(from_block=1, to_block=9)]
    devnet.gateway.reset_stats()  # type: ignore[union-attr]
    async with AsyncClient(dead, fallbacks=[devnet.http_url], retry=QUICK) as client:
        assert await client.chain_id() == devnet.truth.chain_id  # the first call: its answer comes from the fallback
        assert await client.get_block(5, full_transactions=True) == block
        assert await client.get_block_receipts(5) == receipts
        assert [log.to_json() for log in await client.get_logs(from_block=1, to_block=9)] == logs
        headers = await client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in range(8)])
        assert [int(h["number"], 16) for h in headers] == list(range(8))
        assert await client.block_number() == devnet.truth.head
    display = Endpoint.from_url(dead).display
    assert client.stats.set_aside == {display: REFUSED}
    assert client.stats.failovers == 6  # every request went to the fallback
    assert client.stats.retries == 0  # failover is not a retry: no request waited
    assert _gateway_calls(devnet)["eth_chainId"] == 2  # the check, once, and the chain_id() asked
    assert f"{display} set aside for 30 s: {REFUSED}" in caplog.messages
    assert devnet.key not in repr(client.stats) + caplog.text


async def test_concurrent_first_requests_ask_a_failing_endpoint_once(devnet: Devnet) -> None:
    failing = FakeNode(chain_id=devnet.truth.chain_id, status=503)
    with failing.serve() as port:
        primary = f"http://127.0.0.1:{port}/v3/{devnet.key}"
        async with AsyncClient(primary, fallbacks=[devnet.http_url], retry=QUICK) as client:
            numbers = list(range(20))
            found: dict[int, int] = {}

            async def one(n: int) -> None:
                found[n] = await _number(client, n)

            async with anyio.create_task_group() as tg:
                for n in numbers:
                    tg.start_soon(one, n)
    assert found == {n: n for n in numbers}
    assert failing.methods == ["eth_chainId"]  # the others waited for its check and went on, not to it again
    assert client.stats.set_aside == {f"http://127.0.0.1:{port}/v3/<redacted>": "HTTP 503: down for maintenance"}
    assert _gateway_calls(devnet)["eth_chainId"] == 1


async def test_an_endpoint_of_another_chain_is_set_aside_and_never_serves(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    other = FakeNode(chain_id=1)
    with other.serve() as port:
        wrong = f"http://127.0.0.1:{port}/v3/{devnet.key}"
        async with AsyncClient(devnet.http_url, fallbacks=[wrong], retry=QUICK) as client:
            assert await client.chain_id() == devnet.truth.chain_id
            # The first endpoint fails once: the next one is asked its chain, set aside, and the first one answers.
            rule = FaultRule(kind="http_5xx", status=503, times=1, methods=("eth_getBlockByNumber",))
            devnet.gateway.configure(GatewaySettings(faults=(rule,)))
            assert await _number(client, 7) == 7
            assert await _number(client, 8) == 8
            logs = await client.get_logs(from_block=1, to_block=3)
    assert len(logs) == sum(devnet.truth.logs_per_block()[n] for n in (1, 2, 3))
    assert other.methods == ["eth_chainId"]  # asked its chain once, and nothing else
    assert client.stats.set_aside == {
        Endpoint.from_url(devnet.http_url).display: "HTTP 503: upstream error",
        f"http://127.0.0.1:{port}/v3/<redacted>": f"serves chain 1, not {devnet.truth.chain_id}",
    }
    assert client.stats.failovers == 0  # every answer came from the first endpoint


async def test_one_endpoint_is_not_asked_its_chain(devnet: Devnet) -> None:
    async with AsyncClient(devnet.http_url) as client:
        await client.get_block(1)
    assert "eth_chainId" not in _gateway_calls(devnet)
    assert client.stats.set_aside == {}


async def test_the_first_endpoint_answers_again_after_its_cooldown(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    flaky = FakeNode(chain_id=devnet.truth.chain_id, status=503)
    with flaky.serve() as port:
        fallback = f"http://127.0.0.1:{port}/v3/{devnet.key}"
        rule = FaultRule(kind="http_5xx", status=503, times=1)
        devnet.gateway.configure(GatewaySettings(faults=(rule,)))
        async with AsyncClient(devnet.http_url, fallbacks=[fallback], retry=QUICK, failover_cooldown=0.0) as client:
            assert await _number(client, 3) == 3  # 503, its fallback's check 503, then again: answered
            assert await _number(client, 4) == 4
    assert client.stats.retries == 1
    assert _gateway_calls(devnet) == {"eth_chainId": 2, "eth_getBlockByNumber": 2}  # the check failed once
    assert flaky.methods == ["eth_chainId"]
