"""chainframe's ``balances`` against cryo's on the benchmark devnet chain (history kept): rows per second, in one run.

``python benchmarks/balances.py [--blocks N] [--accounts K] [--rounds R]``: the balances of K accounts (the dev
accounts that send the workload's transactions, then its contracts) at every block 1..N, read by each tool in its own
process through the gateway (runners.py; cryo in the peers' virtualenv), rounds interleaved, the best wall time after
imports kept. Prints rows/s of each and chainframe's over cryo's (above 1.0, chainframe reads more rows per second).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from benchmarks.compare import peers_python, run
from chainframe.devnet import BENCH_WORKLOAD, DEV_ACCOUNTS, Devnet


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=2000, help="blocks to read, from 1 (default: 2000)")
    parser.add_argument("--accounts", type=int, default=8, help="accounts read at each block (default: 8)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each tool, interleaved (default: 3)")
    args = parser.parse_args(argv)
    peers_python()
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        blocks = (1, min(args.blocks, devnet.truth.head))
        accounts = [*DEV_ACCOUNTS, *devnet.truth.contracts.values()][: args.accounts]
        env = {"BENCH_INPUTS": json.dumps({"addresses": accounts})}
        best: dict[str, dict[str, Any]] = {}
        for _ in range(args.rounds):
            for tool in ("chainframe", "cryo"):
                result = run(tool, "balances", devnet.http_url, blocks, env, devnet.key)
                if not result["completed"]:
                    raise SystemExit(f"{tool}: {result['error']}")
                if tool not in best or result["work_seconds"] < best[tool]["work_seconds"]:
                    best[tool] = result
    rate = {tool: r["rows"] / r["work_seconds"] for tool, r in best.items()}
    print(f"balances of {len(accounts)} accounts at blocks {blocks[0]}..{blocks[1]}, best of {args.rounds}:")
    for tool, r in best.items():
        print(f"  {tool:<11} {r['rows']:>8,} rows  {r['work_seconds']:7.2f} s  {rate[tool]:>10,.0f} rows/s  "
              f"(CPU {r['cpu_seconds']:.2f} s, peak {r['peak_rss_mb']:.0f} MB)")  # fmt: skip
    print(f"chainframe / cryo rows per second: {rate['chainframe'] / rate['cryo']:.2f}")


if __name__ == "__main__":
    main()
