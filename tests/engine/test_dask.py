"""Extraction on a Dask cluster of real worker processes (LocalCluster, processes=True) against the devnet gateway:
the same dataset as in one process, nothing lost or doubled when a worker is killed mid-chunk, one budget shared by
the workers, a rate-limit pause passed from one worker to the others, the key nowhere in Dask's keys or logs, and a
run whose chunks never finish failing within its bound, naming them."""

from __future__ import annotations

import gc
import importlib
import os
import re
import secrets
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import dask
import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster, get_task_stream

from chainframe import InputError, extract
from chainframe.devnet import Devnet, FaultRule, GatewayConfig, GatewayProcess, GatewaySettings
from chainframe.devnet.gateway._credits import cost
from chainframe.engine._dask import NO_PROGRESS_KEY, WorkerPlan, WorkersStalled, no_progress_timeout
from chainframe.rpc import Endpoint, KeyRefused, Pacing, RetryPolicy, Timeout
from chainframe.rpc._pacing import _Bucket
from tests.engine.hostile import Hostile

DATASETS = ("blocks", "transactions", "logs")
KEYS = {"blocks": ["block_number"], "logs": ["block_number", "log_index"]}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Client]:
    """Two worker processes, two chunk threads each: what ``executor="local:2"`` starts, kept for the module."""
    with (
        LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=":0") as local,
        Client(local) as client,
    ):
        client.run(importlib.import_module, "chainframe.engine._dask")  # imports out of the first test's time
        yield client


def _table(out: Path, series: str) -> pl.DataFrame:
    frame = pl.from_arrow(pq.read_table(out / series))
    assert isinstance(frame, pl.DataFrame)
    return frame.sort(KEYS.get(series, ["block_number", "transaction_index"]))


def _files(out: Path, series: str) -> list[str]:
    return sorted(p.name for p in (out / series).glob("*.parquet"))


@pytest.mark.slow
def test_two_workers_write_the_dataset_one_process_writes(devnet: Devnet, tmp_path: Path, cluster: Client) -> None:
    # Eight slots of the devnet's 240 blocks: more than six, so that both workers take several (each slot is a
    # verified task: the whole chain cost a fifth more and showed nothing more).
    options: dict[str, Any] = {"blocks": "0:199", "rpc": devnet.http_url, "chunk_size": 25, "progress": False}
    alone = extract(list(DATASETS), out=tmp_path / "alone", **options)
    with get_task_stream(cluster) as stream:
        spread = extract(list(DATASETS), out=tmp_path / "spread", executor=cluster, verify=True, **options)
    chunks = [t for t in stream.data if str(t["key"]).startswith("chainframe-")]
    # A slot's three chunks are proven together (the receipts lent by the worker): one Dask task each slot.
    slots = spread.datasets["blocks"]["chunks"]
    assert len(chunks) == slots > 6
    assert sum(d["chunks"] for d in spread.datasets.values()) == len(DATASETS) * slots
    assert len({t["worker"] for t in chunks}) == 2  # both worker processes wrote chunks
    for series in DATASETS:
        assert _files(tmp_path / "spread", series) == _files(tmp_path / "alone", series)
        assert _table(tmp_path / "spread", series).equals(_table(tmp_path / "alone", series))  # row by row
        assert spread.datasets[series]["rows"] == alone.datasets[series]["rows"] > 0
    assert spread.requests > 0  # the workers' requests are in the report
    assert spread.datasets["logs"]["verified_rows"] == spread.datasets["logs"]["rows"]  # workers proved them too
    # Re-running finds everything stored: nothing is sent to the workers.
    with get_task_stream(cluster) as stream:
        again = extract(list(DATASETS), out=tmp_path / "spread", executor=cluster, **options)
    assert not [t for t in stream.data if str(t["key"]).startswith("chainframe-")]
    assert all(d["written"] == 0 for d in again.datasets.values())


@pytest.mark.slow
def test_a_slot_proven_together_on_a_worker_falls_back_as_in_one_process(
    devnet: Devnet, tmp_path: Path, cluster: Client
) -> None:
    """Receipts and logs verified on the workers: each slot is one Dask task whose worker lends it the transactions;
    one changed transaction fails that slot's group, its chunks are proven alone, and the run equals a clean one."""
    names = ["receipts", "logs"]
    options: dict[str, Any] = {"blocks": "0:60", "chunk_size": 20, "progress": False, "verify": True}
    with Hostile(devnet.node.url) as faithful:
        extract(names, rpc=faithful.url, out=tmp_path / "faithful", executor=cluster, **options)
    with (
        Hostile(devnet.node.url, "a transaction's value changed", times=1, blocks=(0, 60)) as proxy,
        get_task_stream(cluster) as stream,
    ):
        spread = extract(names, rpc=proxy.url, out=tmp_path / "spread", executor=cluster, **options)
        assert proxy.rewritten == 1
    assert len(proxy.seen) > len(faithful.seen)  # the failed slot's chunks fetched again, with their material
    keys = sorted(str(t["key"]).rsplit("-", 2)[0] for t in stream.data if str(t["key"]).startswith("chainframe-"))
    assert keys == [f"chainframe-receipts+logs-{a}-{b}" for a, b in ((0, 19), (20, 39), (40, 59), (60, 60))]
    alone = extract(names, rpc=devnet.node.url, out=tmp_path / "alone", **options)
    for series in names:
        assert spread.datasets[series]["verified_rows"] == spread.datasets[series]["rows"] > 0, series
        assert _table(tmp_path / "spread", series).equals(_table(tmp_path / "alone", series)), series
        assert alone.datasets[series]["rows"] == spread.datasets[series]["rows"], series


@pytest.mark.slow
def test_a_worker_killed_mid_chunk_loses_and_doubles_nothing(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(latency=0.02))  # chunks long enough to be caught half-written
    out = tmp_path / "out"
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["report"] = extract(
                ["logs"], blocks="0:latest", out=out, rpc=devnet.http_url, chunk_size=10, progress=False,
                executor="local:2", concurrency=1,
            )  # fmt: skip
        except BaseException as exc:
            done["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    killed: int | None = None
    deadline = time.monotonic() + 60
    while killed is None and thread.is_alive() and time.monotonic() < deadline:
        # A worker's temporary (.<name>.tmp-<pid>-<random>) is a chunk it is writing: kill that worker there.
        for temporary in (out / "logs").glob(".*.tmp-*") if (out / "logs").is_dir() else ():
            pid = int(re.findall(r"\.tmp-(\d+)-", temporary.name)[0])
            if pid != os.getpid() and (out / "logs" / temporary.name).exists():
                os.kill(pid, signal.SIGKILL)
                killed = pid
                break
        time.sleep(0.005)
    thread.join(120)
    assert killed is not None, "no worker was caught writing a chunk"
    assert "error" not in done, done.get("error")
    truth = devnet.truth
    glob = str(out / "logs" / "*.parquet")
    [(rows, distinct)] = (
        duckdb.connect()
        .execute(f"SELECT count(*), count(DISTINCT (block_number, log_index)) FROM read_parquet('{glob}')")  # noqa: S608
        .fetchall()
    )
    assert rows == distinct == truth.log_count  # every log once: none lost, none doubled
    assert done["report"].datasets["logs"]["rows"] == truth.log_count
    # What the killed worker left is a temporary no glob reads (so it died mid-chunk, before its rename); the next
    # run removes it and has nothing to do.
    assert list((out / "logs").glob(f".*.tmp-{killed}-*"))
    again = extract(["logs"], blocks="0:latest", out=out, rpc=devnet.http_url, chunk_size=10, progress=False)
    assert again.datasets["logs"]["written"] == 0
    assert not list((out / "logs").glob(".*.tmp-*"))


def _credits_per_second(devnet: Devnet, work: Any) -> tuple[float, int, float]:
    """Run ``work`` while sampling the gateway's counters: (the most credits it saw in any one second, its 429s,
    seconds taken). The gateway's credit bucket starts full."""
    assert devnet.gateway is not None
    gateway = devnet.gateway
    gateway.configure(gateway.settings())  # a full bucket, as the pacers' are when a run starts
    gateway.reset_stats()
    samples: list[tuple[float, int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            stats = gateway.stats()
            spent = sum(cost([m]) * n for m, n in stats["calls"].items()) + cost(["a", "b"]) // 2 * stats["batches"]
            samples.append((time.monotonic(), spent))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.monotonic()
    try:
        work()
    finally:
        stop.set()
        sampler.join()
    seconds = time.monotonic() - started
    peak = 0.0
    for i, (at, spent) in enumerate(samples):
        later = [s for t, s in samples[i:] if t - at <= 1.0]
        peak = max(peak, later[-1] - spent)
    return peak, gateway.stats()["rate_limited"], seconds


def test_two_workers_keep_to_the_budget_one_keeps_to(devnet: Devnet, tmp_path: Path, cluster: Client) -> None:
    budget = 10_000.0  # the run needs about 20,000 credits: the budget bounds its time
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(credits_per_second=budget))
    options: dict[str, Any] = {
        "blocks": "0:120", "rpc": devnet.http_url, "chunk_size": 10, "progress": False,
        "client_options": {"pacing": Pacing(credits_per_second=budget)},
    }  # fmt: skip
    one = _credits_per_second(devnet, lambda: extract(["blocks", "logs"], out=tmp_path / "one", **options))
    two = _credits_per_second(
        devnet, lambda: extract(["blocks", "logs"], out=tmp_path / "two", executor=cluster, **options)
    )

    # Two runs at once, each with the whole budget: what sharing prevents. The gateway's budget and the runs' are a
    # quarter of the above, and the runs a quarter as long: the two runs are threads of this process, which on a loaded
    # machine (load 15) did not send the twice 10,000 credits a second that overrun the gateway (no 429 came), where
    # twice 2,500 a second is within its reach; their first bursts alone (0.75 s of allowance each) are 1.5 s of it.
    quarter = budget / 4
    devnet.gateway.configure(GatewaySettings(credits_per_second=quarter))
    alike = {**options, "blocks": "0:30", "client_options": {"pacing": Pacing(credits_per_second=quarter)}}

    def unshared() -> None:
        with ThreadPoolExecutor(2) as pool:
            for future in [pool.submit(extract, ["blocks", "logs"], out=tmp_path / f"u{i}", **alike) for i in (0, 1)]:
                future.result()

    both = _credits_per_second(devnet, unshared)
    for name, (peak, refused, seconds) in (("one process", one), ("two workers", two), ("unshared", both)):
        print(f"{name}: peak {peak:,.0f} credits/s in a second, {refused} 429s, {seconds:.2f} s")
    # In any one second a pacer may send its burst (BURST seconds of allowance, taken at once) and that second's
    # allowance; the workers' shares add up to the same.
    most = budget * (_Bucket.BURST + 1) * 1.1
    for peak, refused, _ in (one, two):
        assert refused == 0  # the gateway's own bucket (a second of budget) never ran dry
        assert budget * 0.8 < peak <= most  # the budget was used, and not more
    assert both[1] > 0  # the gateway does refuse two unshared budgets: the check above can fail


def test_a_rate_limit_seen_by_one_worker_pauses_the_other(devnet: Devnet, tmp_path: Path, cluster: Client) -> None:
    assert devnet.gateway is not None
    gateway = devnet.gateway
    # One 429 asking for 1.5 s, after the run is well under way.
    gateway.configure(
        GatewaySettings(latency=0.01, faults=(FaultRule(kind="http_429", backoff=1.5, times=1, probability=0.05),))
    )
    seen: list[tuple[float, int, int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            stats = gateway.stats()
            seen.append((time.monotonic(), stats["http_requests"], stats["faults"].get("http_429", 0)))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        report = extract(
            ["blocks", "logs"], blocks="0:latest", out=tmp_path, rpc=devnet.http_url, chunk_size=10, progress=False,
            executor=cluster,
        )  # fmt: skip
    finally:
        stop.set()
        sampler.join()
    assert report.rate_limited == 1
    refused_at = next(at for at, _, faults in seen if faults)
    # From 0.3 s after the 429 (the pause has reached the other worker) to 1.2 s after it, nobody sends.
    window = [requests for at, requests, _ in seen if refused_at + 0.3 <= at <= refused_at + 1.2]
    assert len(window) > 10
    assert window[-1] == window[0], f"{window[-1] - window[0]} requests arrived during the pause"
    assert seen[-1][1] > window[-1]  # and the run went on afterwards


def test_endpoints_are_spread_over_the_workers(devnet: Devnet, tmp_path: Path, cluster: Client) -> None:
    key = secrets.token_hex(16)
    with GatewayProcess(
        GatewayConfig(
            networks={"devnet": devnet.node.url},
            default_network="devnet",
            keys=(key,),
            admin_token=secrets.token_hex(8),
        )
    ) as second:
        assert devnet.gateway is not None
        report = extract(
            ["blocks", "logs"], blocks="0:latest", out=tmp_path, rpc=[devnet.http_url, second.http_url(key)],
            chunk_size=25, progress=False, executor=cluster,
        )  # fmt: skip
        by_first, by_second = devnet.gateway.stats()["http_requests"], second.stats()["http_requests"]
    assert report.datasets["logs"]["rows"] == devnet.truth.log_count
    assert by_first > 5
    assert by_second > 5  # one worker started from each endpoint


def test_the_key_is_in_no_task_key_log_or_event(devnet: Devnet, tmp_path: Path, cluster: Client) -> None:
    wrong = secrets.token_hex(16)
    url = devnet.http_url.replace(devnet.key, wrong)
    # The coordinator reads with the right key, one worker with a wrong one: its chunks are refused over there.
    with get_task_stream(cluster) as stream, pytest.raises(KeyRefused) as refused:
        extract(["blocks"], blocks="0:latest", out=tmp_path / "refused", rpc=[devnet.http_url, url], chunk_size=25,
                progress=False, executor=cluster)  # fmt: skip
    assert wrong not in str(refused.value)  # the typed error, from a worker, names no key
    with get_task_stream(cluster) as more:
        extract(["logs"], blocks="0:latest", out=tmp_path / "ok", rpc=devnet.http_url, chunk_size=50,
                progress=False, executor=cluster)  # fmt: skip
    seen = "\n".join(
        [
            *(repr(t) for t in [*stream.data, *more.data]),
            repr(cluster.get_events()),
            repr(cluster.get_scheduler_logs(n=10_000)),
            repr(cluster.get_worker_logs(n=10_000)),
            repr(cluster.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.transition_log))),
        ]
    )
    assert "chainframe-" in seen  # the run's tasks are in what was looked at
    for secret in (devnet.key, wrong):
        assert secret not in seen


def test_bad_executors_are_refused_before_any_request(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    for executor, says in (("local:0", "local:2"), ("local:x", "local:2"), ("nowhere", "scheduler address"),
                           (3, "distributed.Client")):  # fmt: skip
        with pytest.raises(InputError, match=says):
            extract(["blocks"], blocks="0:9", out=tmp_path, rpc=devnet.http_url, executor=executor)
    with pytest.raises(InputError, match="names no endpoint"):
        extract(["blocks"], blocks="0:9", out=tmp_path, rpc=[], executor="local:1")
    assert devnet.gateway.stats()["http_requests"] == 0
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}), pytest.raises(InputError, match="reach"):
        extract(["blocks"], blocks="0:9", out=tmp_path, rpc=devnet.http_url, executor="tcp://127.0.0.1:9")


def test_a_share_of_the_budget() -> None:
    pacing = Pacing(requests_per_second=100, credits_per_second=500, max_concurrency=8)
    half = pacing.share(2)
    assert (half.requests_per_second, half.credits_per_second, half.max_concurrency) == (50, 250, 8)
    assert Pacing().share(3) == Pacing()


@pytest.mark.slow
def test_chunks_that_never_finish_fail_the_run_within_its_bound(
    devnet: Devnet, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert devnet.gateway is not None
    # The workers' eth_getLogs are answered after 30 s (the coordinator sends none): every chunk hangs on its first.
    devnet.gateway.configure(GatewaySettings(faults=(FaultRule(kind="slow", delay=30.0, methods=("eth_getLogs",)),)))
    started = time.monotonic()
    with dask.config.set({NO_PROGRESS_KEY: "2s"}), pytest.raises(WorkersStalled) as stalled:
        extract(
            ["logs"], blocks="0:latest", out=tmp_path, rpc=devnet.http_url, chunk_size=50, progress=False,
            executor="local:2", concurrency=1,
        )  # fmt: skip
    seconds = time.monotonic() - started  # a cluster started, the bound waited out, the cluster closed
    message = str(stalled.value)
    print(message)
    assert seconds < 25
    chunks = stalled.value.chunks
    assert "logs blocks 0..49" in chunks
    assert len(chunks) == 4  # the window: a thread and one more per worker
    held = {address for address in chunks.values() if address is not None}
    assert len(held) == 2  # both workers hold chunks
    for chunk, address in chunks.items():
        assert chunk in message
        if address is not None:  # where each worker's chunks wait: reading an answer
            assert re.search(
                f"on {address} \\(coroutines waiting: \\d+ in chainframe/rpc/_transports/http.py:", message
            )
    assert f"{NO_PROGRESS_KEY} = 2 s" in message
    assert "DASK_CHAINFRAME__NO_PROGRESS_TIMEOUT" in message
    # Each worker's stacks are logged: the run's coroutines down to the socket read, and every thread.
    logged = [r.getMessage() for r in caplog.records if r.name == "chainframe.dask"]
    assert len(logged) == 2
    for text in logged:
        assert "in run_chunk" in text
        assert "in _exchange" in text
        assert "(the run's chunk loop)" in text
        assert "in run_on_worker" in text  # a Dask task thread, waiting for its chunk
    assert devnet.key not in message + caplog.text
    # The cluster was closed, the workers' connections too: nothing is left to warn about (warnings are errors).
    gc.collect()


def test_the_no_progress_bound_is_one_requests_longest_time(devnet: Devnet, tmp_path: Path) -> None:
    def plan(**options: object) -> WorkerPlan:
        return WorkerPlan(run="r", endpoints=(Endpoint.from_url(devnet.http_url),), workers=2, client_options=options)

    assert no_progress_timeout(plan()) == 120 + 900  # the answer's timeout after the rate limits' budget
    assert no_progress_timeout(plan(retry=RetryPolicy(total=60, rate_limit_total=60))) == 300  # the floor
    long = no_progress_timeout(plan(retry=RetryPolicy(total=600, rate_limit_total=60), timeout=Timeout(total=30)))
    assert long == 630
    # A batch of 10 of the dearest calls (1,000 credits each, and 80 for the batch) at half of 100 credits a second.
    paced = plan(batch_size=10, pacing=Pacing(credits_per_second=100))
    assert no_progress_timeout(paced) == pytest.approx(120 + 900 + 10_080 / 50)
    with dask.config.set({NO_PROGRESS_KEY: "45 minutes"}):
        assert no_progress_timeout(plan()) == 2700
    assert devnet.gateway is not None
    for wrong in ("soon", 0, "-5s"):
        with dask.config.set({NO_PROGRESS_KEY: wrong}), pytest.raises(InputError, match="no-progress-timeout"):
            extract(["blocks"], blocks="0:9", out=tmp_path, rpc=devnet.http_url, executor="local:1")
    assert devnet.gateway.stats()["http_requests"] == 0  # refused before any request (and before a cluster)


def test_a_dead_first_endpoint_is_set_aside_on_the_workers(devnet: Devnet, tmp_path: Path, cluster: Client) -> None:
    """Failover on the workers too: a dead endpoint listed first is set aside there, and the run is exact."""
    from tests.rpc.test_failover import REFUSED, dead_url

    dead = dead_url(devnet.key)
    report = extract(["blocks", "logs"], blocks="0:latest", out=tmp_path, rpc=[dead, devnet.http_url],
                     chunk_size=25, progress=False, executor=cluster)  # fmt: skip
    assert report.datasets["logs"]["rows"] == devnet.truth.log_count
    assert report.set_aside == {Endpoint.from_url(dead).display: REFUSED}
    assert report.failovers > 0
