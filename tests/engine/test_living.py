"""A dataset folder is one living table: overlapping and extending runs, reorganizations between runs, during a run
and while following, SIGKILLs at random moments, and filtered series beside unfiltered ones. Every check compares
with a clean extraction of the node's chain as it is at the end, row by row, through the readers users have (a plain
DuckDB glob, Polars' scan_parquet, ``open_duckdb``, ``scan``)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import duckdb
import polars as pl
import pytest

from chainframe import extract, follow, open_duckdb, scan, series_folder
from chainframe.cli import main as cli_main
from chainframe.datasets import LOGS, BlockRange
from chainframe.devnet import DEV_ACCOUNTS, Devnet, GatewaySettings
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.engine._context import ChunkContext
from chainframe.engine._engine import RunCounters, run_tasks
from chainframe.engine._plan import Wanted, plan
from chainframe.rpc import AsyncClient
from chainframe.store import Publisher, folder_info, load_series
from tests.devnets import chain, module_devnet, node

# the fixtures this module uses: a devnet of its own, whose chain the tests mine and reorganize (tests/devnets.py)
__all__ = ["chain", "module_devnet", "node"]

MAIN = ("blocks", "transactions", "receipts", "logs")
RECENT = "100:latest"
"""The range of the reorg and follow cases: two slots of 100 (the tip's, extended or repaired, and a whole one before
it, which a reorg of 45 blocks reaches) hold all they touch; the chain's first 100 blocks added requests, not cases."""
KEYS = {"blocks": "block_number", "logs": "block_number, log_index"}


def reorg(node: NodeRPC, depth: int) -> None:
    """Replace the last ``depth`` blocks; a transfer in the first new block makes the fork differ even where the old
    blocks were empty (empty blocks with the same parent and time would hash the same)."""
    transfer = {"from": DEV_ACCOUNTS[0], "to": DEV_ACCOUNTS[1], "value": "0x1"}
    node.call("anvil_reorg", depth, [[transfer, 0]])


def kill_mid_run(devnet: Devnet, argv: list[str], blocks: int) -> subprocess.Popen[bytes]:
    """Run ``argv`` and SIGKILL it once the node was asked for ``blocks`` blocks through the gateway: mid-run (a run
    takes its folder's lock or lease before it fetches a block), whatever the machine's load. Killed at a time after
    its start (0.2-2 s), a run was mostly not under way: on an idle machine its interpreter imports for 0.5 s before
    the first request, and an extension or a repair of 40-block chunks is over 0.5 s later."""
    assert devnet.gateway is not None
    devnet.gateway.reset_stats()
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as run:
        deadline = time.monotonic() + 60
        while devnet.gateway.stats()["calls"].get("eth_getBlockByNumber", 0) < blocks:
            assert run.poll() is None, f"the run ended (exit {run.returncode}) before it was killed"
            assert time.monotonic() < deadline, "the run fetched too few blocks"
            time.sleep(0.02)
        run.send_signal(signal.SIGKILL)
    assert run.returncode == -signal.SIGKILL, f"the run ended (exit {run.returncode}) before the kill"
    return run


def _glob(out: Path, series: str) -> pl.DataFrame:
    keys = KEYS.get(series.split("__")[0], "block_number, transaction_index")
    glob = str(out / series / "*.parquet")
    return duckdb.sql(f"SELECT * FROM read_parquet('{glob}') ORDER BY {keys}").pl()  # noqa: S608


def assert_same_as_clean(
    devnet: Devnet, out: Path, tmp: Path, datasets: tuple[str, ...] = MAIN, *, blocks: str = "0:latest", **kw: Any
) -> None:
    """``out`` holds exactly what a clean extraction of the node's chain now gives (its ``blocks``, ``FIRST:latest``),
    for every reader."""
    clean = tmp / f"clean-{time.monotonic_ns()}"
    extract(list(datasets), blocks=blocks, out=clean, rpc=devnet.node.url, progress=False, **kw)
    for name in (p.name for p in clean.iterdir() if not p.name.startswith(".")):
        got, want = _glob(out, name), _glob(clean, name)
        assert got.height == want.height, name
        assert got.equals(want), name
        assert pl.scan_parquet(str(out / name / "*.parquet")).select(pl.len()).collect().item() == want.height
        assert open_duckdb(out).execute(f'SELECT count(*) FROM "{name}"').fetchall()[0][0] == want.height  # noqa: S608
    stored = _glob(out, "blocks") if "blocks" in datasets else None
    if stored is not None:  # one row per block, linked by parent hash
        first = int(blocks.split(":")[0])
        assert stored["block_number"].to_list() == list(range(first, first + stored.height))
        assert stored["parent_hash"][1:].to_list() == stored["block_hash"][:-1].to_list()
    for series in folder_info(out).values():
        assert series.problems == [], series.name


def test_overlapping_and_extending_runs_store_each_block_once(chain: Devnet, node: NodeRPC, tmp_path: Path) -> None:
    out, url = tmp_path / "out", chain.http_url
    runs = [("0:", {}), ("0:latest", {}), ("100:200", {}), ("50:120", {"overwrite": True}), ("0:latest", {})]
    for blocks, options in runs:
        extract(list(MAIN), blocks=blocks, out=out, rpc=url, chunk_size=100, progress=False, **options)
    node.call("anvil_mine", hex(7))  # the chain grows: the tip chunk is extended in place
    report = extract(list(MAIN), blocks="0:latest", out=out, rpc=url, chunk_size=100, progress=False)
    assert report.datasets["blocks"]["rows"] == 7
    assert report.datasets["blocks"]["written"] == 1
    assert len(list((out / "blocks").glob("*.parquet"))) == 3  # 0..99, 100..199, 200..247: one file per slot
    assert_same_as_clean(chain, out, tmp_path)
    assert scan(out, "logs").select(pl.len()).collect().item() == _glob(out, "logs").height


def test_align_stores_whole_chunks_only(devnet: Devnet, tmp_path: Path) -> None:
    """Reads only: on the session's devnet (a devnet of its own is for a test that changes the chain)."""
    report = extract("blocks", blocks="0:latest", out=tmp_path, rpc=devnet.http_url, chunk_size=100, align=True)
    assert report.blocks == (0, 199)
    assert [s.ranges for s in folder_info(tmp_path).values()] == [[(0, 199)]]


def test_filtered_and_unfiltered_series_never_mix(devnet: Devnet, tmp_path: Path) -> None:
    chain = devnet  # reads only: the session's devnet
    emitter = chain.truth.contracts["Emitter"]
    extract("logs", blocks="0:latest", out=tmp_path, rpc=chain.http_url, progress=False)
    extract("logs", blocks="0:latest", out=tmp_path, rpc=chain.http_url, progress=False, address=emitter)
    plain = _glob(tmp_path, "logs")
    filtered = series_folder(tmp_path, "logs", address=emitter)
    only = _glob(tmp_path, filtered.name)
    assert plain.height == chain.truth.log_count
    assert 0 < only.height < plain.height
    assert set(only["address"].to_list()) == {bytes.fromhex(emitter[2:])}
    views = open_duckdb(tmp_path).sql("SELECT table_name FROM information_schema.tables").fetchall()
    assert sorted(v[0] for v in views) == sorted(["logs", filtered.name])
    assert scan(tmp_path, "logs", address=emitter).select(pl.len()).collect().item() == only.height
    text = "\n".join(str(dict(s.meta.filters)) for s in folder_info(tmp_path).values() if s.meta and s.meta.filters)
    assert emitter.lower() in text  # filters in clear


@pytest.fixture(scope="module")
def reorganized() -> Iterator[tuple[Devnet, NodeRPC]]:
    """One devnet for the reorg-between-runs cases: each reorganizes the chain the case before left, which is a chain
    like the workload's (the same length, head 240), so each case's numbers hold; one start instead of three."""
    with Devnet() as devnet:
        rpc = NodeRPC(devnet.node.url)
        yield devnet, rpc
        rpc.close()


@pytest.mark.parametrize("depth", [1, 5, 45])  # 45 forks at block 196: across the 199/200 chunk boundary
def test_a_reorg_between_runs_is_repaired(
    reorganized: tuple[Devnet, NodeRPC], tmp_path: Path, depth: int
) -> None:  # fmt: skip
    chain, node = reorganized
    assert int(node.call("eth_blockNumber"), 16) == chain.truth.head
    out = tmp_path / "out"
    extract(list(MAIN), blocks=RECENT, out=out, rpc=chain.http_url, chunk_size=100, progress=False)
    reorg(node, depth)
    report = extract(list(MAIN), blocks=RECENT, out=out, rpc=chain.http_url, chunk_size=100, progress=False)
    head = chain.truth.head
    assert {r["series"] for r in report.reorgs} == set(MAIN)
    for repaired in report.reorgs:
        assert repaired["fork_block"] == head - depth + 1
        assert repaired["depth"] == depth
        assert repaired["chunks_rewritten"] == (2 if depth == 45 else 1)
    assert "reorg repaired in blocks: forked at block" in report.summary()
    assert_same_as_clean(chain, out, tmp_path, blocks=RECENT)


def test_a_reorg_that_shortens_the_chain_removes_what_is_gone(chain: Devnet, node: NodeRPC, tmp_path: Path) -> None:
    snapshot = node.call("evm_snapshot")
    node.call("anvil_mine", hex(12))  # 241..252: a slot of its own with chunks of 250
    extract(list(MAIN), blocks="0:latest", out=tmp_path, rpc=chain.http_url, chunk_size=250, progress=False)
    node.call("evm_revert", snapshot)
    node.call("anvil_mine", hex(1))  # another block 241
    report = extract(list(MAIN), blocks="0:latest", out=tmp_path, rpc=chain.http_url, chunk_size=250)
    assert report.reorgs
    assert_same_as_clean(chain, tmp_path, tmp_path.parent / "ref")


def test_a_reorg_during_a_run_is_caught_around_the_commit(chain: Devnet, node: NodeRPC, tmp_path: Path) -> None:
    assert chain.gateway is not None
    chain.gateway.configure(GatewaySettings(latency=0.03))

    fired: list[int] = []

    def reorg_mid_run() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            calls = chain.gateway.stats()["calls"] if chain.gateway else {}
            if calls.get("eth_getBlockByNumber", 0) >= 60:  # of about 270 in the run
                reorg(node, 8)
                fired.append(calls["eth_getBlockByNumber"])
                return
            time.sleep(0.005)

    thread = threading.Thread(target=reorg_mid_run)
    thread.start()
    extract(list(MAIN), blocks="200:latest", out=tmp_path, rpc=chain.http_url, chunk_size=20, concurrency=2)
    thread.join()
    assert fired, "the reorg came after the run"
    chain.gateway.configure(GatewaySettings())
    extract(list(MAIN), blocks="0:199", out=tmp_path, rpc=chain.http_url, chunk_size=20, progress=False)
    assert_same_as_clean(chain, tmp_path, tmp_path.parent / "ref", chunk_size=20)


def test_follow_extends_and_repairs_round_after_round(chain: Devnet, node: NodeRPC, tmp_path: Path) -> None:
    heads: list[int] = []

    def between_rounds(report: Any) -> None:
        heads.append(report.head)
        if len(heads) == 1:
            node.call("anvil_mine", hex(5))
        elif len(heads) == 2:
            reorg(node, 3)
            node.call("anvil_mine", hex(2))

    last = follow(list(MAIN), blocks=RECENT, out=tmp_path, rpc=chain.http_url, chunk_size=100, poll=0.05,
                  rounds=3, on_round=between_rounds)  # fmt: skip
    assert heads == [240, 245, 247]
    assert last is not None
    assert last.reorgs
    assert {r["fork_block"] for r in last.reorgs} == {243}
    assert_same_as_clean(chain, tmp_path, tmp_path.parent / "ref", blocks=RECENT)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_at_a_random_moment_then_the_same_command_again(
    chain: Devnet, node: NodeRPC, tmp_path: Path, seed: int
) -> None:
    """Kills during a first extraction, an extension and a reorg repair; the same command then finishes the job. The
    runs extract blocks 120:latest (three slots of 40 and the tip's, and the slots the extension adds): what a repair
    or an extension touches, with a whole slot before it; the chain's first 120 blocks added requests, not cases."""
    rng = random.Random(seed)
    assert chain.gateway is not None
    out = tmp_path / "out"
    argv = [
        sys.executable, "-m", "chainframe.cli", "extract", *MAIN, "--blocks", "120:latest", "--rpc", chain.http_url,
        "--out", str(out), "--chunk-size", "40", "--concurrency", "2", "--no-progress",
    ]  # fmt: skip
    for phase in ("first run", "extension", "repair"):
        if phase == "extension":
            node.call("anvil_mine", hex(30))
        elif phase == "repair":
            reorg(node, rng.randint(1, 30))
        chain.gateway.configure(GatewaySettings(latency=0.01))  # slowed, so that the kill comes mid-run
        # A run asks for about 540 blocks (each block's header, transactions and witnesses), an extension 200, a
        # repair 170: killed at a random one of the first 100, it holds the folder's lock (its pid written there).
        run = kill_mid_run(chain, argv, rng.randint(10, 100))
        assert (out / ".chainframe" / "lock").read_text() == str(run.pid), phase
        # A glob reader never sees a row twice, whatever moment the kill came at. (A kill before a series' first
        # commit leaves its folder with no file, only a pending one: a glob then finds nothing to read.)
        for name in MAIN:
            if list((out / name).glob("*.parquet")):
                frame = _glob(out, name)
                keys = ["block_number", "log_index" if name == "logs" else "transaction_index"]
                keys = keys[:1] if name == "blocks" else keys
                assert frame.select(keys).is_duplicated().sum() == 0, (phase, name)
        chain.gateway.configure(GatewaySettings())  # the run that finishes the job needs no delay
        # The same command line again, in this process: only the killed run needs a process of its own, and a
        # fresh interpreter's imports cost about a CPU-second each time.
        assert cli_main(argv[3:]) == 0, phase
        assert not list(out.rglob(".*.tmp-*"))
    assert_same_as_clean(chain, out, tmp_path, blocks="120:latest", chunk_size=40)


@pytest.mark.anyio
async def test_a_chunk_read_across_a_reorg_is_fetched_again(chain: Devnet, node: NodeRPC, tmp_path: Path) -> None:
    """The reorg comes right after the chunk's first eth_getLogs answer (blocks 200..209), replacing blocks from 196
    on: that piece's witness changes under it, so the chunk is fetched again and stored from one fork."""
    fired = False

    class ReorgAfterFirstLogs(AsyncClient):
        async def request_bytes(self, method: str, params: Any = ()) -> bytes:
            nonlocal fired
            body = await super().request_bytes(method, params)
            if method == "eth_getLogs" and not fired:
                fired = True
                await anyio.to_thread.run_sync(reorg, node, 45)
            return body

    head, chain_id = chain.truth.head, chain.truth.chain_id
    want = Wanted(dataset="logs", filters={}, u256="decimal", chunk_size=100)
    tasks, _ = plan(want, BlockRange(200, head), series=load_series(tmp_path / "logs"), chain_id=chain_id,
                    head=head)  # fmt: skip
    counters = RunCounters()
    async with ReorgAfterFirstLogs(chain.node.url) as client:
        shared = ChunkContext(client, chain_id, "node", head - 64, counters.split, anyio.CapacityLimiter(2))
        await run_tasks(iter(tasks), shared, concurrency=1, counters=counters,
                        publish=Publisher(tmp_path, "parquet").publish)  # fmt: skip
    assert fired
    assert counters.datasets["logs"].refetched >= 1  # more if a piece hit the node mid-reorg (it lacks blocks then)
    stored = _glob(tmp_path, "logs")
    async with AsyncClient(chain.node.url) as client:
        now = LOGS.transform(await LOGS.fetch(client, BlockRange(200, head)), chain_id=chain_id)
    assert stored.height == now.num_rows
    assert stored["block_hash"].to_list() == now["block_hash"].to_pylist()


def test_info_check_lists_what_a_reorg_took_back_and_repair_rewrites_it(
    chain: Devnet, node: NodeRPC, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    extract(["blocks", "logs"], blocks="0:latest", out=out, rpc=chain.http_url, chunk_size=100, progress=False)
    assert cli_main(["info", str(out), "--check", "--rpc", chain.http_url]) == 0
    assert "every stored block is on its chain" in capsys.readouterr().out
    reorg(node, 5)
    assert cli_main(["info", str(out), "--check", "--rpc", chain.http_url]) == 1
    text = capsys.readouterr().out
    assert "blocks/blocks__31337__0000000200_to_0000000299.parquet: blocks 236..240 (forked at 236)" in text
    assert "chainframe repair" in text
    assert cli_main(["repair", str(out), "--rpc", chain.http_url]) == 0
    assert "reorg repaired in logs: forked at block 236, 5 stored blocks replaced" in capsys.readouterr().out
    assert cli_main(["info", str(out), "--check", "--rpc", chain.http_url]) == 0
    assert_same_as_clean(chain, out, tmp_path, datasets=("blocks", "logs"))


def test_a_corrupted_data_page_under_an_intact_footer_is_fetched_again(devnet: Devnet, tmp_path: Path) -> None:
    chain = devnet  # reads only: the session's devnet
    out = tmp_path / "out"
    extract("logs", blocks="0:210", out=out, rpc=chain.http_url, chunk_size=100, progress=False)
    tip = out / "logs" / "logs__31337__0000000200_to_0000000299.parquet"
    data = bytearray(tip.read_bytes())
    data[200] ^= 0xFF  # inside the first data page; the footer stays whole, so the file still looks complete
    tip.write_bytes(bytes(data))
    report = extract("logs", blocks="0:latest", out=out, rpc=chain.http_url, chunk_size=100, progress=False)
    assert report.datasets["logs"]["refetched"] == 1
    assert_same_as_clean(chain, out, tmp_path, datasets=("logs",))


def test_state_datasets_extend_and_repair_like_the_others(chain: Devnet, node: NodeRPC, tmp_path: Path) -> None:
    store = chain.truth.contracts["Store"]
    inputs: dict[str, Any] = {
        "addresses": [store, DEV_ACCOUNTS[0]],
        "storage_keys": ["0x" + "00" * 31 + "01"],
        "calls": [{"from": DEV_ACCOUNTS[0], "to": store, "data": "0x"}],
    }
    datasets = ("account_proofs", "storage_proofs", "call_traces")
    out = tmp_path / "out"
    for blocks in ("200:220", "210:230", "0:latest"):  # overlapping, then extending to the head
        extract(list(datasets), blocks=blocks, out=out, rpc=chain.http_url, chunk_size=20, progress=False, **inputs)
    reorg(node, 3)
    report = extract(list(datasets), blocks="200:latest", out=out, rpc=chain.http_url, chunk_size=20, **inputs)
    assert {r["fork_block"] for r in report.reorgs} == {chain.truth.head - 2}
    clean = tmp_path / "clean"
    extract(list(datasets), blocks="0:latest", out=clean, rpc=chain.node.url, chunk_size=20, progress=False, **inputs)
    for name in (p.name for p in clean.iterdir() if not p.name.startswith(".")):
        keys = "block_number, address" + (", storage_key" if name.startswith("storage") else "")
        keys = "block_number, trace_address" if name.startswith("call_traces") else keys
        got = duckdb.sql(f"SELECT * FROM read_parquet('{out / name}/*.parquet') ORDER BY {keys}").pl()  # noqa: S608
        want = duckdb.sql(f"SELECT * FROM read_parquet('{clean / name}/*.parquet') ORDER BY {keys}").pl()  # noqa: S608
        per_block = 2 if name.startswith(("account_proofs", "storage_proofs")) else 1  # two addresses
        assert got.height == want.height >= (chain.truth.head + 1) * per_block, name
        if name.startswith("call_traces"):
            # anvil traces a call at an unchanged block differently once it has reorganized (gas 21068, then 21000
            # at block 237): compare what the repair controls, the blocks and frames stored.
            assert got["block_number"].equals(want["block_number"]), name
            continue
        assert got.equals(want), name


def _follow_process(chain: Devnet, out: Path) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-m", "chainframe.cli", "extract", "blocks", "logs", "--blocks", "0:latest", "--follow",
        "--poll", "0.2", "--rpc", chain.http_url, "--out", str(out), "--chunk-size", "50",
    ]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_follow_prints_head_and_lag_and_stops_cleanly_on_a_signal(
    chain: Devnet, node: NodeRPC, tmp_path: Path, signum: int
) -> None:
    out = tmp_path / "out"
    with _follow_process(chain, out) as run:
        assert run.stdout is not None
        first = run.stdout.readline()
        assert first.startswith("head 240, stored through 240, lag 0 blocks"), first
        node.call("anvil_mine", hex(3))
        second = run.stdout.readline()
        while "+0 rows" in second:  # rounds before the new blocks were seen
            second = run.stdout.readline()
        assert second.startswith("head 243, stored through 243"), second
        run.send_signal(signum)
        stopped = time.monotonic()
        _, err = run.communicate(timeout=20)
    assert time.monotonic() - stopped < 5
    assert run.returncode == 0
    assert "Traceback" not in err
    assert "stopped" in err
    assert not list(out.rglob(".*.tmp-*"))
    assert_same_as_clean(chain, out, tmp_path, datasets=("blocks", "logs"))


def test_follow_killed_mid_round_then_run_again(chain: Devnet, node: NodeRPC, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert chain.gateway is not None
    chain.gateway.configure(GatewaySettings(latency=0.01))
    with _follow_process(chain, out) as run:
        assert run.stdout is not None
        run.stdout.readline()
        reorg(node, 4)
        node.call("anvil_mine", hex(60))  # a round with a repair and a new slot to write
        time.sleep(random.Random(7).uniform(0.05, 0.4))
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=20)
    chain.gateway.configure(GatewaySettings())
    extract(["blocks", "logs"], blocks="0:latest", out=out, rpc=chain.http_url, chunk_size=50, progress=False)
    assert_same_as_clean(chain, out, tmp_path, datasets=("blocks", "logs"))
