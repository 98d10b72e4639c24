"""What verification costs beside extraction, on the same data, in one run: rows per second and ratios.

On the devnet chain (blocks, transactions, receipts, logs), each timed as the best of ``--repeat`` runs:

- ``extract``: the four datasets into a fresh folder, no verification (the baseline);
- ``extract --verify``: the same, every piece proven before it is kept (headers and receipts fetched beside it);
- ``verify DIR``: the folder proven offline against its stored headers;
- ``verify DIR --rpc``: the folder proven against the node's headers and receipts.

Run: ``scripts/bench verify`` (add ``--repeat N``). Prints a table; exit code 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from chainframe.devnet import Devnet
from chainframe.engine import extract, verify_stored
from chainframe.verify import verify_folder

MAIN = ["blocks", "transactions", "receipts", "logs"]


def _best(repeat: int, run: Callable[[int], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for i in range(repeat):
        start = time.perf_counter()
        result = run(i)
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is shown")
    args = parser.parse_args()
    with Devnet() as devnet, tempfile.TemporaryDirectory() as tmp:
        url = devnet.node.url

        def plain(i: int) -> Path:
            out = Path(tmp) / f"plain{i}"
            extract(MAIN, blocks="0:latest", rpc=url, out=out, progress=False)
            return out

        def verified(i: int) -> Path:
            out = Path(tmp) / f"verified{i}"
            extract(MAIN, blocks="0:latest", rpc=url, out=out, progress=False, verify=True)
            return out

        # Interleaved, so both see the same machine.
        times: dict[str, float] = {"extract": float("inf"), "extract --verify": float("inf")}
        for i in range(args.repeat):
            for name, run in (("extract", plain), ("extract --verify", verified)):
                seconds, out = _best(1, lambda _: run(i))  # noqa: B023
                times[name] = min(times[name], seconds)
        times["verify DIR (offline)"], offline = _best(args.repeat, lambda _: verify_folder(out))
        times["verify DIR --rpc"], online = _best(args.repeat, lambda _: verify_stored(out, rpc=url))
        assert offline.ok, offline.failures[:3]
        assert online.ok, online.failures[:3]
        rows = sum(pq.read_metadata(f).num_rows for f in out.rglob("*.parquet"))
        print(f"{rows:,} rows of {', '.join(MAIN)} (devnet, best of {args.repeat})")
        base = times["extract"]
        for name, seconds in times.items():
            print(f"  {name:<22} {seconds:>7.2f} s  {rows / seconds:>10,.0f} rows/s  {seconds / base:>5.2f}x extract")


if __name__ == "__main__":
    main()
