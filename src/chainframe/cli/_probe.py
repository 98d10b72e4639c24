"""``chainframe probe``: what a node serves and which datasets will work on it, by which route (a table, or
``--json``). A handful of requests; the endpoint is shown with its key redacted."""

from __future__ import annotations

import argparse
import json
from typing import Any

from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.cli._extract import client_options
from chainframe.cli._family import add_chain_family
from chainframe.engine import probe


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
        "  chainframe probe --rpc http://127.0.0.1:8545",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_endpoint_options(parser)
    parser.add_argument("--json", action="store_true", help="print the findings as JSON, for machines")
    parser.add_argument("--transport", choices=("http", "ws"), help="http (default) or ws; a ws:// URL means ws")
    add_chain_family(parser)
    parser.set_defaults(run=run, requests_per_second=None, credits_per_second=None, max_in_flight=None)


def run(args: argparse.Namespace) -> int:
    found = probe(
        rpc=args.rpc, network=args.network, client_options=client_options(args), chain_family=args.chain_family
    )
    print(json.dumps(found.to_json(), indent=2) if args.json else found.table(), end="\n" if args.json else "")
    return 0
