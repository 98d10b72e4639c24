"""The endpoint options every networked subcommand shares: --rpc URL, --rpc-env NAME or --rpc-file PATH (the last two
keep a key out of the process list), or --network NAME (key from the environment); with none of them, $ETH_RPC_URL
(cryo's and foundry's variable). ``extract`` takes several URLs
(several keys or providers): --rpc repeated, whitespace-separated in the variable, one per line in the file, or
--endpoints FILE with each one's limits (:mod:`chainframe.rpc._providers_file`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from chainframe._errors import InputError
from chainframe.rpc import KEY_ENV

ETH_RPC_URL = "ETH_RPC_URL"
"""cryo's and foundry's variable for the endpoint: used when no --rpc, --rpc-env, --rpc-file or --network is given."""


def add_endpoint_options(parser: argparse.ArgumentParser, *, required: bool = True, several: bool = False) -> None:
    # With $ETH_RPC_URL set, the endpoint options may be left out (read when the command runs).
    where = parser.add_mutually_exclusive_group(required=required and not os.environ.get(ETH_RPC_URL))
    parser.set_defaults(endpoint_required=required)
    more = " (repeat it for more endpoints: the calls are shared over them, each paced by its own budget)"
    where.add_argument(
        "--rpc", metavar="URL", action="append" if several else "store",
        help="any JSON-RPC URL, e.g. https://mainnet.infura.io/v3/KEY" + (more if several else ""),
    )  # fmt: skip
    parser.set_defaults(several_rpc=several)
    where.add_argument(
        "--rpc-env", metavar="NAME", help="read the RPC URL from this environment variable (keeps the key out of ps)"
    )
    where.add_argument(
        "--rpc-file", metavar="PATH", type=Path, help="read the RPC URL from the first line of this file (likewise)"
    )
    if several:
        where.add_argument(
            "--endpoints", metavar="FILE", type=Path,
            help="several endpoints, each with its own limits and price table (TOML or .json: url or url_env, "
            "requests_per_second, credits_per_second, prices = infura | alchemy | quicknode, max_concurrency)",
        )  # fmt: skip
    where.add_argument(
        "--network",
        metavar="NAME",
        help=f"an Infura network (mainnet, sepolia, base-mainnet, ...); key from ${KEY_ENV}",
    )


def resolve_endpoint_options(args: argparse.Namespace) -> None:
    """Turn --rpc-env / --rpc-file into ``args.rpc`` (every subcommand then reads ``args.rpc``)."""
    name = getattr(args, "rpc_env", None)
    path = getattr(args, "rpc_file", None)
    several = getattr(args, "several_rpc", False)
    given = any(getattr(args, option, None) for option in ("rpc", "rpc_env", "rpc_file", "network", "endpoints"))
    if not given and getattr(args, "endpoint_required", False):
        name = ETH_RPC_URL  # cryo's and foundry's default; redacted like every URL (the runner registers it)
    endpoints = getattr(args, "endpoints", None)
    if endpoints is not None:
        from chainframe.rpc import read_providers  # deferred: only a run given an endpoints file loads its reader

        args.rpc = read_providers(endpoints)
    elif name:
        urls = os.environ.get(name, "").split()
        if not urls and name == ETH_RPC_URL and not getattr(args, "rpc_env", None):
            raise InputError(f"say where to read from: --rpc URL, --network NAME, or set ${ETH_RPC_URL}")
        if not urls:
            raise InputError(f"--rpc-env {name}: the environment variable {name} is not set (or empty)")
        args.rpc = urls if several else urls[0]
    elif path is not None:
        try:
            lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        except OSError as exc:
            raise InputError(f"--rpc-file {path}: {exc.strerror}") from None
        if not lines:
            raise InputError(f"--rpc-file {path} is empty; write the RPC URL on its first line")
        args.rpc = lines if several else lines[0]
    network = getattr(args, "network", None)
    if network and not os.environ.get(KEY_ENV):  # the Python API's wording (key=...) means nothing here
        raise InputError(f"--network {network} needs an API key: set the {KEY_ENV} environment variable (or use --rpc)")
    if isinstance(getattr(args, "rpc", None), list) and len(args.rpc) == 1:
        args.rpc = args.rpc[0]
