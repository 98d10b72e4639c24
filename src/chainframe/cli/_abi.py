"""``chainframe abi``: which ABI an address decodes with over some blocks, and why: its own, or its implementation's
while it is a proxy (EIP-1967's implementation or beacon slot, EIP-1822's), read with ``eth_getStorageAt``; the
ABIs come from a folder of Sourcify and Etherscan files (``--abi-dir``). ``extract --abi-dir`` decodes with the same
answer (:func:`chainframe.engine.resolve_abis`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.decode import AbiFolder
from chainframe.engine import (
    AbisResolved,
    checked_folder,
    decoding_json,
    endpoint_of,
    parse_blocks,
    resolve_abis,
    resolve_blocks,
)
from chainframe.rpc import AsyncClient

EXAMPLES = """\
examples:
  chainframe abi 0x5FbDB2315678afecb367f032d93F642f64180aa3 --abi-dir abis --rpc http://127.0.0.1:8545
  chainframe abi 0x5FbDB2315678afecb367f032d93F642f64180aa3 --abi-dir abis --rpc http://127.0.0.1:8545 -b 0:latest

--abi-dir holds Sourcify's repository layout (full_match/<chain id>/<address>/metadata.json, partial_match/...;
the ABI is the metadata's output.abi) and Etherscan getabi answers saved as <address>.json. A full match is taken
before a partial one, both before an Etherscan file. A proxy upgraded inside the range has one line per stretch of
blocks, each with the implementation in force there (found by bisection over eth_getStorageAt and from its Upgraded
logs). No ABI is fetched from the internet.
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "abi",
        help=help_of("abi"),
        description="Say which ABI each ADDRESS decodes with over the asked blocks, and why: its own, or its "
        "implementation's through EIP-1967's implementation or beacon slot or EIP-1822's.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("addresses", nargs="+", metavar="ADDRESS")
    p.add_argument("--abi-dir", required=True, metavar="DIR", help="a folder of Sourcify and Etherscan ABI files")
    add_endpoint_options(p)
    p.add_argument("-b", "--blocks", default="latest", metavar="RANGE",
                   help="blocks to read the proxy slots at (default: latest), as extract takes ranges")  # fmt: skip
    p.add_argument("--confirmations", type=int, default=64, metavar="N",
                   help="for a range without an end: blocks kept back from latest (default: 64)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="one JSON object per address and stretch of blocks")
    p.set_defaults(run=run, requests_per_second=None, credits_per_second=None, max_in_flight=None, transport=None)


def resolve(rpc: Any, network: str | None, client_options: Mapping[str, Any], folder: AbiFolder,
            addresses: Sequence[str], blocks: str, confirmations: int) -> AbisResolved:  # fmt: skip
    """Which ABIs ``addresses`` decode with over ``blocks``, asked of the node at ``rpc`` (the first if several)."""
    endpoint = endpoint_of(rpc[0] if isinstance(rpc, list) else rpc, network, None)
    spec = parse_blocks(blocks)

    async def main() -> AbisResolved:
        async with AsyncClient(endpoint, **client_options) as client:
            ranges = await resolve_blocks(spec, client, confirmations=confirmations)
            return await resolve_abis(client, folder, addresses, ranges)

    return anyio.run(main)


def run(args: argparse.Namespace) -> int:
    folder, asked = checked_folder(args.abi_dir, args.addresses, "ADDRESS")
    options = {"transport": args.transport} if args.transport else {}
    resolved = resolve(args.rpc, args.network, options, folder, asked, args.blocks, args.confirmations)
    for d in resolved.decodings:
        if args.json:
            print(json.dumps({k: v for k, v in decoding_json(d, resolved.chain_id).items() if k != "why"}))
        else:
            print(f"{d.address} blocks {d.first}..{d.last} (chain {resolved.chain_id}): {d.why()}")
    return 0
