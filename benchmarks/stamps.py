"""What judging an answer's block timestamps costs: the benchmark chain's eth_getLogs answers (blocks 1..2000 in
8-block spans, as a local run asks them, about 175 MB) and eth_getBlockReceipts batches (5 blocks each, about 194 MB),
fetched once from the anvil node, then judged in this process, interleaved round by round:

- ``patterns``: the baseline, ``_logs._BLOCK_NUMBER`` and ``_logs._STAMPED`` (Python's ``re``) over every answer, as
  ``with_block_timestamps`` judged them all before the count in C;
- ``native``: ``_native.block_stamps``, one pass in C (what it does now, wherever the scanner is built).

Both must count the same; prints the best and median CPU-seconds of ``--rounds`` (this process: ``time.process_time``)
and native / patterns. Run: ``scripts/bench stamps`` (``--rounds N``). Exit code 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import httpx

from chainframe.datasets._logs import _BLOCK_NUMBER, _STAMPED
from chainframe.datasets._native import block_stamps
from chainframe.devnet import BENCH_WORKLOAD, Devnet


def _patterns(body: bytes) -> tuple[int, int]:
    named = len(_BLOCK_NUMBER.findall(body))
    return named, len(_STAMPED.findall(body)) if named else 0


def _native(body: bytes) -> tuple[int, int]:
    counted = block_stamps(body)
    assert counted is not None, "the C scanner is not built (or CHAINFRAME_NATIVE=0)"
    return counted


def _answers(url: str) -> dict[str, list[bytes]]:
    def call(method: str, params: list[object], i: int = 1) -> dict[str, object]:
        return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}

    with httpx.Client(timeout=120) as client:
        logs = [
            client.post(url, json=call("eth_getLogs", [{"fromBlock": hex(a), "toBlock": hex(min(a + 7, 2000))}]))
            for a in range(1, 2001, 8)
        ]
        receipts = [
            client.post(url, json=[call("eth_getBlockReceipts", [hex(n)], n) for n in range(a, min(a + 5, 2001))])
            for a in range(1, 2001, 5)
        ]
    return {"logs": [r.content for r in logs], "receipts": [r.content for r in receipts]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        answers = _answers(devnet.node.url)
    ways: dict[str, Callable[[bytes], tuple[int, int]]] = {"patterns": _patterns, "native": _native}
    for name, bodies in answers.items():
        counts = {way: [judge(b) for b in bodies] for way, judge in ways.items()}
        assert counts["patterns"] == counts["native"], f"{name}: the counts differ"
        named, stamped = (sum(c[i] for c in counts["native"]) for i in (0, 1))
        seconds: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(args.rounds):
            for way, judge in ways.items():
                started = time.process_time()
                for body in bodies:
                    judge(body)
                seconds[way].append(time.process_time() - started)
        size = sum(map(len, bodies)) / 1e6
        print(f"{name}: {len(bodies)} answers, {size:.0f} MB, {named:,} block numbers, {stamped:,} stamps")
        for way, took in seconds.items():
            print(f"  {way:9} best {min(took):.3f} CPU-s, median {statistics.median(took):.3f}")
        ratio = min(seconds["native"]) / min(seconds["patterns"])
        print(f"  native / patterns: {ratio:.2f} (best of {args.rounds})")


if __name__ == "__main__":
    main()
