"""Which contract's ABI decodes an address, block by block: its own, or its implementation's when it is a proxy.

A proxy says where its code is in a storage slot, read with ``eth_getStorageAt`` at a block:

- EIP-1967's implementation slot (``keccak("eip1967.proxy.implementation") - 1``);
- EIP-1967's beacon slot (``keccak("eip1967.proxy.beacon") - 1``): the beacon's ``implementation()`` at that block
  (an ``eth_call``) says where the code is;
- EIP-1822's ``PROXIABLE`` slot (``keccak("PROXIABLE")``).

The first of them that holds an address wins, in that order; none: the address decodes with its own ABI.

An upgraded proxy has another implementation from some block on. :func:`implementations` reads the slots at both ends
of the asked range and at the blocks of the proxy's ``Upgraded``/``BeaconUpgraded`` logs, and where two neighbouring
reads differ finds the first block of the new one by bisection, so each stretch of blocks is decoded with the
implementation in force there (a block's reads are its state after its transactions: the block of an
upgrade decodes with the new implementation, its transactions before the upgrade's too). Bisection finds a change
between two reads that differ; an upgrade and a downgrade back between two reads that agree is only seen through
its logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal, Protocol

from chainframe._keccak import keccak256
from chainframe.rpc import InvalidParams, LimitExceeded, MethodNotFound

IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"
BEACON_SLOT = "0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50"
PROXIABLE_SLOT = "0xc5f16f0fcc639fa48a6947836d9850f504798523bf8c9a3a87d5876cf622bcf7"
IMPLEMENTATION_CALL = "0x" + keccak256(b"implementation()")[:4].hex()
UPGRADED = "0x" + keccak256(b"Upgraded(address)").hex()
BEACON_UPGRADED = "0x" + keccak256(b"BeaconUpgraded(address)").hex()

How = Literal["own", "eip1967", "eip1967-beacon", "eip1822"]
"""Why an address decodes with a contract's ABI: it is its own code, or the implementation a slot names."""


class Requests(Protocol):
    """What is asked of the node: JSON-RPC requests (:class:`chainframe.rpc.AsyncClient` is one)."""

    async def request(self, method: str, params: Any = ()) -> Any: ...


@dataclass(frozen=True)
class Code:
    """Where an address's code is at a block."""

    address: str
    """The contract whose ABI decodes it: the address itself (``own``) or the implementation."""
    how: How
    beacon: str | None = None
    """The beacon, for ``eip1967-beacon``."""

    def why(self, proxy: str) -> str:
        """In words, for the ``abi`` command."""
        return {
            "own": f"{proxy} is not a proxy (EIP-1967 and EIP-1822 slots empty): its own ABI",
            "eip1967": f"EIP-1967 implementation slot of {proxy} holds {self.address}",
            "eip1967-beacon": f"EIP-1967 beacon slot of {proxy} holds {self.beacon}, whose implementation() is "
            f"{self.address}",
            "eip1822": f"EIP-1822 PROXIABLE slot of {proxy} holds {self.address}",
        }[self.how]


@dataclass(frozen=True)
class Span:
    """A stretch of blocks (both ends included) over which an address's code is in one place."""

    first: int
    last: int
    code: Code


def _address_in(word: str | None) -> str | None:
    value = int(word or "0x0", 16)
    return None if value == 0 else "0x" + format(value & ((1 << 160) - 1), "040x")


async def code_at(client: Requests, address: str, block: int) -> Code:
    """Where ``address``'s code is at ``block``: three storage reads at most (and an ``eth_call`` for a beacon)."""
    tag = hex(block)
    implementation = _address_in(await client.request("eth_getStorageAt", [address, IMPLEMENTATION_SLOT, tag]))
    if implementation:
        return Code(implementation, "eip1967")
    beacon = _address_in(await client.request("eth_getStorageAt", [address, BEACON_SLOT, tag]))
    if beacon:
        answer = await client.request("eth_call", [{"to": beacon, "data": IMPLEMENTATION_CALL}, tag])
        target = _address_in(answer[:66] if isinstance(answer, str) and len(answer) >= 66 else None)
        if target:
            return Code(target, "eip1967-beacon", beacon)
    proxiable = _address_in(await client.request("eth_getStorageAt", [address, PROXIABLE_SLOT, tag]))
    if proxiable:
        return Code(proxiable, "eip1822")
    return Code(address, "own")


async def implementations(
    client: Requests, address: str, first: int, last: int, *, from_logs: bool = True
) -> list[Span]:
    """The stretches of ``first..last`` over which ``address``'s code stays in one place, in block order
    (``from_logs=False``: by bisection alone, without the upgrade logs)."""
    address = address.lower()
    logs = []
    if from_logs:
        flt = {"address": address, "fromBlock": hex(first), "toBlock": hex(last)}
        try:
            logs = await client.request("eth_getLogs", [flt | {"topics": [[UPGRADED, BEACON_UPGRADED]]}])
        except (LimitExceeded, InvalidParams, MethodNotFound):  # a range or result limit: bisection alone still works
            logs = []
    logged = {int(log["blockNumber"], 16) for log in logs or ()}
    # A log's block and the one before: the change there is found by two reads, not a bisection.
    points = sorted({first, last, *logged, *(b - 1 for b in logged if b > first)})
    read: dict[int, Code] = {}

    async def at(block: int) -> Code:
        if block not in read:
            read[block] = await code_at(client, address, block)
        return read[block]

    starts = [first]  # the first block of each stretch
    for lo, end in pairwise(points):
        while await at(lo) != await at(end):  # a change in lo+1..end: find the first block reading otherwise
            low, high = lo, end
            while high - low > 1:
                mid = (low + high) // 2
                if await at(mid) == await at(low):
                    low = mid
                else:
                    high = mid
            starts.append(high)
            lo = high
    await at(first)
    spans = []
    for start, end in zip(starts, [*starts[1:], last + 1], strict=True):
        spans.append(Span(start, end - 1, await at(start)))
    return spans
