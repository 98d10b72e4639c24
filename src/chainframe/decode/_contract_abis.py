"""The ABIs that decode some contracts over some blocks: each address's own, or its implementation's while it is a
proxy (:mod:`chainframe.decode._proxies`), as an :class:`~chainframe.decode.AbiSource` has them; and the stretches of
blocks over which the set of ABIs in force stays the same, each decoded with that set.

A proxy has functions and events of its own (``upgradeTo``, ``Upgraded``, ``AdminChanged``...) beside the ones it
delegates: where the source holds the proxy's own ABI too, a stretch decodes with both (:meth:`Stretch.entries`).
Where one of the proxy's entries shares a selector (a topic 0) with one of its implementation's, the implementation's
wins (a call to that selector runs the implementation's code unless the proxy's admin sends it), and the stretch says
which were set aside (:meth:`Stretch.shadowed`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

from chainframe.decode._abi import events_from_abi, functions_from_abi
from chainframe.decode._abi_sources import AbiSource, ContractAbi, refuse_clashes
from chainframe.decode._proxies import Code, Requests, implementations

AbiKind = Literal["event", "function"]
"""What of an ABI decodes what: events decode logs, functions calls."""


@dataclass(frozen=True)
class Decoding:
    """One asked address over a stretch of blocks (both ends included): the ABI that decodes it there, and why."""

    address: str
    first: int
    last: int
    code: Code
    abi: ContractAbi | None
    """None: the source has no ABI for the contract that holds the code."""
    own: ContractAbi | None = None
    """A proxy's own ABI (its upgrade functions and events), where the source has one; None for a contract that is
    not a proxy there (``abi`` is its own)."""

    def why(self) -> str:
        own = f"; with the proxy's own ABI {self.own.digest} from {self.own.file}" if self.own else ""
        if self.abi is None:
            return f"{self.code.why(self.address)}; no ABI for {self.code.address} in the source{own}"
        return f"{self.code.why(self.address)}; ABI {self.abi.digest} from {self.abi.file} ({self.abi.origin}){own}"


async def decodings(
    client: Requests, source: AbiSource, chain_id: int, addresses: Sequence[str], ranges: Sequence[tuple[int, int]]
) -> list[Decoding]:
    """Every asked address over every asked range, cut where its implementation changes."""
    out = []
    for address in addresses:
        for first, last in ranges:
            for span in await implementations(client, address.lower(), first, last):
                abi = source.abi_of(chain_id, span.code.address)
                own = source.abi_of(chain_id, address) if span.code.how != "own" else None
                out.append(Decoding(address.lower(), span.first, span.last, span.code, abi, own))
    return out


def _key(kind: AbiKind, entry: dict[str, Any]) -> tuple[bytes, str]:
    """What tells a call (its selector) or a log (its topic 0) of ``entry`` apart, and the entry's text (its
    parameters' types and names: two entries of one text decode alike)."""
    if kind == "function":
        function = functions_from_abi([entry])[0]
        return function.selector, function.text
    event = events_from_abi([entry])[0]
    return event.topic0, event.text


@dataclass(frozen=True)
class Stretch:
    """Blocks ``first..last`` and the ABIs that decode them (one a contract, ordered by address; no clashes)."""

    first: int
    last: int
    abis: tuple[ContractAbi, ...]
    proxies: tuple[ContractAbi, ...] = ()
    """The proxies' own ABIs, decoding beside ``abis`` where they do not clash with them."""

    def entries(self, kind: AbiKind) -> list[dict[str, Any]]:
        """The events or functions the stretch decodes with: its contracts' ABIs', then the proxies' own whose
        selector (topic 0) none of those has; each once."""
        taken = {_key(kind, e)[0]: e for abi in self.abis for e in abi.of_kind(kind)}
        for abi in self.proxies:
            for entry in abi.of_kind(kind):
                taken.setdefault(_key(kind, entry)[0], entry)
        return list(taken.values())

    def shadowed(self) -> list[tuple[ContractAbi, dict[str, Any]]]:
        """The proxies' own entries set aside: an implementation's entry has their selector (topic 0) but is not
        the same entry."""
        out = []
        kinds: tuple[AbiKind, ...] = ("event", "function")
        for kind in kinds:
            theirs = dict(_key(kind, e) for abi in self.abis for e in abi.of_kind(kind))
            for abi in self.proxies:
                for entry in abi.of_kind(kind):
                    key, text = _key(kind, entry)
                    if theirs.get(key, text) != text:
                        out.append((abi, entry))
        return out

    @property
    def digests(self) -> list[str]:
        return [a.digest for a in self.abis] + [f"proxy {a.digest}" for a in self.proxies]


def stretches(found: Sequence[Decoding]) -> list[Stretch]:
    """The asked blocks cut where the set of ABIs in force changes, neighbours of one set joined; two ABIs of one
    stretch whose functions share a selector (or events a topic 0, indexed otherwise) refused (the proxies' own ABIs
    among themselves too; against the implementations', those win)."""
    cuts = sorted({d.first for d in found} | {d.last + 1 for d in found})
    out: list[Stretch] = []
    for first, end in pairwise(cuts):
        here = sorted((d for d in found if d.first <= first and end - 1 <= d.last), key=lambda d: d.address)
        if not here:
            continue  # between two asked ranges
        abis = {d.abi.digest: d.abi for d in here if d.abi is not None}
        proxies = {d.own.digest: d.own for d in here if d.own is not None and d.own.digest not in abis}
        stretch = Stretch(first, end - 1, tuple(abis.values()), tuple(proxies.values()))
        if out and out[-1].last + 1 == first and out[-1].digests == stretch.digests:
            out[-1] = Stretch(out[-1].first, stretch.last, out[-1].abis, out[-1].proxies)
        else:
            out.append(stretch)
    for stretch in out:
        refuse_clashes(stretch.abis)
        refuse_clashes(stretch.proxies)
    return out
