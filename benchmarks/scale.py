"""How extraction scales over Dask workers and endpoints, on the benchmark devnet chain behind "remote" gateways.

Remote as in ``scripts/bench compare``: every request waits the gateway's latency, eth_getLogs has the 10,000-result
limit, and each gateway (a provider key) has a credits-per-second budget, which chainframe is told, as a user would
tell it their plan. A second gateway in front of the same node, with its own key and budget, is the second endpoint.

Runs, each into a fresh folder, timed from the call to the report (clusters are started beforehand; their start-up
is printed apart):
- ``in-process``: no Dask, one endpoint: the baseline of the ratios;
- ``1 worker`` / ``2 workers``: the same on a LocalCluster of 1 or 2 worker processes, one endpoint;
- ``2 workers, 2 endpoints``: one endpoint per worker, each with its own budget.
Also the credits per second the gateways saw (over the whole run) and their 429s. ``--budget 0`` removes the credit
budget, leaving latency as the bound. Run: ``scripts/bench scale`` (``--blocks N``, ``--datasets a,b``).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import secrets
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from distributed import Client, LocalCluster

from benchmarks.compare import REMOTE
from chainframe import extract
from chainframe.devnet import BENCH_WORKLOAD, Devnet, GatewayConfig, GatewayProcess
from chainframe.devnet.gateway._credits import cost
from chainframe.rpc import Pacing

CONCURRENCY = 4
"""Chunks at once: in the process, or per worker."""
CHUNK_SIZE = 100
"""Blocks per file: 20 chunks per dataset over the 2,000 blocks, so there is work to spread, as over a long range."""


def credits(stats: dict[str, Any]) -> int:
    """Credits a gateway charged, from its counters (a batch also pays as one call more)."""
    return sum(cost([m]) * n for m, n in stats["calls"].items()) + cost(["a", "b"]) // 2 * stats["batches"]


def timed(
    gateways: list[GatewayProcess], urls: list[str], out: Path, *, datasets: list[str], blocks: str,
    budget: float | None, executor: Any,
) -> dict[str, Any]:  # fmt: skip
    settings = dataclasses.replace(REMOTE, credits_per_second=budget)
    for gateway in gateways:
        gateway.configure(settings)  # full credit buckets, counters at zero
        gateway.reset_stats()
    started = time.perf_counter()
    report = extract(
        datasets, blocks=blocks, out=out, rpc=urls if len(urls) > 1 else urls[0], progress=False,
        concurrency=CONCURRENCY, chunk_size=CHUNK_SIZE, executor=executor,
        client_options={"pacing": Pacing(credits_per_second=budget)} if budget else None,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    stats = [g.stats() for g in gateways]
    return {
        "seconds": seconds,
        "rows": sum(d["rows"] for d in report.datasets.values()),
        "requests": sum(s["http_requests"] for s in stats),
        "credits_per_second": sum(credits(s) for s in stats) / seconds,
        "rate_limited": sum(s["rate_limited"] for s in stats),
        "per_endpoint": [s["http_requests"] for s in stats],
    }


def cluster(stack: ExitStack, workers: int) -> tuple[Client, float]:
    """A LocalCluster of ``workers`` processes, its workers' imports done; and the seconds that took."""
    started = time.perf_counter()
    local = stack.enter_context(
        LocalCluster(n_workers=workers, threads_per_worker=CONCURRENCY, processes=True, dashboard_address=":0")
    )
    client = stack.enter_context(Client(local))
    client.run(importlib.import_module, "chainframe.engine._dask")
    return client, time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=2000, help="blocks to extract, from 1 (default: 2000)")
    parser.add_argument("--datasets", default="blocks,transactions,logs")
    parser.add_argument(
        "--budgets", default="40000,10000", help="credits per second per endpoint, one table each (0: no budget)"
    )
    args = parser.parse_args(argv)
    datasets = args.datasets.split(",")
    budgets = [float(b) or None for b in args.budgets.split(",")]
    tables: list[tuple[float | None, list[tuple[str, dict[str, Any]]]]] = []
    with ExitStack() as stack:
        devnet = stack.enter_context(Devnet(workload=BENCH_WORKLOAD))
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        assert devnet.gateway is not None
        blocks = f"1:{min(args.blocks, devnet.truth.head)}"
        key = secrets.token_hex(16)
        second = stack.enter_context(
            GatewayProcess(
                GatewayConfig(networks={"devnet": devnet.node.url}, default_network="devnet", keys=(key,),
                              admin_token=secrets.token_hex(16))
            )
        )  # fmt: skip
        one, two = [devnet.gateway], [devnet.gateway, second]
        urls = [devnet.http_url, second.http_url(key)]
        client1, start1 = cluster(stack, 1)
        client2, start2 = cluster(stack, 2)
        extract(datasets, blocks="1:50", out=tmp / "warm", rpc=devnet.http_url, progress=False)  # first-use costs
        runs = [
            ("in-process", one, urls[:1], None),
            ("1 worker", one, urls[:1], client1),
            ("2 workers", one, urls[:1], client2),
            ("2 workers, 2 endpoints", two, urls, client2),
        ]
        for budget in budgets:
            rows: list[tuple[str, dict[str, Any]]] = []
            for name, gateways, endpoints, executor in runs:
                out = tmp / f"{budget}-{name}"
                result = timed(
                    gateways, endpoints, out, datasets=datasets, blocks=blocks, budget=budget, executor=executor
                )
                rows.append((name, result))
                print(f"budget {budget or 'none'}: {name:<24} {result['seconds']:>7.2f} s", flush=True)
            tables.append((budget, rows))
    print(f"\nbenchmark chain, blocks {blocks}; datasets {', '.join(datasets)}; chunks of {CHUNK_SIZE} blocks; "
          f"gateway latency {REMOTE.latency} s; {CONCURRENCY} chunks at once per process or worker")  # fmt: skip
    print(f"cluster start-up (not in the times): 1 worker {start1:.1f} s, 2 workers {start2:.1f} s")
    for budget, rows in tables:
        base = rows[0][1]["seconds"]
        print(f"\nbudget {f'{budget:,.0f} credits/s per endpoint' if budget else 'none'}:")
        print(f"{'run':<24} {'seconds':>8} {'vs in-process':>14} {'rows':>10} {'requests':>9} {'credits/s':>10} "
              f"{'429s':>5}  requests per endpoint")  # fmt: skip
        for name, r in rows:
            print(
                f"{name:<24} {r['seconds']:>8.2f} {r['seconds'] / base:>13.2f}x {r['rows']:>10,} {r['requests']:>9,} "
                f"{r['credits_per_second']:>10,.0f} {r['rate_limited']:>5}  {r['per_endpoint']}"
            )


if __name__ == "__main__":
    main()
