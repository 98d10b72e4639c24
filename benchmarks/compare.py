"""chainframe against cryo, a naive web3.py export and the raw-fetch floor, on the benchmark devnet chain.

For each mode and dataset, each tool extracts the same blocks from the same node, in its own process:
- local: straight to the anvil node;
- remote: through the gateway with Infura-like conditions: added latency per request, the 10,000-result limit on
  eth_getLogs, and a credits-per-second budget (chainframe is told the budget, as a user would tell it their plan).
Reported per tool: completed or not, wall time of the whole process and after the tool's imports (what a warm
notebook sees), rows/s, peak RSS, and (remote) the requests the gateway saw. Then ratios (chainframe / cryo,
chainframe / raw), and peak RSS of chainframe with the range doubled.

Run: ``scripts/bench compare`` (``--blocks N``, ``--modes local,remote``, ``--datasets ...``). Results are printed and
saved as JSON and markdown under ``bench-results/``. The first run builds and caches the benchmark chain (~40 s) and
a virtualenv for the peers (cryo, web3.py, pandas).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

from chainframe._redact import redact_text
from chainframe.devnet import BENCH_WORKLOAD, Devnet, GatewaySettings, LogLimits

ROOT = Path(__file__).resolve().parents[1]
PEERS_VENV = ROOT / ".venv-peers"
PEERS = ("cryo==0.3.2", "web3==8.0.0", "pandas==3.1.1", "pyarrow==26.0.1")
TOOLS = {
    "blocks": ("chainframe", "cryo", "raw"),
    "transactions": ("chainframe", "cryo", "raw"),
    "receipts": ("chainframe", "raw"),  # cryo has no receipts dataset
    "logs": ("chainframe", "cryo", "raw", "web3"),
}
REMOTE = GatewaySettings(latency=0.05, limits=LogLimits(max_results=10_000), credits_per_second=40_000.0)
TIMEOUT = 900.0
PEERS_SHOWN = ("cryo", "raw", "web3")


def peers_python() -> Path:
    python = PEERS_VENV / "bin" / "python"
    stamp = PEERS_VENV / ".peers"
    if stamp.is_file() and stamp.read_text() == "\n".join(PEERS):
        return python
    print(f"setting up {PEERS_VENV.name} with {', '.join(PEERS)}...", flush=True)
    venv.create(PEERS_VENV, with_pip=True, clear=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *PEERS], check=True)
    stamp.write_text("\n".join(PEERS))
    return python


def run(tool: str, dataset: str, url: str, blocks: tuple[int, int], env: dict[str, str], key: str) -> dict[str, Any]:
    python = str(peers_python()) if tool in ("cryo", "web3") else sys.executable
    with tempfile.TemporaryDirectory() as out:
        argv = [python, str(ROOT / "benchmarks" / "runners.py"), tool, dataset, url, *map(str, blocks), out]
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={**os.environ, **env}, cwd=ROOT
        )
        try:
            output, _ = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            return {"completed": False, "error": f"timeout after {TIMEOUT:.0f} s"}
        seconds = time.perf_counter() - started
    line = output.strip().splitlines()[-1] if output.strip() else "{}"
    result = json.loads(line)
    if "error" in result or proc.returncode != 0:
        return {"completed": False, "error": redact_text(result.get("error", f"exit {proc.returncode}"), key)}
    return {
        "completed": True,
        "seconds": round(seconds, 3),
        "work_seconds": result["work_seconds"],
        "rows": result["rows"],
        "peak_rss_mb": result["peak_rss_mb"],
    }


def measure(mode: str, devnet: Devnet, datasets: list[str], blocks: tuple[int, int]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    url = devnet.node.url if mode == "local" else devnet.http_url
    env = {"BENCH_CREDITS_PER_SECOND": str(REMOTE.credits_per_second)} if mode == "remote" else {}
    for dataset in datasets:
        for tool in TOOLS[dataset]:
            if devnet.gateway is not None:
                devnet.gateway.configure(REMOTE if mode == "remote" else GatewaySettings())
                devnet.gateway.reset_stats()
            result = run(tool, dataset, url, blocks, env, devnet.key)
            if mode == "remote" and devnet.gateway is not None:
                stats = devnet.gateway.stats()
                result["requests"] = stats["http_requests"]
                result["calls"] = sum(stats["calls"].values())
                result["rate_limited"] = stats["rate_limited"]
            row = {"mode": mode, "dataset": dataset, "tool": tool, **result}
            rows.append(row)
            print(_line(row), flush=True)
    return rows


def _line(row: dict[str, Any]) -> str:
    if not row["completed"]:
        return f"{row['mode']:<7}{row['dataset']:<13}{row['tool']:<11} did not complete: {row['error'][:90]}"
    rate = f"{row['rows'] / row['seconds']:>12,.0f}/s" if row["rows"] >= 0 else f"{'(bytes)':>14}"
    extra = f"  {row['requests']:>6} requests" if "requests" in row else ""
    return (
        f"{row['mode']:<7}{row['dataset']:<13}{row['tool']:<11}{row['seconds']:>8.2f} s "
        f"({row['work_seconds']:>6.2f} s after imports) {rate} {row['peak_rss_mb']:>8.0f} MB{extra}"
    )


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    done = {(r["mode"], r["dataset"], r["tool"]): r for r in rows if r["completed"]}
    for (mode, dataset, tool), r in done.items():
        if tool != "chainframe":
            continue
        entry: dict[str, Any] = {"mode": mode, "dataset": dataset}
        for other in ("cryo", "raw", "web3"):
            peer = done.get((mode, dataset, other))
            entry[f"vs_{other}"] = round(r["seconds"] / peer["seconds"], 2) if peer else None
            entry[f"vs_{other}_work"] = round(r["work_seconds"] / peer["work_seconds"], 2) if peer else None
        out.append(entry)
    return out


def markdown(rows: list[dict[str, Any]], table: list[dict[str, Any]], memory: dict[str, Any]) -> str:
    lines = [
        "| mode | dataset | tool | completed | seconds | after imports | rows/s | peak RSS MB | requests |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["completed"]:
            rate = f"{r['rows'] / r['seconds']:,.0f}" if r["rows"] >= 0 else "-"
            lines.append(
                f"| {r['mode']} | {r['dataset']} | {r['tool']} | yes | {r['seconds']:.2f} | {r['work_seconds']:.2f} | "
                f"{rate} | {r['peak_rss_mb']:.0f} | {r.get('requests', '-')} |"
            )
        else:
            failed = f"no: {r['error'][:60]}"
            lines.append(
                f"| {r['mode']} | {r['dataset']} | {r['tool']} | {failed} | | | | | {r.get('requests', '-')} |"
            )
    lines += [
        "",
        "Ratios of wall time, whole process (after imports in brackets); below 1.0, chainframe is faster:",
        "",
        "| mode | dataset | chainframe / cryo | chainframe / raw | chainframe / web3 |",
        "|---|---|---|---|---|",
    ]
    for t in table:
        cells = [f"{t[f'vs_{o}']} ({t[f'vs_{o}_work']})" if t[f"vs_{o}"] is not None else "-" for o in PEERS_SHOWN]
        lines.append(f"| {t['mode']} | {t['dataset']} | " + " | ".join(cells) + " |")
    lines += ["", f"chainframe logs peak RSS: {memory}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=2000, help="blocks to extract, from 1 (default: 2000)")
    parser.add_argument("--modes", default="local,remote")
    parser.add_argument("--datasets", default="logs,blocks,transactions,receipts")
    args = parser.parse_args(argv)
    peers_python()
    datasets = args.datasets.split(",")
    print(f"benchmark chain: {BENCH_WORKLOAD.blocks} blocks (built once, then cached)", flush=True)
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        last = min(args.blocks, devnet.truth.head)
        blocks = (1, last)
        print(f"blocks {blocks[0]}..{blocks[1]}: {sum(devnet.truth.txs_per_block()[1:last + 1]):,} txs, "
              f"{sum(devnet.truth.logs_per_block()[1:last + 1]):,} logs\n", flush=True)  # fmt: skip
        rows = [r for mode in args.modes.split(",") for r in measure(mode, devnet, datasets, blocks)]
        half = (1, max(1, last // 2))
        memory = {
            f"{half[1]} blocks": run("chainframe", "logs", devnet.node.url, half, {}, devnet.key).get("peak_rss_mb"),
            f"{last} blocks": run("chainframe", "logs", devnet.node.url, blocks, {}, devnet.key).get("peak_rss_mb"),
        }
    table = ratios(rows)
    print("\nratios of wall time, whole process (after imports); below 1.0, chainframe is faster")
    for t in table:
        cells = "  ".join(f"vs {o} {t[f'vs_{o}']} ({t[f'vs_{o}_work']})" for o in PEERS_SHOWN)
        print(f"  {t['mode']:<7}{t['dataset']:<13} {cells}")
    print(f"\nchainframe logs, peak RSS with the range doubled: {memory}")
    results = ROOT / "bench-results"
    results.mkdir(exist_ok=True)
    (results / "compare.json").write_text(json.dumps({"rows": rows, "ratios": table, "memory": memory}, indent=2))
    (results / "compare.md").write_text(markdown(rows, table, memory))
    print(f"saved {results / 'compare.json'} and {results / 'compare.md'}")


if __name__ == "__main__":
    main()
