"""A logs piece fetched in several eth_getLogs calls where calls are cheap (a near node, no credit budget): a node's
work per byte grows with its answer, so small answers cost it less. Elsewhere (a provider across the internet, or a
budget in credits, which are paid per call) a piece stays one call. Either way the rows are the same, and every
answer is checked against the blocks its own call asked for."""

from __future__ import annotations

import re
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from chainframe import extract
from chainframe.datasets import BlockRange
from chainframe.devnet import Devnet, GatewaySettings, LogLimits
from chainframe.engine import _logs
from chainframe.engine._answers import WrongAnswer
from chainframe.engine._logs import SplitState, fetch_logs, logs_table
from chainframe.rpc import AsyncClient, Pacing, _client
from chainframe.rpc._client import NEAR_ROUND_TRIP
from tests.engine.hostile import Hostile

SMALL_ANSWERS = 20_000
"""Bytes an answer aims at in these tests: the test chain's logs are a few kB a block, so pieces take several calls."""


@pytest.fixture
def small_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces in several calls wherever calls are cheap, and this machine's endpoints near however loaded it is (a
    busy CI machine can take over 5 ms for every answer of a local proxy: then pieces went out as one call)."""
    monkeypatch.setattr(_logs, "ANSWER_BYTES", SMALL_ANSWERS)
    monkeypatch.setattr(_client, "NEAR_ROUND_TRIP", 1.0)


@pytest.mark.parametrize("piece", [BlockRange(5, 5), BlockRange(10, 97), BlockRange(0, 1000)])
@pytest.mark.parametrize("block_bytes", [0.0, 1.0, 333.0, 5_000.0, 2_000_000.0])
def test_the_calls_cover_the_piece_once_in_order(piece: BlockRange, block_bytes: float) -> None:
    state = SplitState(block_bytes=block_bytes)
    assert state.calls(piece, cheap=False) == [piece]
    calls = state.calls(piece, cheap=True)
    assert [b for call in calls for b in call] == list(piece)
    if block_bytes == 0.0:  # no answer seen yet: nothing to size the calls by
        assert calls == [piece]
    else:
        step = max(1, int(_logs.ANSWER_BYTES / block_bytes))
        assert all(len(call) <= step for call in calls)
        assert len(calls) == -(-len(piece) // step)


@pytest.mark.anyio
async def test_calls_are_cheap_only_at_a_near_endpoint_without_a_credit_budget(devnet: Devnet) -> None:
    assert devnet.gateway is not None
    async with AsyncClient(devnet.http_url) as client:
        assert not client.cheap_calls  # nothing answered yet: nearness unknown
        # The first answer's time holds the connection's set-up; the least of 20 or more: on a busy machine (tests on
        # several workers) twenty round trips in a row can each be slowed past the bound.
        for asked in range(200):
            await client.chain_id()
            if asked >= 20 and client.cheap_calls:
                break
        assert client.least_round_trip is not None
        assert client.least_round_trip < NEAR_ROUND_TRIP
        assert client.cheap_calls
    async with AsyncClient(devnet.http_url, pacing=Pacing(credits_per_second=1e9)) as client:
        await client.chain_id()
        assert not client.cheap_calls  # credits are paid per call
    devnet.gateway.configure(GatewaySettings(latency=2 * NEAR_ROUND_TRIP))
    async with AsyncClient(devnet.http_url) as client:
        await client.chain_id()
        await client.chain_id()
        assert client.least_round_trip is not None
        assert client.least_round_trip >= 2 * NEAR_ROUND_TRIP
        assert not client.cheap_calls  # a round trip saved is worth more than the node's work


def _logs_calls(devnet: Devnet) -> int:
    assert devnet.gateway is not None
    calls: dict[str, int] = devnet.gateway.stats()["calls"]
    return calls.get("eth_getLogs", 0)


@pytest.mark.usefixtures("small_answers")
def test_a_near_node_gets_small_answers_and_a_budget_one_call_a_piece_with_the_same_rows(
    devnet: Devnet, tmp_path: Path
) -> None:
    last = devnet.truth.head
    expected = sum(devnet.truth.logs_per_block()[1 : last + 1])
    near, budget = tmp_path / "near", tmp_path / "budget"
    extract("logs", blocks=f"1:{last}", rpc=devnet.http_url, out=near, chunk_size=100, progress=False)
    several = _logs_calls(devnet)
    assert devnet.gateway is not None
    devnet.gateway.reset_stats()
    extract(
        "logs", blocks=f"1:{last}", rpc=devnet.http_url, out=budget, chunk_size=100, progress=False,
        client_options={"pacing": Pacing(credits_per_second=1e9)},
    )  # fmt: skip
    one_each = _logs_calls(devnet)
    # The test chain's ~15,000 logs are several MB: 20 kB answers take hundreds of calls, 4 MB pieces a handful.
    assert several > 3 * one_each, (several, one_each)
    got = pl.read_parquet(near / "logs" / "*.parquet").sort("block_number", "log_index")
    assert got.height == expected
    assert got.equals(pl.read_parquet(budget / "logs" / "*.parquet").sort("block_number", "log_index"))


@pytest.mark.usefixtures("small_answers")
def test_each_answer_is_checked_against_its_own_call(devnet: Devnet, tmp_path: Path) -> None:
    """A log placed one block past what its call asked for is inside the piece (the next call's blocks), and may even
    fit there (a block without logs of its own): it is still a wrong answer, by the blocks its call asked for."""
    started = time.monotonic()
    with (
        Hostile(devnet.node.url, "logs outside the range", times=None) as proxy,
        pytest.raises((WrongAnswer, BaseExceptionGroup)) as caught,
    ):
        extract("logs", blocks="1:200", out=tmp_path, rpc=proxy.url, chunk_size=200, progress=False)
    assert time.monotonic() - started < 30
    wrong = caught.value
    while isinstance(wrong, BaseExceptionGroup):
        wrong = wrong.exceptions[0]
    assert isinstance(wrong, WrongAnswer), caught.value
    assert wrong.check == "rows inside the asked blocks"
    # The error names the piece (wrong.blocks) and, in its text, the one call of it whose answer was wrong.
    asked = re.search(r"in an answer for blocks (\d+)\.\.(\d+)", str(wrong))
    assert asked is not None, str(wrong)
    assert wrong.blocks is not None
    call = (int(asked[1]), int(asked[2]))
    assert wrong.blocks[0] <= call[0] <= call[1] <= wrong.blocks[1], (call, wrong.blocks)
    assert call != wrong.blocks


@pytest.mark.anyio
async def test_a_limit_met_by_one_call_of_a_piece_splits_the_piece(
    devnet: Devnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece sized by sparse blocks can reach dense ones: one of its calls is refused by the result limit, and the
    piece is split as a piece of one call is (the refusal must not come out of the calls' task group wrapped)."""
    monkeypatch.setattr(_client, "NEAR_ROUND_TRIP", 1.0)
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(limits=LogLimits(max_results=100)))
    # The first piece: blocks 0..99 in five calls of 20 blocks, each over 100 logs on the test chain (~60 a block).
    state = SplitState(span=100, block_bytes=_logs.ANSWER_BYTES / 20)
    rows: dict[BlockRange, int] = {}

    async def decode(piece: BlockRange, answers: _logs.Answers, receipts: list[bytes]) -> pa.Table:
        return logs_table([body for _, body in answers], receipts, {}, chain_id=devnet.truth.chain_id, u256="decimal")

    async def emit(piece: BlockRange, table: pa.Table) -> None:
        rows[piece] = table.num_rows

    async with AsyncClient(devnet.http_url) as client:
        await client.chain_id()
        assert state.calls(BlockRange(0, 99), cheap=client.cheap_calls) == [
            BlockRange(a, a + 19) for a in range(0, 100, 20)
        ]
        await fetch_logs(client, BlockRange(0, 99), {}, state, decode, emit)
    assert state.splits > 0
    assert sum(rows.values()) == sum(devnet.truth.logs_per_block()[:100])
