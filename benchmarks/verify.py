"""Verification throughput beside extraction's, on the same data: rows per second and their ratio.

Extracts blocks, transactions, receipts and logs of the whole devnet chain into a temporary folder (timed), then
verifies the folder (timed: reading the Parquet files, and the checks on the tables in memory separately).

Run: ``scripts/bench verify`` (add ``--repeat N``). Prints a table; exit code 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from chainframe.devnet import Devnet
from chainframe.engine import extract
from chainframe.verify import verify_tables
from chainframe.verify._folder import DATASETS, read_folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is shown")
    args = parser.parse_args()
    with Devnet() as devnet, tempfile.TemporaryDirectory() as tmp:
        extract_best = read_best = check_best = float("inf")
        for i in range(args.repeat):
            out = Path(tmp) / f"run{i}"
            start = time.perf_counter()
            extract(list(DATASETS), blocks="0:latest", rpc=devnet.http_url, out=out)
            extract_best = min(extract_best, time.perf_counter() - start)
        for _ in range(args.repeat):
            start = time.perf_counter()
            tables = {name: read_folder(out, name) for name in DATASETS}
            read_best = min(read_best, time.perf_counter() - start)
            start = time.perf_counter()
            report = verify_tables(**tables)
            check_best = min(check_best, time.perf_counter() - start)
        assert report.ok, report.failures[:5]
        rows = sum(t.num_rows for t in tables.values() if t is not None)
        print(f"{rows:,} rows ({', '.join(f'{n} {t.num_rows:,}' for n, t in tables.items() if t is not None)})")
        print(f"{'extract (devnet, all 4 datasets)':<36} {rows / extract_best:>12,.0f} rows/s")
        print(f"{'verify: checks in memory':<36} {rows / check_best:>12,.0f} rows/s")
        print(f"{'verify: read folder + checks':<36} {rows / (read_best + check_best):>12,.0f} rows/s")
        print(f"ratio verify (read + checks) / extract: {extract_best / (read_best + check_best):.1f}x")


if __name__ == "__main__":
    main()
