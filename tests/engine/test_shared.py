"""A run that verifies asks each block's header, body and receipts once (engine._shared): the datasets of the run are
each other's proof material; a run that does not verify asks once what several of its series read. Counted by the
gateway on the real devnet; the rows are those of a run that does not verify (or of each series alone); an answer
that fails a check is not handed on again; memory is bounded by what is kept, not by the range."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import polars as pl
import pytest

from chainframe import extract
from chainframe.datasets import BlockRange, Proof
from chainframe.devnet import Devnet, FaultRule, GatewaySettings
from chainframe.engine._shared import SharedAnswers, asking, receiving
from chainframe.rpc import AsyncClient
from tests.engine.hostile import Hostile

ALONE = ["receipts", "logs"]
"""Datasets proven each against material of its own (without the blocks and transactions in the run they are not
proven together, engine._joint): the receipts' proof reads the headers and bodies, the logs' the headers and
receipts."""


def _last_final(devnet: Devnet) -> int:
    """A block well below the devnet's finalized one (answers above it are not shared)."""
    last = min(150, devnet.truth.head - 70)
    assert last > 100
    return last


def _tables(out: Path) -> dict[str, pl.DataFrame]:
    tables = {}
    for name in ALONE:
        frame = pl.read_parquet(next(out.glob(f"{name}*")) / "*.parquet")
        keys = [c for c in ("block_number", "transaction_index", "log_index") if c in frame.columns]
        tables[name] = frame.sort(keys)
    return tables


def test_datasets_proven_alone_ask_each_block_once_per_method(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    last = _last_final(devnet)
    blocks = last + 1
    report = extract(ALONE, blocks=f"0:{last}", rpc=devnet.http_url, out=tmp_path / "verified", progress=False,
                     verify=True)  # fmt: skip
    for name in ALONE:
        assert report.datasets[name]["verified_blocks"] == blocks, name
    calls = devnet.gateway.stats()["calls"]
    # Unshared, the two datasets and their proofs ask each block's receipts twice (the receipts', the logs' proof)
    # and eth_getBlockByNumber three times (the headers of both proofs, the receipts' proof's bodies). Shared: once
    # per kind (an answer read by all before a late asker of it came is asked again), plus the few headers the
    # chunks' commits read.
    assert blocks <= calls["eth_getBlockReceipts"] <= blocks + 3, calls
    assert 2 * blocks <= calls["eth_getBlockByNumber"] <= 2 * blocks + 10, calls

    # The same rows as a run that proves nothing.
    extract(ALONE, blocks=f"0:{last}", rpc=devnet.http_url, out=tmp_path / "plain", progress=False)
    verified, plain = _tables(tmp_path / "verified"), _tables(tmp_path / "plain")
    for name in ALONE:
        assert verified[name].equals(plain[name]), name


SAME_ANSWERS = {
    "eth_getBlockByNumber": ["transactions", "address_appearances", "four_byte_counts"],  # each block's full body
    "trace_block": ["traces", "native_transfers", "contracts"],  # each block's traces
}
"""Datasets that each read the same answer of every block, by the method answering it."""


@pytest.mark.parametrize("method", sorted(SAME_ANSWERS))
def test_series_reading_the_same_answers_ask_each_block_once_without_verify(
    devnet: Devnet, tmp_path: Path, method: str
) -> None:
    assert devnet.gateway is not None
    last = _last_final(devnet)
    blocks = last + 1
    names = SAME_ANSWERS[method]
    extract(names, blocks=f"0:{last}", rpc=devnet.http_url, out=tmp_path / "together", progress=False)
    calls = devnet.gateway.stats()["calls"]
    # Unshared, each of the three asks every block's: 3 * blocks. Shared, once, beside the route check's one call
    # and the few headers the run's chain state and its chunks' ends read.
    assert blocks <= calls[method] <= blocks + 12, calls

    for name in names:  # the same rows as each extracted alone
        extract([name], blocks=f"0:{last}", rpc=devnet.http_url, out=tmp_path / name, progress=False)
        alone = pl.read_parquet(next((tmp_path / name).glob(f"{name}*")) / "*.parquet")
        together = pl.read_parquet(next((tmp_path / "together").glob(f"{name}*")) / "*.parquet")
        assert alone.height > 0, name
        assert together.equals(alone), name


def test_a_shared_answer_that_fails_a_check_is_asked_again(devnet: Devnet, tmp_path: Path) -> None:
    """The changed receipt reaches the receipts and the logs' proof alike; whichever check fails first forgets it,
    and the run ends equal to a clean one."""
    last = _last_final(devnet)
    options: dict[str, Any] = {"blocks": f"0:{last}", "progress": False, "verify": True, "chunk_size": 50}
    with Hostile(devnet.node.url, "a receipt's gas used changed", times=1, blocks=(0, last)) as proxy:
        extract(ALONE, rpc=proxy.url, out=tmp_path / "again", **options)
        assert proxy.rewritten == 1
    extract(ALONE, rpc=devnet.node.url, out=tmp_path / "clean", **options)
    again, clean = _tables(tmp_path / "again"), _tables(tmp_path / "clean")
    for name in ALONE:
        assert again[name].equals(clean[name]), name


def _results(body: bytes) -> list[Any]:
    """A batch answer's results in the order of its ids."""
    return [e["result"] for e in sorted(json.loads(body), key=lambda e: e["id"])]


async def _asked_together(
    shared: SharedAnswers, calls: dict[str, list[tuple[str, list[Any]]]]
) -> dict[str, list[bytes]]:
    """Each asker's calls through ``shared``, the askers concurrently: their batch answers, by asker."""
    got: dict[str, list[bytes]] = {}

    async def ask(asker: str, own: list[tuple[str, list[Any]]]) -> None:
        with asking(asker):
            got[asker] = await shared.batch_bytes(own)

    async with anyio.create_task_group() as tg:
        for asker, own in calls.items():
            tg.start_soon(ask, asker, own)
    return got


@pytest.mark.anyio
async def test_askers_get_the_nodes_answers_in_their_calls_order_each_asked_once(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    last = _last_final(devnet)
    headers = [("eth_getBlockByNumber", [hex(n), False]) for n in range(last + 1)]
    async with AsyncClient(devnet.http_url, batch_size=20) as client:
        truth = [r for body in await client.batch_bytes(headers) for r in _results(body)]
        devnet.gateway.reset_stats()
        shared = SharedAnswers(client, through=last)
        shared.expect("a", [("eth_getBlockByNumber", (False,))])
        shared.expect("b", [("eth_getBlockByNumber", (False,))])
        # Overlapping, concurrently, the second in another order: every block asked of the node once.
        got = await _asked_together(
            shared, {"a": headers[: last // 2 + 10], "b": list(reversed(headers[last // 2 - 10 :]))}
        )
        assert devnet.gateway.stats()["calls"]["eth_getBlockByNumber"] == last + 1
        assert [r for body in got["a"] for r in _results(body)] == truth[: last // 2 + 10]
        assert [r for body in got["b"] for r in _results(body)] == list(reversed(truth[last // 2 - 10 :]))
        # What both expected askers read is no longer kept (asked again, it is the node's again); what one of them
        # has still to read is.
        assert sorted(k[1] for k in shared._kept) == [*range(last // 2 - 10), *range(last // 2 + 10, last + 1)]
        with asking("a"):
            await shared.batch_bytes(headers[last // 2 - 10 : last // 2 - 5])
        assert devnet.gateway.stats()["calls"]["eth_getBlockByNumber"] == last + 6


@pytest.mark.anyio
async def test_a_kind_no_asker_expects_goes_to_the_node_as_it_is(devnet: Devnet) -> None:
    """A call of a shared method whose kind no series of the run reads (the trace family's callTracer through
    debug_traceBlockByNumber, here full bodies where only headers are expected) is neither kept nor cut into
    envelopes nor numbered again: each asker's calls reach the node, their batch answers handed on as received (one
    per batch of 20 calls; before, the second asker's were asked again and handed on cut and joined into one)."""
    assert devnet.gateway is not None
    last = _last_final(devnet)
    bodies = [("eth_getBlockByNumber", [hex(n), True]) for n in range(last + 1)]
    async with AsyncClient(devnet.http_url, batch_size=20) as client:
        truth = [r for body in await client.batch_bytes(bodies) for r in _results(body)]
        devnet.gateway.reset_stats()
        shared = SharedAnswers(client, through=last)
        for asker in ("a", "b"):
            shared.expect(asker, [("eth_getBlockByNumber", (False,))])
        got = await _asked_together(shared, {"a": bodies, "b": bodies})
        assert devnet.gateway.stats()["calls"]["eth_getBlockByNumber"] == 2 * (last + 1)
        assert [r for body in got["a"] for r in _results(body)] == truth
        assert [r for body in got["b"] for r in _results(body)] == truth
        assert len(got["a"]) == len(got["b"]) == -(-(last + 1) // 20)
        assert not shared._kept


@pytest.mark.anyio
async def test_what_is_kept_is_bounded_forgotten_on_failure_and_never_above_the_final_block(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    last = _last_final(devnet)
    receipts = [("eth_getBlockReceipts", [hex(n)]) for n in range(last + 1)]
    async with AsyncClient(devnet.http_url, batch_size=10) as client:
        truth = [r for body in await client.batch_bytes(receipts) for r in _results(body)]
        limit = 20_000  # a few batches of the devnet's receipts
        shared = SharedAnswers(client, through=last, kept_bytes=limit)
        shared.expect("a", [("eth_getBlockReceipts", ())])
        shared.expect("b", [("eth_getBlockReceipts", ())])
        devnet.gateway.reset_stats()
        with asking("a"):
            first = await shared.batch_bytes(receipts)
        assert 0 < shared._bytes <= limit  # what "b" will find; the rest it asks again
        kept = len(shared._kept)
        assert 0 < kept < last + 1
        with asking("b"):
            second = await shared.batch_bytes(receipts)
        assert [r for body in first for r in _results(body)] == truth
        assert [r for body in second for r in _results(body)] == truth
        assert devnet.gateway.stats()["calls"]["eth_getBlockReceipts"] == 2 * (last + 1) - kept

        # What one asker proved, another reading the same answers need not prove again.
        shared = SharedAnswers(client, through=last)
        shared.expect("a", [("eth_getBlockReceipts", ())])
        shared.expect("b", [("eth_getBlockReceipts", ())])
        with asking("a"), receiving() as received:
            received.mark(await shared.batch_bytes(receipts[:10]), Proof.RECEIPTS)
        with asking("b"), receiving() as received:
            assert received.proven(await shared.batch_bytes(receipts[:10]), Proof.RECEIPTS)
        # A piece that failed a check: its blocks' answers are forgotten, asked of the node again, and new answers
        # are proven again.
        with asking("a"), receiving() as received:
            received.mark(await shared.batch_bytes(receipts[10:20]), Proof.RECEIPTS)
        shared.forget(BlockRange(10, 19))
        asked = devnet.gateway.stats()["calls"]["eth_getBlockReceipts"]
        with asking("b"), receiving() as received:
            again = await shared.batch_bytes(receipts[10:20])
            assert not received.proven(again, Proof.RECEIPTS)
        assert devnet.gateway.stats()["calls"]["eth_getBlockReceipts"] == asked + 10
        assert [r for body in again for r in _results(body)] == truth[10:20]

        # Above the final block, or by tag: the node's own answers, never kept.
        devnet.gateway.reset_stats()
        recent = [("eth_getBlockReceipts", [hex(last + 1)]), ("eth_getBlockReceipts", [hex(last + 1)])]
        await shared.batch_bytes(recent[:1])
        await shared.batch_bytes(recent[1:])
        await shared.batch_bytes([("eth_getBlockReceipts", ["latest"])])
        assert devnet.gateway.stats()["calls"]["eth_getBlockReceipts"] == 3


@pytest.mark.anyio
async def test_an_asker_waiting_for_an_answer_whose_asker_stopped_asks_itself(devnet: Devnet) -> None:
    """Ctrl-C (or a failed piece) cancels the asker of a call another waits for: that one asks the node itself, at
    once, rather than wait for an answer that will never come."""
    assert devnet.gateway is not None
    last = _last_final(devnet)
    receipts = [("eth_getBlockReceipts", [hex(n)]) for n in range(20)]
    slow = FaultRule(kind="slow", delay=30.0, times=1, methods=("eth_getBlockReceipts",))
    async with AsyncClient(devnet.http_url) as client:
        truth = [r for body in await client.batch_bytes(receipts) for r in _results(body)]
        shared = SharedAnswers(client, through=last)
        shared.expect("a", [("eth_getBlockReceipts", ())])
        shared.expect("b", [("eth_getBlockReceipts", ())])
        devnet.gateway.configure(GatewaySettings(faults=(slow,)))  # "a"'s answer is 30 s away
        got: list[bytes] = []
        stop = anyio.CancelScope()

        async def first() -> None:
            with stop, asking("a"):
                await shared.batch_bytes(receipts)

        async def second() -> None:
            await anyio.sleep(0.3)  # "a" has asked by then
            with asking("b"):
                got.extend(await shared.batch_bytes(receipts))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(first)
                tg.start_soon(second)
                await anyio.sleep(1)
                assert not got  # "b" waits for "a"'s answer
                stop.cancel()  # "a" stops
        assert [r for body in got for r in _results(body)] == truth
        assert shared._asked == {}
