"""What keeping a dataset on the canonical chain costs, measured in one run on the benchmark devnet chain.

Rows at or below the node's finalized block need two headers per chunk; above it, every piece is bracketed by two
hash reads and every block's header is read at commit. This prints, for blocks and logs, the wall time and the
requests/calls of:
- ``final``: the blocks up to the finalized one (no block-by-block check), the baseline;
- ``to head``: the same extraction to the head, which adds the 64 unfinalized blocks and their checks;
- ``cron``: a re-run after 10 new blocks (extends the tip chunk: its rows kept, only new blocks fetched);
- ``no-op``: a re-run with nothing new (the reorg check of every series: one header per linked run of chunks);
- ``repair``: a re-run after a 5-block reorganization.
Ratios are per block fetched against ``final``. Run: ``scripts/bench living`` (``--blocks N`` to use fewer blocks).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from chainframe import extract
from chainframe.devnet import BENCH_WORKLOAD, DEV_ACCOUNTS, Devnet
from chainframe.devnet._node_rpc import NodeRPC

DATASETS = ("blocks", "logs")


def timed(devnet: Devnet, out: Path, blocks: str) -> dict[str, Any]:
    assert devnet.gateway is not None
    devnet.gateway.reset_stats()
    started = time.perf_counter()
    report = extract(list(DATASETS), blocks=blocks, out=out, rpc=devnet.http_url, progress=False)
    seconds = time.perf_counter() - started
    stats = devnet.gateway.stats()
    fetched = sum(d["blocks"] for d in report.datasets.values()) // len(DATASETS)
    return {
        "seconds": seconds,
        "requests": stats["http_requests"] + stats.get("ws_messages", 0),
        "calls": sum(stats["calls"].values()),
        # eth_getBlockByNumber calls beyond the blocks dataset's own (one per block): the chain checks.
        "headers": stats["calls"].get("eth_getBlockByNumber", 0) - fetched,
        "blocks": fetched,
        "rows": sum(d["rows"] for d in report.datasets.values()),
        "reorgs": len(report.reorgs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    rows: list[tuple[str, dict[str, Any]]] = []
    with Devnet(workload=BENCH_WORKLOAD) as devnet, tempfile.TemporaryDirectory() as tmp:
        node = NodeRPC(devnet.node.url)
        head = devnet.truth.head
        finalized = int(node.call("eth_getBlockByNumber", "finalized", False)["number"], 16)
        timed(devnet, Path(tmp) / "warm-up", "0:99")  # imports and first-use costs out of the baseline
        rows.append(("final", timed(devnet, Path(tmp) / "final", f"0:{finalized}")))
        out = Path(tmp) / "live"
        rows.append(("to head", timed(devnet, out, "0:latest")))
        node.call("anvil_mine", hex(10))
        rows.append(("cron", timed(devnet, out, "0:latest")))
        rows.append(("no-op", timed(devnet, out, "0:latest")))
        transfer = {"from": DEV_ACCOUNTS[0], "to": DEV_ACCOUNTS[1], "value": "0x1"}
        node.call("anvil_reorg", 5, [[transfer, 0]])
        rows.append(("repair", timed(devnet, out, "0:latest")))
        node.close()
    base = rows[0][1]
    base_per_block = base["seconds"] / max(base["blocks"], 1)
    print(f"benchmark chain: head {head}, finalized {finalized}; datasets {', '.join(DATASETS)}")
    columns = [("blocks", 7), ("seconds", 8), ("requests", 9), ("calls", 7), ("check calls", 12)]
    columns.append(("s/block vs final", 17))
    print(f"{'run':<8} " + " ".join(f"{name:>{width}}" for name, width in columns))
    for name, r in rows:
        ratio = (r["seconds"] / max(r["blocks"], 1)) / base_per_block if r["blocks"] else float("nan")
        print(
            f"{name:<8} {r['blocks']:>7,} {r['seconds']:>8.2f} {r['requests']:>9,} {r['calls']:>7,} "
            f"{r['headers']:>12,} {ratio:>16.2f}x" + (f"  ({r['reorgs']} series repaired)" if r["reorgs"] else "")
        )
    extra = rows[1][1]["calls"] - base["calls"]
    print(
        f"checks above finalized: the {head - finalized} unfinalized blocks cost {extra:,} more calls than the "
        f"{finalized + 1:,} final ones"
    )


if __name__ == "__main__":
    main()
