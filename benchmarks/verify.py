"""What verification costs beside extraction, on the same data, in one run: wall time, ratios and peak memory.

On the benchmark chain (``--chain bench``, 2,000 blocks, about 300,000 logs; ``--chain test`` for the small devnet
chain), blocks, transactions, receipts and logs, each run in a fresh process (so its peak RSS is its own), the
extractions interleaved round by round so that all see the same machine; the least wall time of ``--repeat`` rounds:

- ``extract``: the four datasets into a fresh folder, no verification (the baseline of every ratio);
- ``extract --verify``: the same, every piece proven before it is kept (the four datasets of each slot proven
  together from their own rows: nothing fetched beyond a plain extraction's calls);
- ``verify DIR``: the folder proven offline against its stored headers;
- ``verify DIR --rpc``: the folder proven against the node's headers and receipts (``--rpc`` to include it);
- the two verifying ways again over the first half of the range: peak RSS must not grow with the range.

``--datasets receipts,logs`` (say) runs the same table for a part of the four: what a run that extracts less pays for
proofs that read what it does not extract (the blocks' headers and transactions, fetched for its proofs only).

Targets (issue 26): ``extract --verify`` at most 1.3x ``extract``, offline ``verify`` at most 0.5x, peak RSS under
500 MB and flat when the range doubles.

Run: ``scripts/bench verify`` (``--repeat N``, ``--chain test``, ``--rpc``, ``--datasets A,B``). Prints a table;
exit code 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MAIN = ["blocks", "transactions", "receipts", "logs"]
TARGETS = {"extract --verify": 1.3, "verify DIR (offline)": 0.5}


def child(mode: str, url: str, blocks: str, out: str, datasets: str) -> None:
    """One run in this process: prints ``{"seconds", "cpu_seconds", "peak_rss_mb", "rows"}`` (seconds after imports)."""
    from chainframe.engine import extract, verify_stored
    from chainframe.verify import verify_folder

    names = datasets.split(",")
    start = time.perf_counter()
    rows = 0
    if mode in ("extract", "extract --verify"):
        report = extract(names, blocks=blocks, rpc=url, out=out, progress=False, verify=mode == "extract --verify")
        rows = sum(int(v["rows"]) for v in report.datasets.values())
    else:
        found = verify_folder(out) if mode == "verify DIR (offline)" else verify_stored(out, rpc=url)
        assert found.ok, found.failures[:3]
        rows = sum(found.rows_verified.get(name, 0) for name in names)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime,
                      "peak_rss_mb": usage.ru_maxrss / 1024, "rows": rows}))  # fmt: skip


def _node_cpu(pid: int) -> float:
    """CPU seconds the node process has used so far (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run(mode: str, url: str, blocks: str, out: Path, node: int, datasets: list[str]) -> dict[str, Any]:
    """One run in a fresh process; with the node's CPU seconds it took (the node serves nothing else meanwhile)."""
    before = _node_cpu(node)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.verify", "--child", mode, url, blocks, str(out), ",".join(datasets)],
        capture_output=True, text=True, check=False, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"{mode} {blocks} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["node_cpu_seconds"] = _node_cpu(node) - before
    return result


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return min(runs, key=lambda r: r["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2, help="rounds; the least wall time is shown")
    parser.add_argument("--chain", choices=("bench", "test"), default="bench")
    parser.add_argument("--rpc", action="store_true", help="also time verify DIR --rpc")
    parser.add_argument("--datasets", default=",".join(MAIN), help="the datasets extracted (default: %(default)s)")
    parser.add_argument(
        "--child", nargs=5, metavar=("MODE", "URL", "BLOCKS", "OUT", "DATASETS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    from chainframe.devnet import BENCH_WORKLOAD, TEST_WORKLOAD, Devnet

    names = args.datasets.split(",")
    unknown = sorted(set(names) - set(MAIN))
    if unknown:
        parser.error(f"--datasets: {', '.join(unknown)} not among {', '.join(MAIN)}")
    workload = BENCH_WORKLOAD if args.chain == "bench" else TEST_WORKLOAD
    with Devnet(workload=workload) as devnet, tempfile.TemporaryDirectory() as tmp:
        url, head, node = devnet.node.url, devnet.truth.head, devnet.node.pid
        full, half = f"0:{head}", f"0:{head // 2}"
        runs: dict[str, list[dict[str, Any]]] = {}
        folder = {"full": Path(tmp) / "plain-full", "half": Path(tmp) / "plain-half"}
        for i in range(args.repeat):
            for mode in ("extract", "extract --verify"):
                out = folder["full"] if mode == "extract" and i == 0 else Path(tmp) / f"{mode}-{i}".replace(" ", "")
                runs.setdefault(mode, []).append(_run(mode, url, full, out, node, names))
            modes = ["verify DIR (offline)"] + (["verify DIR --rpc"] if args.rpc else [])
            for mode in modes:
                runs.setdefault(mode, []).append(_run(mode, url, full, folder["full"], node, names))
        _run("extract", url, half, folder["half"], node, names)
        halves = {
            "extract --verify": _run("extract --verify", url, half, Path(tmp) / "verified-half", node, names),
            "verify DIR (offline)": _run("verify DIR (offline)", url, half, folder["half"], node, names),
        }
        best = {mode: _best(r) for mode, r in runs.items()}
        base = best["extract"]["seconds"]
        rows = best["extract"]["rows"]
        print(f"{args.chain} chain: blocks {full}, {rows:,} rows of {', '.join(names)} (best of {args.repeat} rounds,")
        print("each run its own process; wall seconds after imports; CPU-s: the run's process, then the node's)")
        for mode, r in best.items():
            target = f"  (target {TARGETS[mode]}x)" if mode in TARGETS else ""
            half_rss = f", {halves[mode]['peak_rss_mb']:.0f} MB over half" if mode in halves else ""
            print(
                f"  {mode:<22} {r['seconds']:>7.2f} s {r['seconds'] / base:>6.2f}x extract{target:<17}"
                f" {r['cpu_seconds']:>5.1f} + node {r['node_cpu_seconds']:>4.1f} CPU-s"
                f"  peak RSS {r['peak_rss_mb']:>4.0f} MB{half_rss}"
            )


if __name__ == "__main__":
    main()
