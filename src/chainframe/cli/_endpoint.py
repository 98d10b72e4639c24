"""The endpoint options every networked subcommand shares: --rpc URL or --network NAME (key from the environment)."""

from __future__ import annotations

import argparse

from chainframe.rpc import KEY_ENV


def add_endpoint_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    where = parser.add_mutually_exclusive_group(required=required)
    where.add_argument("--rpc", metavar="URL", help="any JSON-RPC URL, e.g. https://mainnet.infura.io/v3/KEY")
    where.add_argument(
        "--network",
        metavar="NAME",
        help=f"an Infura network (mainnet, sepolia, base-mainnet, ...); key from ${KEY_ENV}",
    )
