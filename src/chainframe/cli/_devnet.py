"""``chainframe devnet``: run the local devnet in the foreground, for pointing your own pipelines at offline."""

from __future__ import annotations

import argparse
import time
from typing import Any

from chainframe.cli._commands import help_of

WORKLOADS = ("bench", "nodes", "test")
"""The devnet's workloads (the devnet itself is imported by the command: an extract does not pay for it)."""
NODES = ("anvil", "hardhat", "ganache")
"""The nodes it runs (``chainframe.devnet.NODE_NAMES``, spelled out here for the same reason)."""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "devnet",
        help=help_of("devnet"),
        description=(
            "Start a real node (anvil by default; Hardhat or Ganache with --node) holding a deterministic workload "
            "chain, behind a gateway that speaks Infura's paths, keys and eth_getLogs limits over HTTP and WebSocket. "
            "Prints the URLs and the key."
        ),
    )
    p.add_argument("--node", choices=NODES, default="anvil", help="node to run (default: anvil)")
    p.add_argument(
        "--workload",
        choices=sorted(WORKLOADS),
        help="chain to serve (default: test on anvil, nodes on Hardhat and Ganache, which build it at each start)",
    )
    p.add_argument(
        "--op-stack",
        action="store_true",
        help="an OP-mode node (anvil --network optimism) on chain id 10: the workload with OP deposits beside its "
        "traffic (anvil only)",
    )
    p.add_argument("--key", help="API key to accept (default: a random one, printed)")
    p.add_argument("--port", type=int, default=0, help="gateway port (default: a free one)")
    p.add_argument("--max-logs", type=int, default=10_000, help="eth_getLogs result limit (default: 10000, as Infura)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: the devnet and httpx, only for this command
    from chainframe.devnet import (
        BENCH_WORKLOAD,
        NODES_WORKLOAD,
        TEST_WORKLOAD,
        Devnet,
        DevnetError,
        GatewaySettings,
        LogLimits,
        on_op_stack,
    )

    workloads = {"test": TEST_WORKLOAD, "bench": BENCH_WORKLOAD, "nodes": NODES_WORKLOAD}
    workload = args.workload or ("test" if args.node == "anvil" else "nodes")
    spec = workloads[workload]
    if args.op_stack:
        if args.node != "anvil":
            print(f"error: --op-stack runs on anvil only ({args.node} has no OP mode)")
            return 2
        spec = on_op_stack(spec)
    settings = GatewaySettings(limits=LogLimits(max_results=args.max_logs))
    built = "the first start builds and caches the chain" if args.node == "anvil" else "building the chain on it"
    rules = " on OP Stack" if args.op_stack else ""
    print(f"starting the devnet on {args.node} ({workload} workload{rules}; {built})...")
    try:
        devnet = Devnet(node=args.node, workload=spec, key=args.key, settings=settings, port=args.port)
    except DevnetError as exc:
        print(f"error: {exc}")
        return 1
    with devnet:
        truth = devnet.truth
        print(f"HTTP:      {devnet.http_url}")
        print(f"WebSocket: {devnet.ws_url}")
        print(f"API key:   {devnet.key}")
        print(f"Node:      {devnet.node.url}  ({args.node} itself, no gateway: no key, no limits)")
        for name, address in sorted(truth.contracts.items()):
            print(f"Contract:  {name:<8} {address}")
        print(
            f"chain id {truth.chain_id}, blocks 0..{truth.head}, {truth.tx_count} transactions, "
            f"{truth.log_count} logs; eth_getLogs limit {args.max_logs} results"
        )
        print("Ctrl-C stops the node and the gateway.")
        # Short sleeps, not one long wait: SIGINT may reach another thread (Polars, DuckDB pools), and Python runs
        # the handler only when the main thread next runs bytecode.
        while True:
            time.sleep(0.2)
    return 0
