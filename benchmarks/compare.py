"""chainframe against cryo, a naive web3.py export and the raw-fetch floor, on the benchmark devnet chain.

For each mode and dataset, each tool extracts the same blocks from the same node, in its own process:
- local: straight to the anvil node;
- remote: through the gateway with Infura-like conditions: added latency per request, the 10,000-result limit on
  eth_getLogs, and a credits-per-second budget (chainframe is told the budget, as a user would tell it their plan).
Each tool runs ``--rounds`` times, interleaved with the others (order reversed every other round), and its best round
is kept: the machine is shared, so wall time is noisy; CPU time (user + sys, the least of the rounds) is steadier.
Reported per tool: completed or not, wall time of the whole process and after the tool's imports (what a warm
notebook sees), CPU-seconds (and per 100,000 logs), the CPU-seconds serving it took (anvil's, and the gateway's
remotely: on two shared cores a node's work is the tool's wait), rows/s, peak RSS, and (remote) the requests the
gateway saw. Then ratios of chainframe (the Python API) and cli (the command) to cryo and to the raw floor (wall, after
imports, CPU), and chainframe's peak RSS with the range doubled (flat: memory does not grow with the range).
Datasets that read accounts, tokens, slots or calls get the same ones in every tool (:func:`inputs`), and each tool's
rows are printed, so a ratio is between the same rows (or ``TOOLS`` says why they differ).

Run: ``scripts/bench compare`` (``--blocks N``, ``--modes local,remote``, ``--datasets ...``, ``--rounds N``).
Results are printed and saved as JSON and markdown under ``bench-results/``. The first run builds and caches the
benchmark chain (~40 s) and a virtualenv for the peers (cryo, web3.py, pandas).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import venv
from pathlib import Path
from typing import Any

from chainframe._redact import redact_text
from chainframe.devnet import BENCH_WORKLOAD, DEV_ACCOUNTS, Devnet, GatewaySettings, GroundTruth, LogLimits

ROOT = Path(__file__).resolve().parents[1]
PEERS_VENV = ROOT / ".venv-peers"
PEERS = ("cryo==0.3.2", "web3==8.0.0", "pandas==3.1.1", "pyarrow==26.0.1")
VS_CRYO = ("chainframe", "cli", "cryo")
"""The two ways of running chainframe and cryo: what most datasets are compared with."""
TOOLS = {
    "blocks": ("chainframe", "cli", "pure", "cryo", "raw"),
    "transactions": ("chainframe", "cli", "cryo", "raw"),
    "receipts": ("chainframe", "cli", "pure", "raw"),  # cryo has no receipts dataset
    "logs": ("chainframe", "cli", "pure", "cryo", "raw", "web3"),
    "traces": VS_CRYO,  # both by trace_block (ours with a no-step tracer's gas and the headers)
    "native_transfers": VS_CRYO,  # both by trace_block alone: no gas in their columns
    "contracts": VS_CRYO,
    "address_appearances": VS_CRYO,
    "erc20_transfers": VS_CRYO,  # both by eth_getLogs, Transfer's topic
    "balance_diffs": VS_CRYO,  # both by trace_replayBlockTransactions (stateDiff)
    "nonce_diffs": VS_CRYO,
    "code_diffs": VS_CRYO,
    "storage_diffs": VS_CRYO,
    # Ours counts top-level calls per block (the transactions' own fetch); cryo's, geth's 4byteTracer per transaction
    # (debug_traceBlockByNumber), calls made by contracts included: more rows by definition.
    "four_byte_counts": VS_CRYO,
    # Both by eth_getLogs, Transfer's topic, keeping four-topic logs: none on this chain (its tokens are ERC-20s),
    # so both fetch every ERC-20 Transfer and keep 0 rows.
    "erc721_transfers": VS_CRYO,
    # The state reads, per block and input (see inputs()), so the same rows in both: eth_call for the ERC-20 ones
    # (erc20_metadata: ours decodes the ABI strings, cryo reads the answer's bytes as text less control characters),
    # eth_getBalance, eth_getTransactionCount, eth_getCode and eth_getStorageAt (cryo's slots).
    "erc20_balances": VS_CRYO,
    "erc20_supplies": VS_CRYO,
    "erc20_metadata": VS_CRYO,
    "balances": VS_CRYO,
    "nonces": VS_CRYO,
    "codes": VS_CRYO,
    "slots": VS_CRYO,
    "eth_calls": VS_CRYO,
}
"""``chainframe``: the Python API (``extract``), as a notebook or a pipeline's code calls it. ``cli``: the
``chainframe extract`` command, as a cron job runs it: the installed script in its own process, which sets itself up
(:mod:`chainframe.cli._process`) before anything loads pyarrow, and leaves without an interpreter teardown. ``pure``:
chainframe with its native scanner turned off (CHAINFRAME_NATIVE=0), the Polars path every answer took before it:
the scanner's gain, measured in the same run."""
# Not here: call_traces (debug_traceCall), whose peer is cryo's trace_calls (trace_call, which anvil does not
# serve), and the datasets only one tool has (receipts, uncles, erc1155_transfers, the proofs, prestate_*).
OURS = ("chainframe", "cli")
REMOTE = GatewaySettings(latency=0.05, limits=LogLimits(max_results=10_000), credits_per_second=40_000.0)
TIMEOUT = 900.0
PEERS_SHOWN = ("pure", "cryo", "raw", "web3")


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


def inputs(dataset: str, truth: GroundTruth) -> dict[str, Any]:
    """What ``dataset`` reads besides blocks, by chainframe's names, given alike to every tool (runners.py): the
    benchmark chain's own accounts and contracts, at most 8 reads a block (16,000 over 2,000 blocks, as balances.py
    measured). Empty for the datasets that take none."""
    from chainframe.decode import keccak256

    token, store = truth.contracts["Token"], truth.contracts["Store"]
    # Three senders and the five contracts: accounts with a balance, a nonce, and (the contracts) code.
    accounts = [*DEV_ACCOUNTS[:3], *truth.contracts.values()]
    holders = list(DEV_ACCOUNTS[1:9])  # each was given tokens in block 2 and trades them after
    word = "{:064x}".format
    balance_of = ["0x70a08231" + word(int(holder, 16)) for holder in holders[:2]]
    given: dict[str, dict[str, Any]] = {
        "erc20_balances": {"tokens": [token], "addresses": holders},
        "erc20_supplies": {"tokens": [token]},
        "erc20_metadata": {"tokens": [token]},
        "balances": {"addresses": accounts},
        "nonces": {"addresses": accounts},
        "codes": {"addresses": accounts},
        # Store.slots(k) for k < 8, a mapping at slot 0 that the workload's store_set transactions write.
        "slots": {
            "addresses": [store],
            "storage_keys": ["0x" + keccak256(bytes.fromhex(word(k) + word(0))).hex() for k in range(8)],
        },
        # One contract, four call data (cryo calls every contract with every call data): balanceOf(holder) of two
        # holders, totalSupply() and symbol().
        "eth_calls": {"calls": [{"to": token, "data": data} for data in (*balance_of, "0x18160ddd", "0x95d89b41")]},
    }
    return given.get(dataset, {})


def run(tool: str, dataset: str, url: str, blocks: tuple[int, int], env: dict[str, str], key: str) -> dict[str, Any]:
    if tool == "cli":
        return run_command(dataset, url, blocks, env, key)
    python = str(peers_python()) if tool in ("cryo", "web3") else sys.executable
    if tool == "pure":
        tool, env = "chainframe", {**env, "CHAINFRAME_NATIVE": "0"}
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
        "cpu_seconds": result["cpu_seconds"],
    }


def high_water(pid: int) -> list[int]:
    """The process's peak resident memory in KB (VmHWM), read every 2 ms by a thread until the process ends; [0] where
    there is no /proc. Its ru_maxrss would not do: Linux counts in it the parent's peak at the fork, before the exec."""
    peak = [0]
    status = Path(f"/proc/{pid}/status")

    def watch() -> None:
        while True:
            try:
                lines = status.read_text().splitlines()
            except OSError:
                return
            kb = next((int(line.split()[1]) for line in lines if line.startswith("VmHWM:")), None)
            if kb is None:  # the process has ended (a zombie has no memory)
                return
            peak[0] = max(peak[0], kb)
            time.sleep(0.002)

    if status.exists():
        threading.Thread(target=watch, daemon=True).start()
    return peak


def run_command(dataset: str, url: str, blocks: tuple[int, int], env: dict[str, str], key: str) -> dict[str, Any]:
    """The ``chainframe`` command itself, with the API runner's options: its CPU time is its process's own (``wait4``),
    its peak RSS the last high-water mark read while it ran (:func:`high_water`), its rows are counted from the files'
    footers, and its time after imports is its run report's."""
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as out:
        argv = [
            str(Path(sys.executable).with_name("chainframe")), "extract", dataset,
            "--blocks", f"{blocks[0]}:{blocks[1]}", "--rpc", url, "--out", out, "--overwrite", "--no-progress",
            "--concurrency", "4",
            "--chunk-size", os.environ.get("BENCH_CHUNK_SIZE", "1000"), "--max-in-flight", "16",
        ]  # fmt: skip
        if credits := env.get("BENCH_CREDITS_PER_SECOND"):
            argv += ["--credits-per-second", credits]
        given = json.loads(env.get("BENCH_INPUTS") or "{}")
        for name, flag in (("addresses", "--addresses"), ("tokens", "--tokens"), ("storage_keys", "--storage-key")):
            if name in given:
                argv += [flag, *given[name]]
        for call in given.get("calls", ()):
            argv += ["--call", json.dumps(call)]
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, **env}, cwd=ROOT
        )
        assert proc.stderr is not None
        peak = high_water(proc.pid)
        errors = proc.stderr.read()  # the pipe ends when the process does
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            return {"completed": False, "error": redact_text(errors.strip() or f"exit {proc.returncode}", key)}
        # A series read with inputs is named after them too (balances__f1a2b3c4d): store.series_name.
        files = sorted([*Path(out).glob(f"{dataset}/*.parquet"), *Path(out).glob(f"{dataset}__*/*.parquet")])
        report = json.loads(next((Path(out) / ".chainframe" / "runs").glob("*.json")).read_text())
        return {
            "completed": True,
            "seconds": round(seconds, 3),
            "work_seconds": report["seconds"],
            "rows": sum(pq.read_metadata(f).num_rows for f in files),
            "peak_rss_mb": round((peak[0] or usage.ru_maxrss) / 1024, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        }


def cpu_of(pid: int) -> float:
    """CPU-seconds (user + sys) process ``pid`` has used so far, from /proc; 0.0 where there is none."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    mode: str, devnet: Devnet, datasets: list[str], blocks: tuple[int, int], rounds: int
) -> list[dict[str, Any]]:
    """Each dataset's tools run in turn, ``rounds`` times, the order reversed every other round (a machine whose load
    drifts favours no tool); a tool's row is its best round (least wall time), with its least CPU time."""
    rows: list[dict[str, Any]] = []
    url = devnet.node.url if mode == "local" else devnet.http_url
    # The floor's best eth_getLogs span differs by mode: 8 blocks locally (small answers cost anvil least), 60
    # remotely (fewer round trips: 2.17 s where 8 blocks took 2.37 s).
    env = (
        {"BENCH_CREDITS_PER_SECOND": str(REMOTE.credits_per_second), "BENCH_LOGS_SPAN": "60"}
        if mode == "remote"
        else {}
    )
    # What serving a tool's requests cost: anvil's CPU (and the gateway's, remotely), beside the tool's own. On two
    # cores they share, a tool that makes the node work more per byte is slower for it.
    servers = [devnet.node.pid] + ([devnet.gateway.pid] if mode == "remote" and devnet.gateway is not None else [])
    for dataset in datasets:
        tools = TOOLS[dataset]
        runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in tools}
        for round_ in range(rounds):
            for tool in tools if round_ % 2 == 0 else tools[::-1]:
                if devnet.gateway is not None:
                    devnet.gateway.configure(REMOTE if mode == "remote" else GatewaySettings())
                    devnet.gateway.reset_stats()
                served = sum(map(cpu_of, servers))
                given = inputs(dataset, devnet.truth)
                result = run(tool, dataset, url, blocks, {**env, "BENCH_INPUTS": json.dumps(given)}, devnet.key)
                result["server_cpu_seconds"] = round(sum(map(cpu_of, servers)) - served, 2)
                if mode == "remote" and devnet.gateway is not None:
                    stats = devnet.gateway.stats()
                    result["requests"] = stats["http_requests"]
                    result["calls"] = sum(stats["calls"].values())
                    result["methods"] = stats["calls"]
                    result["credits"] = stats["credits"]
                    result["rate_limited"] = stats["rate_limited"]
                runs[tool].append(result)
        for tool in tools:
            row = {"mode": mode, "dataset": dataset, "tool": tool, "rounds": rounds, **best(runs[tool], tool)}
            rows.append(row)
            print(_line(row), flush=True)
    return rows


def best(results: list[dict[str, Any]], tool: str) -> dict[str, Any]:
    """The round with the least wall time. A failed round of chainframe (the API, the command or the pure path) makes
    its row a failure: it must always finish. A peer's failed rounds are counted beside its completed ones (cryo 0.3.2's
    blocks died with SIGSEGV in one round of 3, and SIGABRT in one of 5, in two runs on 2026-11-23, and in none of 12
    runs alone); a peer fails only if no round completed."""
    failed = [r for r in results if not r["completed"]]
    done = [r for r in results if r["completed"]]
    if failed and (tool in (*OURS, "pure", "raw") or not done):
        return failed[0]
    out = dict(min(done, key=lambda r: r["seconds"]))
    out["cpu_seconds"] = min(r["cpu_seconds"] for r in done)
    out["server_cpu_seconds"] = min(r["server_cpu_seconds"] for r in done)
    out["seconds_all"] = [r["seconds"] for r in done]
    if failed:
        out["failed_rounds"] = [r["error"] for r in failed]
    return out


def _line(row: dict[str, Any]) -> str:
    if not row["completed"]:
        return f"{row['mode']:<7}{row['dataset']:<20}{row['tool']:<11} did not complete: {row['error'][:90]}"
    # The rows beside their rate: tools compared on one dataset must write the same rows (or say why not: TOOLS).
    rate = (
        f"{row['rows']:>9,} rows {row['rows'] / row['seconds']:>10,.0f}/s" if row["rows"] >= 0 else f"{'(bytes)':>27}"
    )
    per = f"  {per_100k(row):>5.2f} CPU-s/100k logs" if row["dataset"] == "logs" else ""
    extra = f"  {row['requests']:>6} requests" if "requests" in row else ""
    if "credits" in row:  # with the seconds, whether a tool spent the gateway's credit budget
        extra += f"  {row['credits']:>9,} credits ({row['credits'] / row['seconds']:,.0f}/s)"
        extra += " [" + ", ".join(f"{m} {n}" for m, n in sorted(row["methods"].items(), key=lambda i: -i[1])) + "]"
    if "failed_rounds" in row:
        extra += f"  ({len(row['failed_rounds'])} of {row['rounds']} rounds failed: {row['failed_rounds'][0][:40]})"
    return (
        f"{row['mode']:<7}{row['dataset']:<20}{row['tool']:<11}{row['seconds']:>7.2f} s "
        f"({row['work_seconds']:>5.2f} s after imports) {row['cpu_seconds']:>6.2f} CPU-s "
        f"(server {row['server_cpu_seconds']:>5.2f}) {rate} "
        f"{row['peak_rss_mb']:>6.0f} MB{per}{extra}"
    )


LOGS_ROWS = [0]
"""The benchmark range's logs (the raw floor counts no rows), for CPU-seconds per 100,000 logs."""


def per_100k(row: dict[str, Any]) -> float:
    return float(row["cpu_seconds"]) / max(LOGS_ROWS[0], 1) * 100_000


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """chainframe and cli / peer, of whole-process wall time, of wall time after imports, and of CPU time."""
    out = []
    done = {(r["mode"], r["dataset"], r["tool"]): r for r in rows if r["completed"]}
    for (mode, dataset, tool), r in done.items():
        if tool not in OURS:
            continue
        entry: dict[str, Any] = {"mode": mode, "dataset": dataset, "tool": tool}
        for other in PEERS_SHOWN:
            peer = done.get((mode, dataset, other))
            for key, field in (("", "seconds"), ("_work", "work_seconds"), ("_cpu", "cpu_seconds")):
                entry[f"vs_{other}{key}"] = round(r[field] / peer[field], 2) if peer and peer[field] else None
        out.append(entry)
    return out


def ratio_cells(t: dict[str, Any], other: str) -> str:
    if t[f"vs_{other}"] is None:
        return "-"
    return f"{t[f'vs_{other}']} ({t[f'vs_{other}_work']}; CPU {t[f'vs_{other}_cpu']})"


def markdown(rows: list[dict[str, Any]], table: list[dict[str, Any]], memory: dict[str, Any]) -> str:
    lines = [
        "| mode | dataset | tool | completed | seconds (best) | after imports | CPU-s | server CPU-s "
        "| CPU-s / 100k logs | rows | rows/s | peak RSS MB | requests | credits |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["completed"]:
            rate = f"{r['rows']:,} | {r['rows'] / r['seconds']:,.0f}" if r["rows"] >= 0 else "- | -"
            per = f"{per_100k(r):.2f}" if r["dataset"] == "logs" else "-"
            lines.append(
                f"| {r['mode']} | {r['dataset']} | {r['tool']} | yes | {r['seconds']:.2f} | {r['work_seconds']:.2f} | "
                f"{r['cpu_seconds']:.2f} | {r['server_cpu_seconds']:.2f} | {per} | {rate} | {r['peak_rss_mb']:.0f} | "
                f"{r.get('requests', '-')} | {r.get('credits', '-')} |"
            )
        else:
            failed = f"no: {r['error'][:60]}"
            lines.append(
                f"| {r['mode']} | {r['dataset']} | {r['tool']} | {failed} | | | | | | | | | {r.get('requests', '-')} "
                f"| {r.get('credits', '-')} |"
            )
    lines += [
        "",
        "chainframe (the Python API) and cli (the command) / peer: whole-process wall time (after imports; CPU time);",
        "below 1.0, chainframe is faster.",
        "'raw' is the floor: the same calls, bytes discarded.",
        "",
        "| mode | dataset | tool | " + " | ".join(f"/ {o}" for o in PEERS_SHOWN) + " |",
        "|---|---|---|" + "---|" * len(PEERS_SHOWN),
    ]
    for t in table:
        cells = " | ".join(ratio_cells(t, o) for o in PEERS_SHOWN)
        lines.append(f"| {t['mode']} | {t['dataset']} | {t['tool']} | {cells} |")
    lines += ["", f"chainframe logs, peak RSS with the range doubled: {memory}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=2000, help="blocks to extract, from 1 (default: 2000)")
    parser.add_argument("--modes", default="local,remote")
    parser.add_argument("--datasets", default="logs,blocks,transactions,receipts")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each tool, interleaved; best kept (default: 3)")
    args = parser.parse_args(argv)
    peers_python()
    datasets = args.datasets.split(",")
    print(f"benchmark chain: {BENCH_WORKLOAD.blocks} blocks (built once, then cached)", flush=True)
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        last = min(args.blocks, devnet.truth.head)
        blocks = (1, last)
        LOGS_ROWS[0] = sum(devnet.truth.logs_per_block()[1 : last + 1])
        print(f"blocks {blocks[0]}..{blocks[1]}: {sum(devnet.truth.txs_per_block()[1:last + 1]):,} txs, "
              f"{LOGS_ROWS[0]:,} logs; {args.rounds} rounds, interleaved, best kept\n", flush=True)  # fmt: skip
        rows = [r for mode in args.modes.split(",") for r in measure(mode, devnet, datasets, blocks, args.rounds)]
        half = (1, max(1, last // 2))
        memory: dict[str, Any] = {
            f"{half[1]} blocks": run("chainframe", "logs", devnet.node.url, half, {}, devnet.key).get("peak_rss_mb"),
            f"{last} blocks": run("chainframe", "logs", devnet.node.url, blocks, {}, devnet.key).get("peak_rss_mb"),
        }
        small, large = memory.values()
        memory["ratio"] = round(large / small, 2) if small and large else None
    table = ratios(rows)
    print("\nchainframe (the Python API) and cli (the command) / peer: whole-process wall time (after imports; CPU")
    print("time); below 1.0, chainframe is faster")
    for t in table:
        cells = "  ".join(f"vs {o} {ratio_cells(t, o)}" for o in PEERS_SHOWN)
        print(f"  {t['mode']:<7}{t['dataset']:<20}{t['tool']:<11} {cells}")
    print(f"\nchainframe logs, peak RSS with the range doubled: {memory}")
    results = ROOT / "bench-results"
    results.mkdir(exist_ok=True)
    (results / "compare.json").write_text(json.dumps({"rows": rows, "ratios": table, "memory": memory}, indent=2))
    (results / "compare.md").write_text(markdown(rows, table, memory))
    print(f"saved {results / 'compare.json'} and {results / 'compare.md'}")


if __name__ == "__main__":
    main()
