"""Batches sized by their answers (:meth:`AsyncClient.batch_bytes`): large answers (a block's receipts) go in batches
of about ANSWER_BYTES, small ones (headers) in ``batch_size``; the first batch of a method whose answers are
not known goes alone when more than one batch waits, and sizes the others, however many callers wait."""

from __future__ import annotations

import json

import anyio
import pytest

from chainframe.devnet import Devnet
from chainframe.rpc import AsyncClient, MemoryTransport, Reply
from chainframe.rpc._client import ANSWER_BYTES, PROBE_CALLS

pytestmark = pytest.mark.anyio


def node(result_bytes: dict[str, int], log: list[tuple[str, int]]) -> MemoryTransport:
    """Answers each call with a string result of the method's size; logs (method, calls) per request."""

    async def answer(body: bytes) -> Reply:
        calls = json.loads(body)
        log.append((calls[0]["method"], len(calls)))
        await anyio.sleep(0.01)  # the others would be sent meanwhile, were they not held
        out = [{"jsonrpc": "2.0", "id": c["id"], "result": "x" * result_bytes[c["method"]]} for c in calls]
        return Reply(200, json.dumps(out).encode())

    return MemoryTransport(answer)


def receipts(blocks: range) -> list[tuple[str, list[str]]]:
    return [("eth_getBlockReceipts", [hex(n)]) for n in blocks]


async def test_large_answers_go_in_batches_of_about_a_megabyte() -> None:
    log: list[tuple[str, int]] = []
    async with AsyncClient("http://node", transport=node({"eth_getBlockReceipts": 100_000}, log)) as client:
        bodies = await client.batch_bytes(receipts(range(200)))
    assert log[0] == ("eth_getBlockReceipts", PROBE_CALLS)  # alone: it sized the rest
    per_batch = ANSWER_BYTES // 100_000 - 1  # the envelopes count too
    assert {n for _, n in log[1:-1]} == {per_batch}
    assert sum(n for _, n in log) == 200
    ids = sorted(a["id"] for body in bodies for a in json.loads(body))
    assert len(ids) == len(set(ids)) == 200


async def test_small_answers_keep_the_batch_size() -> None:
    log: list[tuple[str, int]] = []
    small = {"eth_getBlockByNumber": 2_000}
    async with AsyncClient("http://node", transport=node(small, log), batch_size=50) as client:
        await client.batch_bytes([("eth_getBlockByNumber", [hex(n), False]) for n in range(205)])
    assert [n for _, n in log] == [PROBE_CALLS, 50, 50, 50, 50]


@pytest.mark.parametrize("batch_size", [1, 3])
async def test_no_batch_is_larger_than_batch_size(batch_size: int) -> None:
    """batch_size=1 is how a provider without batches is used: the first batch keeps to it too."""
    log: list[tuple[str, int]] = []
    transport = node({"eth_getBlockReceipts": 100}, log)
    async with AsyncClient("http://node", transport=transport, batch_size=batch_size) as client:
        await client.batch_bytes(receipts(range(20)))
    assert max(n for _, n in log) == batch_size
    assert sum(n for _, n in log) == 20


async def test_one_batch_needs_no_first_one_and_sizes_the_next_calls() -> None:
    log: list[tuple[str, int]] = []
    async with AsyncClient("http://node", transport=node({"eth_getBlockReceipts": 100_000}, log)) as client:
        await client.batch_bytes(receipts(range(30)))  # one batch of 30: a short run pays no extra round trip
        await client.batch_bytes(receipts(range(30)))
    assert [n for _, n in log] == [30, 9, 9, 9, 3]


async def test_concurrent_callers_wait_for_one_first_batch() -> None:
    log: list[tuple[str, int]] = []
    transport = node({"eth_getBlockReceipts": 250_000}, log)
    async with AsyncClient("http://node", transport=transport) as client, anyio.create_task_group() as tg:
        for start in range(0, 800, 100):  # eight pieces of 100 blocks, as the engine starts them
            tg.start_soon(client.batch_bytes, receipts(range(start, start + 100)))
    assert [n for _, n in log].count(PROBE_CALLS) == 1
    assert log[0][1] == PROBE_CALLS
    assert max(n for _, n in log[1:]) == ANSWER_BYTES // 250_000 - 1
    assert sum(n for _, n in log) == 800


async def test_receipts_from_the_node_come_in_batches_of_about_a_megabyte(devnet: Devnet) -> None:
    """Against anvil through the gateway: every receipt comes back once, in more batches than batch_size would make."""
    blocks = range(1, min(devnet.truth.head, 150) + 1)
    async with AsyncClient(devnet.http_url, batch_size=50) as client:
        devnet.gateway.reset_stats()  # type: ignore[union-attr]
        bodies = await client.batch_bytes(receipts(blocks))
        sizes = [len(b) for b in bodies]
    got = sorted(a["id"] for body in bodies for a in json.loads(body))
    assert len(got) == len(set(got)) == len(blocks)
    assert all(a["result"] is not None for body in bodies for a in json.loads(body))
    stats = devnet.gateway.stats()  # type: ignore[union-attr]
    assert stats["http_requests"] == len(bodies)
    assert len(json.loads(bodies[0])) == PROBE_CALLS  # the first batch went alone, and sized the others
    expected = max(1, min(50, int(ANSWER_BYTES / (sizes[0] / PROBE_CALLS))))
    assert len(bodies) == 1 + -(-(len(blocks) - PROBE_CALLS) // expected)
