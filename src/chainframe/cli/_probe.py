"""``chainframe probe``: what a node serves and which datasets will work on it, by which route (a table, or
``--json``). A handful of requests; the endpoint is shown with its key redacted. Several endpoints (``--rpc``
repeated, ``--endpoints FILE``) are each probed apart, as a shared run meets each with its own limits."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.cli._extract import client_options
from chainframe.cli._family import add_chain_family
from chainframe.engine import Capabilities, probe


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "probe",
        help=help_of("probe"),
        description="Ask the node, once and in a handful of requests, what it serves: client version, chain id, "
        "batches and their size, each method of the spec and the trace methods, the tracers of debug_traceCall, the "
        "finalized and safe tags, old state; then print which datasets will work and by which route.",
        epilog="examples:\n"
        "  chainframe probe --rpc URL\n"
        "  chainframe probe --rpc URL --json\n"
        "  chainframe probe --rpc http://127.0.0.1:8545\n"
        "  chainframe probe --rpc URL --rpc http://127.0.0.1:8545   (each endpoint apart, then what differs)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_endpoint_options(parser, several=True)
    parser.add_argument("--json", action="store_true", help="print the findings as JSON, for machines")
    parser.add_argument("--transport", choices=("http", "ws"), help="http (default) or ws; a ws:// URL means ws")
    add_chain_family(parser)
    parser.set_defaults(run=run, requests_per_second=None, credits_per_second=None, max_in_flight=None)


def run(args: argparse.Namespace) -> int:
    given = args.rpc if isinstance(args.rpc, list) else [args.rpc]
    found = [
        probe(rpc=one, network=args.network, client_options=client_options(args), chain_family=args.chain_family)
        for one in given
    ]
    if args.json:
        print(json.dumps(found[0].to_json() if len(found) == 1 else [f.to_json() for f in found], indent=2))
    elif len(found) == 1:
        print(found[0].table(), end="")
    else:
        for n, one in enumerate(found, 1):
            print(f"== endpoint {n} of {len(found)}\n{one.table()}")
        print(_differences(found))
    return 0


def _differences(found: list[Capabilities]) -> str:
    """What a run shared by these endpoints meets: another chain (set aside), and the limits that differ."""
    first = found[0]
    lines = [f"{len(found)} endpoints probed apart"]
    other = [f"{n} ({f.chain_id})" for n, f in enumerate(found, 1) if f.chain_id != first.chain_id]
    if other:
        lines.append(f"  chain: endpoint 1 serves {first.chain_id}; endpoint {', '.join(other)} another chain: a run "
                     "sets those aside")  # fmt: skip
    limits: dict[str, Callable[[Capabilities], str]] = {
        "batches": lambda f: f"{f.batch_answered} calls answered whole" if f.batches else "no batches",
        "getLogs": lambda f: f"{f.log_blocks or 'no'} block range limit, {f.log_results or 'no'} results limit",
        "old state": lambda f: {True: "served", False: "not served", None: "not known"}[f.archive],
        "missing": lambda f: ", ".join(f.missing) or "none",
    }
    for name, said in limits.items():
        told = [said(f) for f in found]
        if len(set(told)) > 1:
            lines.append(f"  {name} differ: " + "; ".join(f"endpoint {n}: {t}" for n, t in enumerate(told, 1)))
    if len(lines) == 1:
        lines.append("  the same chain, limits and methods on each")
    return "\n".join(lines)
