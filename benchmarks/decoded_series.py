"""What decoding a contract's calls and events costs in an extraction: ``extract transactions``, ``extract traces``
and ``extract logs`` plain (logs: the same logs, by their topic 0), against the same with ``--abi`` (``abi=``: the
Token contract's ABI, one series per function and event: its functions' calls kept and decoded from the transactions
and from the traces, its events' logs fetched and decoded), on the benchmark chain (issue 39 asks for at most 1.2x:
the last line, the three together).

Each round extracts every case into a fresh folder, in turn, so load on a shared machine falls on all of them alike;
the figures are medians over the rounds (after one round of warm-up, imports included, left out): wall seconds and
this process's CPU seconds (the node is another process).

With ``--memory``, each case also runs in a process of its own over the first half of the chain, over all of it, and
over all of it three times in a row (each into a fresh folder: as a range three times as long would read it), and its
peak RSS is printed (the process's VmHWM). The peak is reached within the first run, as the allocators (Python's,
Polars', the C decoder's) grow to what a chunk in flight needs: a peak that grew with the range read would grow
again with the second and third run; memory bounded by the chunk shows as the same peak for all and for three
times all. (Half the chain may hold fewer chunks than the run reads at once, so its peak can be lower.)

Run: ``scripts/bench decoded_series`` (add ``--rounds N``, ``--memory``). Prints a table; exit code 0 whatever the
figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
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


_CHILD = """
import json, sys, tempfile
import chainframe
options, runs = json.loads(sys.argv[1]), int(sys.argv[2])
for _ in range(runs):
    with tempfile.TemporaryDirectory() as out:
        chainframe.extract(out=out, progress=False, **options)
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def _peak_mb(options: dict[str, Any], runs: int = 1) -> float:
    """The peak RSS (MB) of a process that runs ``extract(**options)`` alone, ``runs`` times in a row: its own
    high-water mark (VmHWM, which exec starts afresh; wait4's ru_maxrss counts the forking parent's pages too)."""
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(options), str(runs)], capture_output=True,
                          text=True, timeout=1200, check=False)  # fmt: skip
    if done.returncode:
        raise SystemExit(f"the memory run of {options.get('datasets')} failed: {done.stderr[-2000:]}")
    return int(done.stdout.split()[-1]) / 1024  # kB


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of every case (medians)")
    parser.add_argument(
        "--memory", action="store_true", help="each case's peak RSS: half the chain, all of it, all of it three times"
    )
    args = parser.parse_args(argv)
    abi = json.loads(ARTIFACTS.read_text())["contracts"]["Token"]["abi"]
    topics = ["0x" + e.topic0.hex() for e in events_from_abi(abi)]  # the same logs, raw
    print(f"benchmark chain: {BENCH_WORKLOAD.blocks} blocks (built once, then cached)", flush=True)
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        common = {"blocks": "0:latest", "rpc": devnet.http_url}
        cases = {
            "transactions": {"datasets": ["transactions"]},
            "transactions --abi Token": {"datasets": ["transactions"], "abi": abi},
            "traces": {"datasets": ["traces"]},
            "traces --abi Token": {"datasets": ["traces"], "abi": abi},
            "logs --topic0 Token's": {"datasets": ["logs"], "topics": [topics]},
            "logs --abi Token": {"datasets": ["logs"], "abi": abi},
        }
        figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in cases}
        for round_ in range(args.rounds + 1):
            for name, options in cases.items():
                timed = _timed(**common, **options)
                if round_:
                    figures[name].append(timed)
        peaks: dict[str, tuple[float, ...]] = {}
        if args.memory:
            half = {**common, "blocks": f"0:{BENCH_WORKLOAD.blocks // 2}"}
            for name, options in cases.items():
                peaks[name] = (_peak_mb({**half, **options}), _peak_mb({**common, **options}),
                               _peak_mb({**common, **options}, runs=3))  # fmt: skip
    print(f"\n{'case':<28}{'rows':>10}{'wall s':>10}{'cpu s':>10}{'wall x':>9}{'cpu x':>8}")
    medians = {name: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), runs[0][2])
               for name, runs in figures.items()}  # fmt: skip
    totals = {True: [0.0, 0.0], False: [0.0, 0.0]}  # decoded, raw: the sums of the three datasets' medians
    for name, (wall, cpu, rows) in medians.items():
        base_wall, base_cpu, _ = medians[next(n for n in medians if n.split()[0] == name.split()[0])]  # its raw case
        totals["--abi" in name][0] += wall
        totals["--abi" in name][1] += cpu
        peak = " ".join(f"{mb:,.0f}" for mb in peaks.get(name, ()))
        print(f"{name:<28}{rows:>10,}{wall:>10.2f}{cpu:>10.2f}{wall / base_wall:>9.2f}{cpu / base_cpu:>8.2f}"
              + (f"   peak RSS MB, half / all / 3x all: {peak}" if peak else ""))  # fmt: skip
    (wall, cpu), (base_wall, base_cpu) = totals[True], totals[False]
    print(f"{'all three decoded / raw':<38}{wall:>10.2f}{cpu:>10.2f}{wall / base_wall:>9.2f}{cpu / base_cpu:>8.2f}")


if __name__ == "__main__":
    main()
