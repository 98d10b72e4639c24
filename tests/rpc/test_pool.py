"""Several endpoints at once: three gateways with different credit budgets (10, 20 and 40 eth_getBlockByNumber a
second at Infura's 80 credits) serve one run. Its rate is about the sum of theirs, no gateway's own bucket refuses a
request (counted at each gateway), its rows equal a run through one endpoint; a gateway killed mid-run is set aside
and the run still ends equal, and says so."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import pyarrow.parquet as pq
import pytest

from chainframe._errors import InputError
from chainframe.cli import main
from chainframe.devnet import Devnet, GatewaySettings
from chainframe.devnet.gateway import GatewayConfig, GatewayProcess
from chainframe.engine import RunReport, extract
from chainframe.rpc import PRICE_TABLES, AsyncClient, Endpoint, Pacing, Provider, read_providers

BUDGETS = (800.0, 1600.0, 3200.0)
"""Credits per second of the three gateways: 10, 20 and 40 eth_getBlockByNumber a second."""
HEADROOM = 0.95
"""Each endpoint is paced at 95% of its gateway's budget: paced at 100% on this loaded machine (load average 15-20
on 2 cores), the gateways refused 1 to 6 requests of 120 (sends move about by more than the quarter second a
provider's bucket keeps in hand); at 95%, none."""
DATASETS = ["blocks"]
OPTIONS = {"batch_size": 5}
"""Batches of 5 calls (480 credits): within every pacer's opening allowance (BURST seconds of its budget). 315 calls
in all, about 28,000 credits: 5 s at the three budgets' sum."""


class Served(NamedTuple):
    """A gateway of our own in front of the devnet's node, with a credit budget."""

    process: GatewayProcess
    endpoint: Endpoint
    budget: float

    def stats(self) -> dict[str, Any]:
        counted: dict[str, Any] = self.process.stats()
        return counted


def _gateway(devnet: Devnet, budget: float) -> Served:
    key = secrets.token_hex(16)
    config = GatewayConfig(
        networks={"devnet": devnet.node.url}, default_network="devnet", keys=(key,), admin_token=secrets.token_hex(8),
        settings=GatewaySettings(credits_per_second=budget),
    )  # fmt: skip
    process = GatewayProcess(config)
    return Served(process, Endpoint.from_url(process.http_url(key)), budget)


@pytest.fixture(scope="module")
def gateways(devnet_session: Devnet) -> Iterator[list[Served]]:
    started = [_gateway(devnet_session, budget) for budget in BUDGETS]
    try:
        yield started
    finally:
        for gateway in started:
            gateway.process.stop()


def _providers(gateways: list[Served]) -> list[Provider]:
    return [Provider(g.endpoint, Pacing(credits_per_second=g.budget * HEADROOM)) for g in gateways]


@pytest.fixture(scope="module")
def reference(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one-endpoint")
    extract(DATASETS, blocks="0:latest", out=out, rpc=devnet_session.http_url, progress=False)
    return out


KILLED_RUN = "0:150"
"""The run a gateway is killed in: shorter (about 190 calls, 3 s), the kill at its first second."""


def _same_rows(out: Path, reference: Path) -> None:
    for dataset in DATASETS:
        got, want = pq.read_table(out / dataset), pq.read_table(reference / dataset)
        assert got.num_rows == want.num_rows > 0
        assert got.equals(want), dataset


def _sampled(gateways: list[Served], work: Callable[[], RunReport]) -> tuple[RunReport, list[Any]]:
    """Run ``work`` while reading each gateway's credit counter every 50 ms: (its report, [(time, credits each)])."""
    for gateway in gateways:
        gateway.process.configure(gateway.process.settings())  # full buckets, as the pacers' are when the run starts
        gateway.process.reset_stats()
    samples: list[tuple[float, list[int]]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append((time.monotonic(), [g.stats()["credits"] if g.process.alive() else -1 for g in gateways]))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        report = work()
    finally:
        stop.set()
        sampler.join()
    return report, samples


def _peak(samples: list[tuple[float, list[int]]], n: int) -> float:
    """The most credits gateway ``n`` served in any one second."""
    peak = 0
    for i, (at, spent) in enumerate(samples):
        later = [s[n] for t, s in samples[i:] if t - at <= 1.0 and s[n] >= 0]
        if spent[n] >= 0 and later:
            peak = max(peak, later[-1] - spent[n])
    return peak


def test_three_gateways_serve_one_run_at_the_sum_of_their_rates(
    devnet_session: Devnet, gateways: list[Served], reference: Path, tmp_path: Path
) -> None:
    started = time.monotonic()

    def run() -> RunReport:
        return extract(DATASETS, blocks="0:latest", out=tmp_path, rpc=_providers(gateways), client_options=OPTIONS,
                       progress=False)  # fmt: skip

    report, samples = _sampled(gateways, run)
    seconds = time.monotonic() - started
    _same_rows(tmp_path, reference)
    stats = [g.stats() for g in gateways]
    served = [s["credits"] for s in stats]
    rate, reading = sum(served) / seconds, _reading_rate(samples)
    peaks = [_peak(samples, n) for n in range(3)]
    print(f"{sum(served):,} credits in {seconds:.2f} s: {rate:,.0f}/s, {reading:,.0f}/s while fetching "
          f"(limits' sum {sum(BUDGETS):,.0f}); per gateway {served}, peaks {peaks}")  # fmt: skip
    # The gateways' budgets summed (spread pacers start with nothing in hand: no opening burst) while the run fetches;
    # the whole call also plans, opens the folder and writes (about a second on this loaded machine). Paced at 95%,
    # it fetched at 91-103% of the sum (5,084-5,742 credits/s in five runs) at load average 12-15 on 2 cores; 15% is
    # the bound, so the suite's load does not make it flaky.
    assert abs(reading - sum(BUDGETS)) <= 0.15 * sum(BUDGETS)
    assert rate >= 0.75 * sum(BUDGETS)
    for n, (budget, counted) in enumerate(zip(BUDGETS, stats, strict=True)):
        assert counted["rate_limited"] == 0  # the gateway's own bucket never refused a request
        assert peaks[n] <= budget * 2  # what its bucket allows in any second: a full one and a refill
        assert counted["credits"] >= 0.7 * budget * seconds  # and every gateway was kept busy
    # The report counts what each gateway counted, priced by the same table.
    for gateway, counted in zip(gateways, stats, strict=True):
        sent = report.endpoints[gateway.endpoint.display]
        assert sent["calls"] == sum(counted["calls"].values())
        assert sent["credits"] == counted["credits"]
        assert sent["errors"] == 0
    assert report.failovers == 0
    assert report.set_aside == {}
    lines = report.summary().splitlines()
    assert sum(line.startswith("  endpoint http://127.0.0.1:") for line in lines) == 3
    assert all(gateway.endpoint.key not in report.summary() for gateway in gateways)


def _reading_rate(samples: list[tuple[float, list[int]]]) -> float:
    """Credits per second at all gateways while the run fetches: from the first sample that saw 5% of its credits
    (before, the run asks the chain id and head and plans) to the first that saw them all."""
    start = next(s for s in samples if sum(s[1]) >= 0.05 * sum(samples[-1][1]))
    end = next(s for s in samples if sum(s[1]) == sum(samples[-1][1]))
    return (sum(end[1]) - sum(start[1])) / (end[0] - start[0])


def test_a_gateway_killed_mid_run_is_set_aside_and_the_run_is_exact(
    devnet_session: Devnet, gateways: list[Served], tmp_path: Path
) -> None:
    killed = gateways[1].process
    display = gateways[1].endpoint.display
    one = tmp_path / "one-endpoint"
    extract(DATASETS, blocks=KILLED_RUN, out=one, rpc=devnet_session.http_url, progress=False)
    served_before = sum(gateways[1].stats()["calls"].values())  # the earlier tests' calls
    running = threading.Event()

    def kill_once_it_served_its_share() -> None:
        """Killed once it has served 15 calls of this run (after a fixed second, a loaded machine had it serve 7)."""
        deadline = time.monotonic() + 60
        while running.is_set() and time.monotonic() < deadline:
            if sum(gateways[1].stats()["calls"].values()) - served_before >= 15:
                break
            time.sleep(0.05)
        killed.stop()

    killer = threading.Thread(target=kill_once_it_served_its_share)
    running.set()
    killer.start()
    try:
        report = extract(DATASETS, blocks=KILLED_RUN, out=tmp_path / "three", rpc=_providers(gateways),
                         client_options=OPTIONS, progress=False)  # fmt: skip
    finally:
        running.clear()
        killer.join()
    assert not killed.alive()
    _same_rows(tmp_path / "three", one)
    assert report.set_aside[display].startswith("connection failed")
    assert report.endpoints[display]["calls"] > 10  # it served its share until it died
    assert report.endpoints[display]["errors"] >= 1
    assert f"  set aside: {display} ({report.set_aside[display]})" in report.summary().splitlines()


def test_price_tables_price_a_batch_by_their_own_rules() -> None:
    calls = ["eth_getBlockByNumber"] * 30
    assert Pacing().cost(calls) == 31 * 80  # Infura: a batch pays for itself as one more call
    assert Pacing.priced("alchemy").cost(calls) == 30 * 20  # Alchemy: the calls' sum
    assert Pacing.priced("alchemy").cost(["eth_getBlockReceipts"]) == 500  # its throughput CU
    assert Pacing.priced("quicknode").cost(["trace_block", "eth_getLogs"]) == 40 + 20
    assert set(PRICE_TABLES) == {"infura", "alchemy", "quicknode"}


@pytest.mark.anyio
async def test_unpaced_endpoints_share_the_calls(devnet: Devnet) -> None:
    """With no budget anywhere, every endpoint has budget: the least busy takes each request, in turn.

    Both endpoints' chain ids are known before the 40 calls (a call to each, in turn). Without that, a burst at the
    client's start was split 35 calls against 7 (no error) in 4 of 60 runs on a machine loaded with three busy loops,
    and once in a clean CI; with it, 0 of 60. Why the start leans so is not known: a slow eth_chainId alone (0.3 s at
    the gateway) left it at 21 and 21 in every run."""
    assert devnet.gateway is not None
    other = devnet.http_url.replace("127.0.0.1", "localhost")  # the same gateway, counted as another endpoint
    async with AsyncClient(devnet.http_url, spread=[other]) as client:
        for n in range(2):
            await client.get_block(n)
        assert all(c.calls == 2 for c in client.stats.endpoints.values()), client.stats.endpoints
        async with anyio.create_task_group() as tg:
            for n in range(40):
                tg.start_soon(client.get_block, n)
    counts = list(client.stats.endpoints.values())
    assert len(counts) == 2
    assert all(c.calls >= 12 for c in counts), client.stats.endpoints  # 10 of the 40 at least, besides the first two
    assert sum(c.calls for c in counts) == 40 + 2 + 2  # the first two, and each one's chain id, once


def test_an_endpoints_file_gives_each_endpoint_its_limits_and_price_table(
    gateways: list[Served], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first, last = gateways[0], gateways[2]  # gateways[1] was killed above
    monkeypatch.setenv("H6_ALCHEMY_URL", last.endpoint.http_url)
    listed = tmp_path / "endpoints.toml"
    listed.write_text(
        f'[[endpoint]]\nurl = "{first.endpoint.http_url}"\ncredits_per_second = {first.budget * HEADROOM}\n\n'
        f'[[endpoint]]\nurl_env = "H6_ALCHEMY_URL"\nprices = "alchemy"\ncredits_per_second = 600\n'
    )
    for gateway in (first, last):  # full buckets: the runs above left them as low as they left them
        gateway.process.configure(gateway.process.settings())
        gateway.process.reset_stats()
    argv = ["extract", "blocks", "--blocks", "0:60", "--endpoints", str(listed), "--out", str(tmp_path / "out"),
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    (saved,) = (tmp_path / "out" / ".chainframe" / "runs").glob("*.json")
    sent = RunReport(**json.loads(saved.read_text())).endpoints
    calls = [sum(g.stats()["calls"].values()) for g in (first, last)]
    assert [sent[g.endpoint.display]["calls"] for g in (first, last)] == calls
    assert min(calls) > 5  # both served
    assert first.stats()["rate_limited"] == last.stats()["rate_limited"] == 0
    assert sent[first.endpoint.display]["credits"] == first.stats()["credits"]  # Infura's prices, as the gateway's
    alchemy = Pacing.priced("alchemy")
    priced = sum(alchemy.cost([m]) * n for m, n in last.stats()["calls"].items())
    assert alchemy.batch_cost == 0  # Alchemy: a batch costs its calls
    assert sent[last.endpoint.display]["credits"] == priced
    for gateway in (first, last):
        line = f"  endpoint {gateway.endpoint.display}: {sent[gateway.endpoint.display]['calls']:,} calls"
        assert any(shown.startswith(line) for shown in out.splitlines())
        assert gateway.endpoint.key not in out + saved.read_text()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[[endpoint]]\nurl = "http://a/v3/k"\nrps = 5\n', "unknown rps"),
        ('[[endpoint]]\nurl = "http://a/v3/k"\nurl_env = "X"\n', "give url or url_env"),
        ('[[endpoint]]\nurl = "http://a/v3/k"\nprices = "ankr"\n', "no price table 'ankr'"),
        ('[[endpoint]]\nurl = "http://a/v3/k"\ncredits_per_second = -1\n', "credits_per_second must be a number"),
        ("title = 1\n", "names no endpoint"),
    ],
)
def test_an_endpoints_file_is_checked_before_anything_is_sent(tmp_path: Path, text: str, says: str) -> None:
    listed = tmp_path / "endpoints.toml"
    listed.write_text(text)
    with pytest.raises(InputError, match=says) as refused:
        read_providers(listed)
    assert str(listed) in str(refused.value)
