"""Receive cost of the HTTP/1.1 transport: the benchmark chain's eth_getLogs answers (blocks 1..2000 in 60-block
spans, about 175 MB) fetched straight from the anvil node through ``HTTPTransport.send``, nothing decoded.

Compares, in the same process and interleaved round by round, the transport as it is now against the module at a
git revision (``--baseline``, by default the asyncio-streams version before answers were received into one buffer),
loaded from ``git show`` beside it. Prints CPU-seconds (``time.process_time``: this process only; the node is
another) and wall seconds, best and median of ``--rounds``. Each pass uses a new transport, as each run does
(its kept receive buffers made anew); ``--reuse`` keeps one per path for every pass, as in a long run.

Run: ``scripts/bench receive`` (``--rounds N``, ``--concurrency N``, ``--baseline REV``, ``--reuse``). Exit code 0
whatever the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import time
import types
from collections.abc import Sequence
from pathlib import Path

import anyio

from chainframe.devnet import BENCH_WORKLOAD, Devnet
from chainframe.rpc._transports.base import Transport
from chainframe.rpc._transports.http import HTTPTransport
from chainframe.rpc._transports.options import Timeout

BASELINE = "a0db7cb"  # http.py over asyncio.StreamReader
MODULE = "src/chainframe/rpc/_transports/http.py"


def _baseline_module(revision: str) -> types.ModuleType:
    root = Path(__file__).resolve().parent.parent
    git = shutil.which("git") or "git"
    source = subprocess.run([git, "show", f"{revision}:{MODULE}"], cwd=root, capture_output=True, text=True,
                            check=True).stdout  # fmt: skip
    module = types.ModuleType("chainframe_http_baseline")
    exec(compile(source, f"{revision}:{MODULE}", "exec"), module.__dict__)  # noqa: S102 (our own file, from git)
    return module


def _requests(first: int, last: int, span: int) -> list[bytes]:
    return [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs",
                    "params": [{"fromBlock": hex(start), "toBlock": hex(min(start + span - 1, last))}]}).encode()
        for start in range(first, last + 1, span)
    ]  # fmt: skip


async def _pass(transport: Transport, requests: Sequence[bytes], concurrency: int, *, check: bool) -> str:
    """One pass over ``requests``, each answer dropped once received (as a run drops it once decoded); with
    ``check``, the answers' size and a digest of them."""
    digests: list[bytes] = [b""] * len(requests)
    size = 0
    pending = iter(enumerate(requests))

    async def worker() -> None:
        nonlocal size
        for i, body in pending:
            reply = await transport.send(body, [1])
            assert reply.status == 200, reply.status
            size += len(reply.body)
            if check:
                digests[i] = hashlib.sha256(reply.body).digest()

    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return f"{size:,} bytes, sha256 {hashlib.sha256(b''.join(digests)).hexdigest()[:12]}"


async def _measure(
    paths: dict[str, type[Transport]], url: str, requests: Sequence[bytes], args: argparse.Namespace
) -> tuple[dict[str, list[tuple[float, float]]], dict[str, str]]:
    """CPU-seconds and wall seconds of each pass, per path, and each path's answers' digest."""

    def new(name: str) -> Transport:
        return paths[name](url, timeout=Timeout(), max_connections=args.concurrency)  # type: ignore[call-arg]

    kept = {name: new(name) for name in paths}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in paths}
    digests = {name: await _pass(transport, requests, args.concurrency, check=True) for name, transport in kept.items()}
    for _ in range(args.rounds):  # interleaved, so both see the same moments of a shared machine
        for name in paths:
            transport = kept[name] if args.reuse else new(name)
            cpu, wall = time.process_time(), time.perf_counter()
            await _pass(transport, requests, args.concurrency, check=False)
            if not args.reuse:
                await transport.aclose()
            runs[name].append((time.process_time() - cpu, time.perf_counter() - wall))
    for transport in kept.values():
        await transport.aclose()
    return runs, digests


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight (the engine's default: 8)")
    parser.add_argument("--span", type=int, default=60, help="blocks per eth_getLogs")
    parser.add_argument("--baseline", default=BASELINE, help="git revision of http.py to compare against")
    parser.add_argument("--reuse", action="store_true", help="one transport per path for every pass (a long run)")
    args = parser.parse_args(argv)
    paths: dict[str, type[Transport]] = {
        f"baseline {args.baseline}": _baseline_module(args.baseline).HTTPTransport,
        "current": HTTPTransport,
    }
    requests = _requests(1, min(2000, BENCH_WORKLOAD.blocks), args.span)
    print(f"benchmark chain: {BENCH_WORKLOAD.blocks} blocks (built once, then cached)", flush=True)
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        runs, digests = anyio.run(_measure, paths, devnet.node.url, requests, args)
    print(f"{len(requests)} eth_getLogs of {args.span} blocks, {args.concurrency} in flight, {args.rounds} rounds, "
          f"{'one transport for all passes' if args.reuse else 'a new transport per pass'}")  # fmt: skip
    print(f"{'path':<20} {'CPU-s best':>10} {'median':>7} {'wall s best':>11} {'median':>7}  answers")
    for name, times in runs.items():
        cpu, wall = ([t[k] for t in times] for k in (0, 1))
        print(f"{name:<20} {min(cpu):10.3f} {statistics.median(cpu):7.3f} {min(wall):11.3f} "
              f"{statistics.median(wall):7.3f}  {digests[name]}")  # fmt: skip
    if len(set(digests.values())) != 1:
        print("the answers differ between the paths")


if __name__ == "__main__":
    main()
