"""The endpoint options every networked subcommand shares: --rpc URL, --rpc-env NAME or --rpc-file PATH (the last two
keep a key out of the process list), or --network NAME (key from the environment)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from chainframe._errors import InputError
from chainframe.rpc import KEY_ENV


def add_endpoint_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    where = parser.add_mutually_exclusive_group(required=required)
    where.add_argument("--rpc", metavar="URL", help="any JSON-RPC URL, e.g. https://mainnet.infura.io/v3/KEY")
    where.add_argument(
        "--rpc-env", metavar="NAME", help="read the RPC URL from this environment variable (keeps the key out of ps)"
    )
    where.add_argument(
        "--rpc-file", metavar="PATH", type=Path, help="read the RPC URL from the first line of this file (likewise)"
    )
    where.add_argument(
        "--network",
        metavar="NAME",
        help=f"an Infura network (mainnet, sepolia, base-mainnet, ...); key from ${KEY_ENV}",
    )


def resolve_endpoint_options(args: argparse.Namespace) -> None:
    """Turn --rpc-env / --rpc-file into ``args.rpc`` (every subcommand then reads ``args.rpc``)."""
    name = getattr(args, "rpc_env", None)
    path = getattr(args, "rpc_file", None)
    if name:
        url = os.environ.get(name, "").strip()
        if not url:
            raise InputError(f"--rpc-env {name}: the environment variable {name} is not set (or empty)")
        args.rpc = url
    elif path is not None:
        try:
            lines = path.read_text().strip().splitlines()
        except OSError as exc:
            raise InputError(f"--rpc-file {path}: {exc.strerror}") from None
        if not lines or not lines[0].strip():
            raise InputError(f"--rpc-file {path} is empty; write the RPC URL on its first line")
        args.rpc = lines[0].strip()
