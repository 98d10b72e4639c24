"""``chainframe abi``: which ABI an address decodes with over some blocks, and why: its own, or its implementation's
while it is a proxy (EIP-1967's implementation or beacon slot, EIP-1822's), read with ``eth_getStorageAt``; the
ABIs come from a folder of Sourcify and Etherscan files (``--abi-dir``). ``extract --abi-dir`` decodes with the same
answer (:func:`resolve`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.decode import AbiFolder, Decoding, Stretch, address_of, decodings, stretches
from chainframe.engine import endpoint_of, parse_blocks, resolve_blocks
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


@dataclass(frozen=True)
class Resolved:
    """What some addresses decode with over some blocks."""

    chain_id: int
    decodings: tuple[Decoding, ...]
    """Each address over each stretch where its code stays in one place."""
    stretches: tuple[Stretch, ...]
    """The blocks cut where the set of ABIs changes: each decodes with its own set."""


def checked_folder(path: str, addresses: Sequence[str], flag: str = "ADDRESS") -> tuple[AbiFolder, list[str]]:
    """The folder and the addresses, checked before any request: the files the folder holds for them read (a file
    that is not JSON, metadata without an ABI, a refused Etherscan answer named with its reason)."""
    folder = AbiFolder(path)
    asked = [address_of(a, flag) for a in addresses]
    folder.check(asked)
    return folder, asked


def resolve(
    rpc: Any,
    network: str | None,
    client_options: Mapping[str, Any],
    folder: AbiFolder,
    addresses: Sequence[str],
    blocks: str,
    confirmations: int,
) -> Resolved:
    """Which ABIs ``addresses`` decode with over ``blocks``, asked of the node at ``rpc`` (the first if several)."""
    endpoint = endpoint_of(rpc[0] if isinstance(rpc, list) else rpc, network, None)
    spec = parse_blocks(blocks)

    async def main() -> Resolved:
        async with AsyncClient(endpoint, **client_options) as client:
            chain_id = await client.chain_id()
            ranges = await resolve_blocks(spec, client, confirmations=confirmations)
            found = await decodings(client, folder, chain_id, addresses, [(r.start, r.end) for r in ranges])
        return Resolved(chain_id, tuple(found), tuple(stretches(found)))

    return anyio.run(main)


def run(args: argparse.Namespace) -> int:
    folder, asked = checked_folder(args.abi_dir, args.addresses)
    options = {"transport": args.transport} if args.transport else {}
    resolved = resolve(args.rpc, args.network, options, folder, asked, args.blocks, args.confirmations)
    for d in resolved.decodings:
        if args.json:
            print(json.dumps({
                "address": d.address, "chain_id": resolved.chain_id, "first_block": d.first, "last_block": d.last,
                "how": d.code.how, "decodes_with": d.code.address, "beacon": d.code.beacon,
                "abi_file": d.abi.file if d.abi else None, "abi_origin": d.abi.origin if d.abi else None,
                "abi_digest": d.abi.digest if d.abi else None,
            }))  # fmt: skip
        else:
            print(f"{d.address} blocks {d.first}..{d.last} (chain {resolved.chain_id}): {d.why()}")
    return 0
