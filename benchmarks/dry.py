"""``--dry``'s predicted calls and credits beside a real run's, per dataset, on the benchmark chain behind the gateway
with Infura's limits (10,000 results per eth_getLogs, a credits-per-second budget chainframe is told, 50 ms added per
request): the prediction must be within 10% of what the gateway then counts and bills, for each dataset.

For each dataset: ``chainframe.plan`` and the CLI's estimate (what ``extract --dry`` prints), then a real ``extract``
into an empty folder with the same options, the gateway's counters reset before it. Real calls are every call the
gateway saw (the run's chain-state reads and checks included); credits are what it billed by Infura's weights, a batch
paying for itself as one more call.

Run: ``scripts/bench dry`` (``--blocks N``, ``--datasets ...``, ``--near`` for a near gateway with no budget, where a
logs piece is fetched in several calls). Exits 1 when a dataset is off by more than 10%.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from typing import Any

import anyio

from chainframe import extract
from chainframe.cli._dry import estimate, sampled
from chainframe.devnet import BENCH_WORKLOAD, Devnet, GatewaySettings, LogLimits
from chainframe.engine import plan
from chainframe.engine._ranges import DEFAULT_CONFIRMATIONS
from chainframe.rpc import Pacing

INFURA = GatewaySettings(latency=0.05, limits=LogLimits(max_results=10_000), credits_per_second=40_000.0)
DATASETS = ("blocks", "transactions", "receipts", "logs", "erc20_transfers")
TOLERANCE = 0.10


def _off(predicted: float, real: float) -> float:
    return abs(predicted - real) / max(real, 1)


NEAR = GatewaySettings(limits=LogLimits(max_results=10_000))
"""``--near``: the gateway with no latency and no credit budget, where a run fetches a logs piece in several calls."""


def measure(devnet: Devnet, dataset: str, blocks: str, settings: GatewaySettings = INFURA) -> dict[str, Any]:
    assert devnet.gateway is not None
    options = {"pacing": Pacing(credits_per_second=settings.credits_per_second)}
    devnet.gateway.configure(settings)
    with tempfile.TemporaryDirectory() as out:
        found = plan(dataset, blocks=blocks, out=out, rpc=devnet.http_url, client_options=options)
        densities, cheap, finalized = anyio.run(sampled, found, options, devnet.http_url, None, DEFAULT_CONFIRMATIONS)
        (guess,) = [estimate(s, densities.get(s.series), cheap=cheap, finalized=finalized) for s in found.series]
        devnet.gateway.reset_stats()
        extract(dataset, blocks=blocks, out=out, rpc=devnet.http_url, progress=False, client_options=options)
        stats = devnet.gateway.stats()
    calls = sum(stats["calls"].values())
    return {
        "dataset": dataset,
        "predicted_calls": guess.all_calls,
        "real_calls": calls,
        "method_calls": stats["calls"].get(guess.method, 0),
        "predicted_credits": guess.credits,
        "real_credits": stats["credits"],
        "floor": guess.floor,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=BENCH_WORKLOAD.blocks, help="blocks from 0 (default: all)")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--near", action="store_true", help="no latency, no credit budget (pieces in several calls)")
    args = parser.parse_args(argv)
    settings = NEAR if args.near else INFURA
    how = "with no latency nor budget" if args.near else "with Infura's limits"
    print(f"benchmark chain: {BENCH_WORKLOAD.blocks} blocks behind the gateway {how}", flush=True)
    rows = []
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        blocks = f"0:{min(args.blocks, devnet.truth.head + 1) - 1}"
        for dataset in args.datasets.split(","):
            rows.append(measure(devnet, dataset, blocks, settings))
            r = rows[-1]
            print(
                f"{dataset:<16} calls predicted {r['predicted_calls']:>7,} real {r['real_calls']:>7,} "
                f"({r['method_calls']:,} {'of the method'}; off {_off(r['predicted_calls'], r['real_calls']):.1%})   "
                f"credits predicted {r['predicted_credits']:>9,} real {r['real_credits']:>9,} "
                f"(off {_off(r['predicted_credits'], r['real_credits']):.1%})",
                flush=True,
            )
    worst = max(max(_off(r["predicted_calls"], r["real_calls"]), _off(r["predicted_credits"], r["real_credits"]))
                for r in rows)  # fmt: skip
    print(f"worst: {worst:.1%} off (tolerance {TOLERANCE:.0%})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
