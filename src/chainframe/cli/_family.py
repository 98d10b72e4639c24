"""``--chain-family NAME``, shared by ``extract``, ``verify`` and ``probe``: read the chain as this family instead of
the one its chain id names (a chain no family knows is otherwise read as Ethereum, and the run says it assumed so)."""

from __future__ import annotations

import argparse

from chainframe.families import FAMILIES


def add_chain_family(parser: argparse.ArgumentParser) -> None:
    # Not argparse's choices: the name is refused by chainframe.families, in the one message the API gives too.
    parser.add_argument(
        "--chain-family", metavar="NAME",
        help=f"read the chain as this family ({', '.join(f.name for f in FAMILIES)}) where its chain id is one no "
        "family knows (a family a known chain id denies is refused, before any block is asked for)",
    )  # fmt: skip
