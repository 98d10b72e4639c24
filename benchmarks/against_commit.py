"""This tree against another commit's checkout, interleaved: is the command slower than it was?

Each side is a source tree: the base commit's (a ``git worktree`` of it, made once under ``--trees``), and this one
(or ``--this COMMIT``, a clean worktree of that commit, so that edits in progress here are not measured). Both run
``chainframe extract`` with this interpreter and its installed packages, the tree's ``src`` first on ``PYTHONPATH``
and its C extensions built in place (``setup.py build_ext --inplace``) and checked to load from that tree: the only
difference between the sides is chainframe's own code, and neither falls back to the pure path unseen.

On the benchmark chain (``--chain bench``: 2,000 blocks, ~18,000 transactions, ~312,000 logs; ``--chain test`` for
the small devnet chain), one node for both sides, each case (blocks, transactions, receipts, logs alone, and the four
in one run; each plain and with ``--verify``) runs on base and this tree in turn, every round, the order flipped every
other round (A B, B A, A B ...), each run a fresh process with the options of ``benchmarks.compare``'s ``cli``. For
each run: wall time of the whole process, its CPU time (user + sys, from ``wait4``: the process and the children it
waited for, not the node) and the node's CPU time meanwhile; rows are counted from the files and must be equal on
both sides. Printed per case: best and median of each side and this / base, of the best, of the medians, and the
median of the per-round ratios (each round's pair ran back to back, so a load that drifts over minutes cancels) with
their spread (least and most) as the noise a ratio is read against. The load average is printed before and after.

Run: ``scripts/bench against_commit b6ac909`` (``--rounds N``, ``--cases "logs;logs+verify;..."``, ``--this COMMIT``,
``--chain test``; ``--rpc URL --node-pid PID --blocks 1:2000`` for a node already serving the chain, e.g. an
``anvil --load-state`` of the cached benchmark chain where a loaded machine starts it slower than the devnet waits).
Results are also saved as JSON under ``bench-results/``. Exit code 0 whatever the figures.

Measured 2026-11-28 (issue 43: "the four main datasets and --verify within 3% of" b6ac909), b6ac909 against 0b8c7cb
(pycryptodome no longer imported at start-up), 5 rounds, blocks 1:2000, load 3.5-12 on 2 shared cores; this / base
of the run's own CPU, median of the per-round ratios (least-most):

    blocks 1.14 (0.94-1.30)    transactions 1.13 (1.02-1.16)   receipts 1.03 (0.93-1.14)   logs 1.03 (0.82-1.20)
    all four in one run 1.03 (1.01-1.08)
    --verify: blocks 1.14 (1.02-1.29)   transactions 1.03 (0.98-1.07)   receipts 1.03 (1.02-1.05)
              logs 1.04 (0.95-1.06)     all four 1.03 (0.99-1.10)

Wall time at that load is noise (paired medians 0.63-1.31 both ways). What is left is mostly start-up: CPU of
``extract blocks --blocks 1:2``, 10 interleaved runs at load 4: 0.410 -> 0.456 (median) after 44dcc36 (imports
0.49 -> 0.51 CPU-s: 34 more of chainframe's modules load; the run itself the rest), which is 7-10% of a 2,000-block
blocks or transactions run and 1-2% of receipts or logs; and a piece's transform carries 16-19 more (all-null)
columns: 0.073 -> 0.083 CPU-s for the 2,000 blocks' transactions, 0.27 -> 0.30 for their receipts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MAIN = ("blocks", "transactions", "receipts", "logs")
ALL = "blocks,transactions,receipts,logs"
CASES = [*MAIN, ALL] + [f"{c}+verify" for c in (*MAIN, ALL)]
GIT = shutil.which("git") or "git"
NATIVE = ("chainframe.datasets._native_rows", "chainframe.rpc._envelopes", "chainframe.verify._native")


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run([GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def checkout(commit: str, trees: Path) -> Path:
    """A worktree of ``commit`` under ``trees``, its C extensions built in place and its modules byte-compiled: made
    once, then reused (a worktree is never written by a run)."""
    sha = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    tree = trees / sha[:12]
    if not (tree / "src" / "chainframe").is_dir():
        trees.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--detach", str(tree), sha)
    if git("rev-parse", "HEAD", cwd=tree) != sha:
        raise SystemExit(f"{tree} is not at {sha}: remove it (git worktree remove {tree}) and run again")
    build(tree)
    return tree


def build(tree: Path) -> None:
    """The tree's C extensions (as ``pip install -e`` builds them, by the same setup.py) and its byte-code, which an
    editable install leaves out: where PYTHONDONTWRITEBYTECODE is set, a process would compile every module again."""
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree, check=True, capture_output=True
    )
    subprocess.run([sys.executable, "-m", "compileall", "-q", "src/chainframe"], cwd=tree, check=True)


def environment(tree: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    env.pop("CHAINFRAME_NATIVE", None)
    return env


def check_loads(tree: Path) -> None:
    """chainframe and its C extensions load from ``tree`` (a failed optional build would silently be the pure path)."""
    code = (
        "import importlib, chainframe; print(chainframe.__file__)\n"
        f"for m in {NATIVE!r}: print(importlib.import_module(m).__file__)"
    )
    files = subprocess.run(
        [sys.executable, "-c", code], env=environment(tree), check=True, capture_output=True, text=True
    ).stdout.split()
    outside = [f for f in files if not f.startswith(str(tree / "src"))]
    if outside or len(files) != 1 + len(NATIVE):
        raise SystemExit(f"{tree}: chainframe or its C extensions load from elsewhere: {files}")


def cpu_of(pid: int) -> float:
    """CPU-seconds (user + sys) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(tree: Path, case: str, url: str, blocks: str, node: int) -> dict[str, Any]:
    """One ``chainframe extract`` of ``case`` from ``tree``, in a fresh process and folder."""
    import pyarrow.parquet as pq

    names, _, verify = case.partition("+")
    datasets = names.split(",")
    with tempfile.TemporaryDirectory() as out:
        argv = [
            str(Path(sys.executable).with_name("chainframe")), "extract", *datasets, "--blocks", blocks, "--rpc", url,
            "--out", out, "--overwrite", "--no-progress", "--concurrency", "4", "--chunk-size", "1000",
            "--max-in-flight", "16", *(["--verify"] if verify else []),
        ]  # fmt: skip
        served = cpu_of(node)
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment(tree))
        assert proc.stderr is not None
        errors = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stderr.close()
        if proc.returncode != 0:
            raise RuntimeError(f"{tree}: {' '.join(argv[1:])} exited {proc.returncode}:\n{errors.decode()[-2000:]}")
        rows = {d: sum(pq.read_metadata(f).num_rows for f in (Path(out) / d).glob("*.parquet")) for d in datasets}
    return {
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "node_cpu_seconds": cpu_of(node) - served,
        "rows": rows,
    }


def summary(base: list[dict[str, Any]], this: list[dict[str, Any]], key: str) -> dict[str, float]:
    a = [r[key] for r in base]
    b = [r[key] for r in this]
    paired = [y / x for x, y in zip(a, b, strict=True)]
    return {
        "base_best": min(a),
        "base_median": statistics.median(a),
        "this_best": min(b),
        "this_median": statistics.median(b),
        "ratio_best": min(b) / min(a),
        "ratio_median": statistics.median(b) / statistics.median(a),
        "paired_median": statistics.median(paired),
        "paired_least": min(paired),
        "paired_most": max(paired),
    }


def line(case: str, what: str, s: dict[str, float]) -> str:
    return (
        f"{case:<40} {what:<5} base {s['base_best']:6.2f} / {s['base_median']:6.2f}  "
        f"this {s['this_best']:6.2f} / {s['this_median']:6.2f}   best {s['ratio_best']:5.3f}  "
        f"median {s['ratio_median']:5.3f}  paired {s['paired_median']:5.3f} "
        f"({s['paired_least']:.3f}-{s['paired_most']:.3f})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("base", help="the commit to compare with (a worktree of it is made under --trees)")
    parser.add_argument("--this", help="a commit to measure instead of this working tree (a clean worktree of it)")
    parser.add_argument("--trees", type=Path, default=Path(tempfile.gettempdir()) / "chainframe-against")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each side per case, interleaved (default: 5)")
    parser.add_argument("--cases", default=";".join(CASES), help="';'-separated: DATASET[,DATASET...][+verify]")
    parser.add_argument("--chain", choices=("bench", "test"), default="bench")
    parser.add_argument("--blocks", help="the range extracted (default: 1 to the chain's head)")
    parser.add_argument(
        "--rpc", help="a node already serving the chain (anvil --load-state ...), with --node-pid and --blocks"
    )
    parser.add_argument("--node-pid", type=int, help="that node's process id (for its CPU time)")
    args = parser.parse_args(argv)
    if args.rpc and not (args.node_pid and args.blocks):
        parser.error("--rpc needs --node-pid and --blocks")
    from chainframe.devnet import BENCH_WORKLOAD, TEST_WORKLOAD, Devnet

    base = checkout(args.base, args.trees)
    this = checkout(args.this, args.trees) if args.this else ROOT
    if not args.this:
        build(this)
        changed = git("status", "--porcelain", "--untracked-files=no", "--", "src")
        if changed:
            print(f"note: this tree's src has uncommitted changes (they are measured):\n{changed}", flush=True)
    for tree in (base, this):
        check_loads(tree)
    sides = {"base": base, "this": this}
    cases = args.cases.split(";")
    workload = BENCH_WORKLOAD if args.chain == "bench" else TEST_WORKLOAD
    load_before = os.getloadavg()
    results: dict[str, dict[str, list[dict[str, Any]]]] = {c: {"base": [], "this": []} for c in cases}
    with contextlib.ExitStack() as stack:
        if args.rpc:
            url, node, blocks = args.rpc, args.node_pid, args.blocks
        else:
            devnet = stack.enter_context(Devnet(workload=workload))
            url, node, blocks = devnet.node.url, devnet.node.pid, args.blocks or f"1:{devnet.truth.head}"
        print(
            f"base {git('rev-parse', '--short', 'HEAD', cwd=base)} ({base}), this "
            f"{git('rev-parse', '--short', 'HEAD', cwd=this)} ({this}); blocks {blocks} of the {args.chain} chain; "
            f"{args.rounds} rounds; load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}",
            flush=True,
        )
        for round_ in range(args.rounds):
            for case in cases:
                order = ("base", "this") if round_ % 2 == 0 else ("this", "base")
                for side in order:
                    results[case][side].append(run(sides[side], case, url, blocks, node))
                    r = results[case][side][-1]
                    print(f"  {case:<40} {side:<4} {r['seconds']:6.2f} s {r['cpu_seconds']:6.2f} CPU-s", flush=True)
                if results[case]["base"][-1]["rows"] != results[case]["this"][-1]["rows"]:
                    raise SystemExit(f"{case}: rows differ: {results[case]['base'][-1]['rows']} (base) against "
                                     f"{results[case]['this'][-1]['rows']} (this)")  # fmt: skip
            print(f"round {round_ + 1} of {args.rounds} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    load_after = os.getloadavg()
    print(
        f"\nbest / median of {args.rounds} rounds (seconds); this / base: of the bests, of the medians, and the median"
        " of the per-round ratios (least-most); wall is the whole process, cpu its own user + sys (not the node's)"
    )
    table: dict[str, Any] = {}
    for case in cases:
        base_runs, this_runs = results[case]["base"], results[case]["this"]
        table[case] = {key: summary(base_runs, this_runs, key) for key in ("seconds", "cpu_seconds")}
        table[case]["node_cpu_seconds"] = summary(base_runs, this_runs, "node_cpu_seconds")
        print(line(case.replace("blocks,transactions,receipts,logs", "all four"), "wall", table[case]["seconds"]))
        print(line("", "cpu", table[case]["cpu_seconds"]))
    print(f"load average before {' '.join(f'{x:.2f}' for x in load_before)}, after {load_after[0]:.2f}")
    results_dir = ROOT / "bench-results"
    results_dir.mkdir(exist_ok=True)
    saved = results_dir / "against_commit.json"
    found = {"base": str(base), "this": str(this), "rounds": args.rounds, "load": [load_before, load_after]}
    saved.write_text(json.dumps({**found, "summary": table, "runs": results}, indent=1))
    print(f"saved {saved}")


if __name__ == "__main__":
    main()
