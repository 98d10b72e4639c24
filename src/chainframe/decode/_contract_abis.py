"""The ABIs that decode some contracts over some blocks: each address's own, or its implementation's while it is a
proxy (:mod:`chainframe.decode._proxies`), as an :class:`~chainframe.decode.AbiSource` has them; and the stretches of
blocks over which the set of ABIs in force stays the same, each decoded with that set."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from chainframe.decode._abi_sources import AbiSource, ContractAbi, refuse_clashes
from chainframe.decode._proxies import Code, Requests, implementations


@dataclass(frozen=True)
class Decoding:
    """One asked address over a stretch of blocks (both ends included): the ABI that decodes it there, and why."""

    address: str
    first: int
    last: int
    code: Code
    abi: ContractAbi | None
    """None: the source has no ABI for the contract that holds the code."""

    def why(self) -> str:
        if self.abi is None:
            return f"{self.code.why(self.address)}; no ABI for {self.code.address} in the source"
        return f"{self.code.why(self.address)}; ABI {self.abi.digest} from {self.abi.file} ({self.abi.origin})"


async def decodings(
    client: Requests, source: AbiSource, chain_id: int, addresses: Sequence[str], ranges: Sequence[tuple[int, int]]
) -> list[Decoding]:
    """Every asked address over every asked range, cut where its implementation changes."""
    out = []
    for address in addresses:
        for first, last in ranges:
            for span in await implementations(client, address.lower(), first, last):
                abi = source.abi_of(chain_id, span.code.address)
                out.append(Decoding(address.lower(), span.first, span.last, span.code, abi))
    return out


@dataclass(frozen=True)
class Stretch:
    """Blocks ``first..last`` and the ABIs that decode them (one a contract, ordered by address; no clashes)."""

    first: int
    last: int
    abis: tuple[ContractAbi, ...]


def stretches(found: Sequence[Decoding]) -> list[Stretch]:
    """The asked blocks cut where the set of ABIs in force changes, neighbours of one set joined; two ABIs of one
    stretch whose functions share a selector (or events a topic 0, indexed otherwise) refused."""
    cuts = sorted({d.first for d in found} | {d.last + 1 for d in found})
    out: list[Stretch] = []
    for first, end in pairwise(cuts):
        here = [d for d in found if d.first <= first and end - 1 <= d.last]
        if not here:
            continue  # between two asked ranges
        abis = {d.abi.digest: d.abi for d in sorted(here, key=lambda d: d.address) if d.abi is not None}
        stretch = Stretch(first, end - 1, tuple(abis.values()))
        if out and out[-1].last + 1 == first and [a.digest for a in out[-1].abis] == list(abis):
            out[-1] = Stretch(out[-1].first, stretch.last, out[-1].abis)
        else:
            out.append(stretch)
    for stretch in out:
        refuse_clashes(stretch.abis)
    return out
