"""How far back a node serves state, and a run that asks for state older than that refused before any work.

A full (pruned) node keeps the state of its recent blocks only; anvil reloaded from a saved state keeps none before
the reload. Asked for older state, each answers in its own words, which :class:`~chainframe.rpc.StateUnavailable`
recognises (``docs/research/pruned-state.md``). The oldest block served is found by bisection of ``eth_getBalance``
of the zero address between a block refused and one served: one call per halving, so at most about 25 on a chain of
twenty million blocks, each bounded by the client's timeouts.

A run checks one block, the oldest whose state its state-reading series will ask for (a dataset reads the state at
each asked block, or, declared with :attr:`~chainframe.datasets.Dataset.state_before`, at the block before it, as a
replay does); only where that is refused does it bisect, to name the first block it can ask for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from chainframe.datasets import DATASETS
from chainframe.rpc import StateUnavailable

_ZERO_ADDRESS = "0x" + "0" * 40


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class StateWindow(NamedTuple):
    """The oldest block whose state the node serves, and the ``eth_getBalance`` calls it took to find."""

    oldest: int
    calls: int


async def refusal(client: Any, block: int) -> StateUnavailable | None:
    """The node's refusal of the state at ``block`` in its own words, or None where it serves it; any other answer
    raises."""
    try:
        await client.request("eth_getBalance", [_ZERO_ADDRESS, hex(block)])
    except StateUnavailable as refused:
        return refused
    return None


async def oldest_state(client: Any, refused: int, head: int) -> StateWindow:
    """The oldest block whose state is served, given one (``refused``) whose state is not, assuming the head's is:
    bisection of ``eth_getBalance`` (the head itself is asked first; a node that serves no state at all raises)."""
    calls = 1
    if await refusal(client, head) is not None:
        raise StateUnavailable(f"the node serves no state even at its head, block {head}")
    low, high = refused, head  # low's state refused, high's served
    while high - low > 1:
        middle = (low + high) // 2
        calls += 1
        if await refusal(client, middle) is None:
            high = middle
        else:
            low = middle
    return StateWindow(high, calls)


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class StateRead(NamedTuple):
    """The oldest block whose state a run's series read, and which datasets read it."""

    block: int
    datasets: tuple[str, ...]


def oldest_read(tasks: Sequence[Any]) -> StateRead | None:
    """Of chunk tasks (each with ``dataset`` and ``fetch_start``), the oldest state their state-reading datasets
    ask for; None where none reads state."""
    reads = [
        (max(0, t.fetch_start - DATASETS[t.dataset].state_before), t.dataset)
        for t in tasks
        if DATASETS[t.dataset].reads_state
    ]
    if not reads:
        return None
    block = min(b for b, _ in reads)
    return StateRead(block, tuple(dict.fromkeys(name for b, name in sorted(reads) if b == block)))


async def check_state_served(client: Any, tasks: Sequence[Any], head: int) -> None:
    """Refuse, before any work, a run whose state-reading tasks start below the oldest state the node serves: one
    :class:`~chainframe.rpc.StateUnavailable` naming the datasets, the block, the first block served and the fix.
    One ``eth_getBalance`` where the state is served; a bisection only where it is not. Nothing is asked where no
    task reads state."""
    read = oldest_read(tasks)
    if read is None or read.block >= head:
        return
    refused = await refusal(client, read.block)
    if refused is None:
        return
    window = await oldest_state(client, read.block, head)
    offset = max(DATASETS[name].state_before for name in read.datasets)
    error = StateUnavailable(
        f"{', '.join(read.datasets)}: the node keeps no state for block {read.block}, the oldest these series read "
        f"({refused.said or refused.detail}); it serves state from block {window.oldest} on (found in "
        f"{window.calls} eth_getBalance calls): a full node or one restarted without its history, not an archive. "
        f"Ask for --blocks {window.oldest + offset}: (within its window), or use an archive node for older blocks",
        code=refused.code,
    )
    error.attach(method="eth_getBalance", blocks=(read.block, read.block), endpoint=refused.endpoint or "")
    raise error
