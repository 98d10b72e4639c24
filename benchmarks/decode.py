"""Decode throughput: real answer bytes from the devnet node -> typed Arrow tables, rows per second.

Compares, in the same run and on the same bytes:
- chainframe: ``dataset.transform`` (the native scanner: answer bytes to Arrow buffers), on 1 and on 2 worker threads;
- pure: the same with ``CHAINFRAME_NATIVE=0`` (Polars' JSON reader + vectorized hex conversion), the fallback;
- baseline: ``json.loads`` then per-row Python into Arrow (what a hand-written exporter does);
- parse only: Polars' JSON reader alone (the floor for any decoder built on it).

And the native scanner alone: the answers' megabytes it reads per CPU-second (``--scanner`` prints only these).

Run: ``scripts/bench decode`` (add ``--repeat N``, ``--scanner``, and ``--bench-chain`` for the guide's chain: 175
MB of logs answers). Prints a table; exit code 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import polars as pl
import pyarrow as pa

from benchmarks import best_rate
from chainframe.datasets import LOGS, RECEIPTS, TRANSACTIONS, BlockRange, Dataset
from chainframe.datasets._objects import ObjectDataset
from chainframe.devnet import BENCH_WORKLOAD, TEST_WORKLOAD, Devnet, GatewaySettings, LogLimits
from chainframe.rpc import AsyncClient


def _fetch(devnet: Devnet) -> dict[str, list[bytes]]:
    head = devnet.truth.head

    async def main() -> dict[str, list[bytes]]:
        async with AsyncClient(devnet.node.url, batch_size=40) as client:
            # Logs in answers of about Infura's 10,000-result cap, as a real extraction would receive them.
            halves = [BlockRange(0, head // 2), BlockRange(head // 2 + 1, head)]
            logs = [b for r in halves for b in await LOGS.fetch(client, r)]
            everything = BlockRange(0, head)
            return {
                "logs": logs,
                "receipts": await RECEIPTS.fetch(client, everything),
                "transactions": await TRANSACTIONS.fetch(client, everything),
            }

    return anyio.run(main)


def _naive(dataset: Dataset, bodies: Sequence[bytes]) -> pa.Table:
    """The usual hand-written path: parse to Python objects, convert field by field, build Arrow from rows."""
    rows: list[dict[str, Any]] = []
    for body in bodies:
        answer = json.loads(body)
        results = answer["result"] if isinstance(answer, dict) else [a["result"] for a in answer]
        if dataset is TRANSACTIONS:
            items = [tx for block in results for tx in block["transactions"]]
        elif dataset is RECEIPTS:
            items = [r for block in results for r in block]
        else:
            items = results
        for item in items:
            rows.append(
                {
                    k: (int(v, 16) if k.endswith(("Number", "Index", "gas", "Gas", "nonce", "type")) else v)
                    if isinstance(v, str)
                    else v
                    for k, v in item.items()
                    if k != "logs"
                }
            )
    return pa.Table.from_pylist(rows)


def _parse_only(bodies: Sequence[bytes]) -> None:
    for body in bodies:
        pl.read_json(io.BytesIO(body))


def _threads(dataset: Dataset, bodies: Sequence[bytes], workers: int, rounds: int) -> Callable[[], None]:
    """``rounds`` chunks per worker, each chunk all the bodies: as the engine decodes chunks while it fetches."""
    chunks = [list(bodies)] * (workers * rounds)

    def run() -> None:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(lambda chunk: dataset.transform(chunk, chain_id=31337), chunks))

    return run


def _pure(dataset: Dataset, bodies: Sequence[bytes]) -> None:
    os.environ["CHAINFRAME_NATIVE"] = "0"
    try:
        dataset.transform(bodies, chain_id=31337)
    finally:
        del os.environ["CHAINFRAME_NATIVE"]


def _scanner_cpu(dataset: ObjectDataset, bodies: Sequence[bytes], repeat: int) -> float:
    """CPU-seconds of the native scan of ``bodies`` alone (no table built), best of ``repeat``."""
    kinds = dataset.native_kinds("decimal")
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        scanned = dataset.scan_answers(bodies, kinds)
        best = min(best, time.process_time() - started)
        assert scanned is not None, "the scanner declined a benchmark answer"
    return best


def _print_scanner(answers: dict[str, list[bytes]], repeat: int) -> None:
    print(f"\n{'scanner':<13}{'MB':>7}{'CPU-s':>8}{'MB/s':>8}")
    for name, dataset in (("logs", LOGS), ("receipts", RECEIPTS), ("transactions", TRANSACTIONS)):
        megabytes = sum(len(b) for b in answers[name]) / 1e6
        cpu = _scanner_cpu(dataset, answers[name], repeat)
        print(f"{name:<13}{megabytes:>7.1f}{cpu:>8.3f}{megabytes / cpu:>8,.0f}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="best of N runs per figure")
    parser.add_argument("--scanner", action="store_true", help="only the native scanner's figures")
    parser.add_argument(
        "--bench-chain", action="store_true", help="the benchmark chain (the guide's figures), not the dev one"
    )
    args = parser.parse_args(argv)
    print("starting the devnet and fetching answer bytes...")
    workload = BENCH_WORKLOAD if args.bench_chain else TEST_WORKLOAD
    with Devnet(workload=workload, settings=GatewaySettings(limits=LogLimits(max_results=100_000))) as devnet:
        answers = _fetch(devnet)
    _print_scanner(answers, args.repeat)
    if args.scanner:
        return
    print(f"\n{'dataset':<13}{'rows':>8}{'MB':>7} {'chainframe':>12} {'2 threads':>12} {'pure':>12} {'baseline':>12} "
          f"{'parse only':>12} {'vs pure':>8} {'vs baseline':>12}")  # fmt: skip
    for name, dataset in (("logs", LOGS), ("receipts", RECEIPTS), ("transactions", TRANSACTIONS)):
        bodies = answers[name]
        rows = dataset.transform(bodies, chain_id=31337).num_rows
        megabytes = sum(len(b) for b in bodies) / 1e6
        ours = best_rate(lambda d=dataset, b=bodies: d.transform(b, chain_id=31337), rows, args.repeat)
        two = best_rate(_threads(dataset, bodies, 2, 3), rows * 6, args.repeat)
        pure = best_rate(lambda d=dataset, b=bodies: _pure(d, b), rows, args.repeat)
        naive = best_rate(lambda d=dataset, b=bodies: _naive(d, b), rows, max(1, args.repeat // 2))
        parse = best_rate(lambda b=bodies: _parse_only(b), rows, args.repeat)
        print(f"{name:<13}{rows:>8}{megabytes:>7.1f} {ours:>10,.0f}/s {two:>10,.0f}/s {pure:>10,.0f}/s "
              f"{naive:>10,.0f}/s {parse:>10,.0f}/s {ours / pure:>7.1f}x {ours / naive:>11.1f}x")  # fmt: skip
    print(
        "\nrows/s = decoded rows per second, best of runs; '2 threads' decodes answers concurrently, as the "
        "extraction engine does while it fetches the next ones."
    )


if __name__ == "__main__":
    main()
