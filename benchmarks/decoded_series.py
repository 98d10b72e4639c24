"""What decoding a contract's calls and events costs in an extraction: ``extract transactions`` and ``extract logs``
plain (logs: the same logs, by their topic 0), against the same with ``--abi`` (the Token contract's ABI: its
functions' calls kept and decoded from the transactions, its events' logs fetched and decoded), on the benchmark
chain (issue 39 asks for at most 1.2x).

Each round extracts every case into a fresh folder, in turn, so load on a shared machine falls on all of them alike;
the figures are medians over the rounds (after one round of warm-up, imports included, left out): wall seconds and
this process's CPU seconds (the node is another process).

Run: ``scripts/bench decoded_series`` (add ``--rounds N``). Prints a table; exit code 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chainframe
import chainframe.devnet
from chainframe.decode import events_from_abi
from chainframe.devnet import BENCH_WORKLOAD, Devnet

ARTIFACTS = Path(chainframe.devnet.__file__).parent / "contracts" / "artifacts.json"


def _timed(**options: Any) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as out:
        wall, cpu = time.perf_counter(), time.process_time()
        report = chainframe.extract(out=out, progress=False, **options)
        rows = sum(d["rows"] for d in report.datasets.values())
        return time.perf_counter() - wall, time.process_time() - cpu, rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of every case (medians)")
    args = parser.parse_args(argv)
    abi = json.loads(ARTIFACTS.read_text())["contracts"]["Token"]["abi"]
    topics = ["0x" + e.topic0.hex() for e in events_from_abi(abi)]  # the same logs, raw
    print(f"benchmark chain: {BENCH_WORKLOAD.blocks} blocks (built once, then cached)", flush=True)
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        common = {"blocks": "0:latest", "rpc": devnet.http_url}
        cases = {
            "transactions": {"datasets": ["transactions"]},
            "transactions --abi Token": {"datasets": ["transactions"], "function": abi},
            "logs --topic0 Token's": {"datasets": ["logs"], "topics": [topics]},
            "logs --abi Token": {"datasets": ["logs"], "event": abi},
        }
        figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in cases}
        for round_ in range(args.rounds + 1):
            for name, options in cases.items():
                timed = _timed(**common, **options)
                if round_:
                    figures[name].append(timed)
    print(f"\n{'case':<28}{'rows':>10}{'wall s':>10}{'cpu s':>10}{'wall x':>9}{'cpu x':>8}")
    for name, runs in figures.items():
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        plain = figures[next(iter(figures)) if name.startswith("transactions") else "logs --topic0 Token's"]
        base_wall, base_cpu = statistics.median(r[0] for r in plain), statistics.median(r[1] for r in plain)
        print(f"{name:<28}{runs[0][2]:>10,}{wall:>10.2f}{cpu:>10.2f}{wall / base_wall:>9.2f}{cpu / base_cpu:>8.2f}")


if __name__ == "__main__":
    main()
