"""``chainframe repair DIR``: rewrite the stored chunks that a reorganization took off the chain."""

from __future__ import annotations

import argparse
from typing import Any

from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.engine import repair

DESCRIPTION = """\
Check every series under DIR against the node's chain and rewrite the chunks a
reorganization took back: rows below each fork block are kept, the rest is fetched
again, and each file replaces its slot's file atomically. Nothing else is fetched.
Every 'chainframe extract' into DIR does this first; 'chainframe info DIR --check'
lists what would be rewritten.

examples:
  chainframe repair ./data --rpc http://127.0.0.1:8545
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "repair",
        help=help_of("repair"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
    )
    p.add_argument("dir", metavar="DIR", help="the output folder given to the extraction (./data, s3://bucket/prefix)")
    add_endpoint_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    report = repair(args.dir, rpc=args.rpc, network=args.network)
    print(report.summary())
    return 0
