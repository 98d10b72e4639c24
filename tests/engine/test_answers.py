"""Every answer is checked against what was asked before its rows are kept: against a proxy that answers wrongly but
plausibly, a run ends equal to a clean run (a bad answer is fetched again) or in one typed error naming the method,
blocks, endpoint and check, with nothing wrong written."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from chainframe import extract
from chainframe.devnet import Devnet
from chainframe.engine._answers import WrongAnswer
from chainframe.engine._canonical import ChainUnstable, head_and_headers
from chainframe.rpc import AsyncClient
from tests.devnets import node_rpc
from tests.engine.hostile import CASES, LAG, Hostile, Lagging

DATASETS = {"eth_getLogs": ("logs",), "eth_getBlockByNumber": ("blocks", "transactions"),
            "eth_getBlockReceipts": ("receipts",)}  # fmt: skip
BLOCKS = "0:60"


def _rows(out: Path, name: str) -> pl.DataFrame:
    keys = {"blocks": ["block_number"], "logs": ["block_number", "log_index"]}.get(
        name, ["block_number", "transaction_index"]
    )
    return pl.read_parquet(out / name / "*.parquet").sort(keys)


def _found(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The error of ``kind`` in ``error`` or its groups (task groups wrap what their tasks raise)."""
    if isinstance(error, kind):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (hit := _found(inner, kind)) is not None:
                return hit
    return None


@pytest.fixture(scope="module")
def clean_run(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Callable[[tuple[str, ...]], Path]:
    """The folder of a clean run of ``datasets`` over BLOCKS, straight from the node: one run per datasets and chain
    (the hash of BLOCKS' last block), which the cases of a method share rather than each extracting its own."""
    made: dict[tuple[tuple[str, ...], str], Path] = {}

    def folder(datasets: tuple[str, ...]) -> Path:
        with node_rpc(devnet_session) as node:
            key = (datasets, node.call("eth_getBlockByNumber", hex(int(BLOCKS.split(":")[1])), False)["hash"])
        if key not in made:
            out = tmp_path_factory.mktemp("clean")
            extract(list(datasets), blocks=BLOCKS, out=out, rpc=devnet_session.node.url, chunk_size=30, progress=False)
            made[key] = out
        return made[key]

    return folder


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_wrong_answer_is_fetched_again(
    devnet: Devnet, tmp_path: Path, case: str, clean_run: Callable[[tuple[str, ...]], Path]
) -> None:
    method = CASES[case][0]
    datasets = DATASETS[method]
    with Hostile(devnet.node.url, case, times=1, blocks=(0, 60)) as proxy:  # not the preflight's, at the head
        extract(list(datasets), blocks=BLOCKS, out=tmp_path / "got", rpc=proxy.url, chunk_size=30, progress=False)
        assert proxy.rewritten == 1
    clean = clean_run(datasets)
    for name in datasets:
        assert _rows(tmp_path / "got", name).equals(_rows(clean, name)), name


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_answer_wrong_every_time_is_one_typed_error(
    devnet: Devnet, tmp_path: Path, case: str, clean_run: Callable[[tuple[str, ...]], Path]
) -> None:
    method = CASES[case][0]
    datasets = DATASETS[method]
    started = time.monotonic()
    got = tmp_path / "got"
    with (
        Hostile(devnet.node.url, case, times=None) as proxy,
        pytest.raises((WrongAnswer, ChainUnstable, BaseExceptionGroup)) as caught,
    ):
        extract(list(datasets), blocks=BLOCKS, out=got, rpc=proxy.url, chunk_size=30, progress=False)
    assert time.monotonic() - started < 30
    if case == "removed logs":  # a reorganization that never ends, as far as the run can tell
        assert _found(caught.value, ChainUnstable) is not None
    else:
        wrong = _found(caught.value, WrongAnswer)
        assert isinstance(wrong, WrongAnswer), caught.value
        text = str(wrong)
        assert wrong.method == method
        assert wrong.blocks is not None
        assert "127.0.0.1" in text
        assert "check:" in text
        assert wrong.check
    # Nothing wrong written: any chunk finished before the error holds what the node holds.
    clean = clean_run(datasets)
    for path in got.rglob("*.parquet"):
        assert pl.read_parquet(path).equals(pl.read_parquet(clean / path.relative_to(got))), path


def test_a_node_lagging_behind_the_head_it_reports_is_an_error_not_empty_rows(devnet: Devnet, tmp_path: Path) -> None:
    """Near the head every piece is checked against headers; a node without the last blocks answers them null, so
    the run ends in a typed error instead of storing the blocks it lacks as blocks without logs."""
    head = devnet.truth.head
    with (
        Hostile(devnet.node.url, lagging=Lagging(head)) as proxy,
        pytest.raises((ChainUnstable, WrongAnswer, BaseExceptionGroup)) as caught,
    ):
        extract("logs", blocks=f"{head - 40}:latest", out=tmp_path, rpc=proxy.url, chunk_size=20, progress=False)
    assert (_found(caught.value, ChainUnstable) or _found(caught.value, WrongAnswer)) is not None
    stored = pl.read_parquet(tmp_path / "logs" / "*.parquet") if list(tmp_path.rglob("*.parquet")) else None
    if stored is not None:  # only chunks wholly below the missing blocks were finished
        assert stored["block_number"].max() < head - LAG + 1


def test_a_node_that_lacks_a_block_mid_reorg_means_read_again_not_fail() -> None:
    from chainframe.engine._canonical import chain_moved
    from chainframe.rpc import InvalidParams

    moved = InvalidParams("BlockOutOfRangeError: block height is 195 but requested was 220")
    assert chain_moved(moved)
    assert chain_moved(InvalidParams("header not found"))
    assert not chain_moved(InvalidParams("invalid argument 0: hex string without 0x prefix"))


@pytest.mark.anyio
@pytest.mark.parametrize("head", ["latest", "0xzz", 12])
async def test_a_head_read_with_headers_that_is_not_a_number_is_a_wrong_answer(devnet: Devnet, head: object) -> None:
    with Hostile(devnet.node.url, None) as proxy:
        proxy.method, proxy.rewrite = "eth_blockNumber", lambda call, result: head
        async with AsyncClient(proxy.url) as client:
            got, known = await head_and_headers(client, [3])  # the first answer is rewritten, then faithful again
            assert got == devnet.truth.head
            assert known[3] is not None
            assert known[3].number == 3
            proxy.left = None  # every answer rewritten from now on
            with pytest.raises(WrongAnswer) as caught:
                await head_and_headers(client, [3])
    assert caught.value.check == "head is a number"
