"""erc20_balances on the test devnet chain: rows per second through anvil and through the gateway, and of the
transform alone (the part that is ours; the rest is the node executing balanceOf).

``python -m benchmarks.erc20 [--rounds R]``: the workload's tokens (Token and every token it creates) x the ten dev
accounts at every block, collected in memory; the best of R rounds kept.
"""

from __future__ import annotations

import argparse
import time

import anyio
import httpx

import chainframe as cf
from chainframe.datasets import DATASETS, BlockRange
from chainframe.devnet import DEV_ACCOUNTS, Devnet
from chainframe.rpc import AsyncClient


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each measurement (default: 3)")
    args = parser.parse_args(argv)
    with Devnet() as devnet:
        truth = devnet.truth
        created = [t.hash for t in truth.txs if t.kind == "create_token"]
        asked = [
            {"jsonrpc": "2.0", "id": i, "method": "eth_getTransactionReceipt", "params": [h]}
            for i, h in enumerate(created)
        ]
        receipts = sorted(httpx.post(devnet.node.url, json=asked).json(), key=lambda a: a["id"])
        tokens = [truth.contracts["Token"], *(r["result"]["contractAddress"] for r in receipts)]
        holders = list(DEV_ACCOUNTS)
        blocks = f"0:{truth.head}"
        print(f"erc20_balances: {len(tokens)} tokens x {len(holders)} holders, blocks {blocks}, best of {args.rounds}")
        for label, url in (("anvil", devnet.node.url), ("gateway", devnet.http_url)):
            best = float("inf")
            for _ in range(args.rounds):
                started = time.perf_counter()
                table = cf.collect("erc20_balances", blocks=blocks, rpc=url, tokens=tokens, addresses=holders,
                                   progress=False)  # fmt: skip
                best = min(best, time.perf_counter() - started)
            print(f"  via {label:<8} {table.num_rows:>8,} rows  {best:6.2f} s  {table.num_rows / best:>10,.0f} rows/s")

        async def fetch() -> list[bytes]:
            async with AsyncClient(devnet.node.url) as client:
                dataset = DATASETS["erc20_balances"]
                return await dataset.fetch(client, BlockRange(0, truth.head), tokens=tokens, addresses=holders)

        bodies = anyio.run(fetch)
        for u256 in ("decimal", "binary"):
            best = float("inf")
            for _ in range(args.rounds):
                started = time.perf_counter()
                table = DATASETS["erc20_balances"].transform(bodies, chain_id=truth.chain_id, u256=u256)
                best = min(best, time.perf_counter() - started)
            rate = table.num_rows / best
            print(f"  transform {u256:<7} {table.num_rows:>8,} rows  {best:6.3f} s  {rate:>10,.0f} rows/s")


if __name__ == "__main__":
    main()
