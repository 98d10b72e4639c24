"""What a run would do, fetching and writing nothing (:func:`aplan`, the CLI's ``--dry``): the range resolved and
the series folders planned by the run's own code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chainframe._twins import carry_over
from chainframe.datasets import U256, BlockRange
from chainframe.engine._abi_dir import AbiDirAsked
from chainframe.engine._client import RPC, endpoints_of, make_client
from chainframe.engine._extraction import Extraction, SeriesAsked, aligned
from chainframe.engine._options import abi_of_addresses, abi_origins, with_abi
from chainframe.engine._pieces import kin_of
from chainframe.engine._plan import ChunkTask, Wanted, slots
from chainframe.engine._portal import blocking, typed_errors
from chainframe.engine._ranges import DEFAULT_CONFIRMATIONS, chain_state, resolve_blocks
from chainframe.engine._ranges import BlocksArg as Blocks
from chainframe.engine._run import asked_series, plan_asked
from chainframe.engine._state_window import check_state_served
from chainframe.store import Layout, Location, series_name


@dataclass(frozen=True)
class SeriesPlan:
    """What a run would do to one series: its tasks (new, extend, overwrite), and how many asked slots it skips."""

    dataset: str
    series: str
    filters: Mapping[str, Any]
    tasks: list[ChunkTask]
    skipped: int

    def kin(self) -> tuple[Any, ...] | None:
        """What its tasks read, where series that keep other rows of the same blocks (a function each) read them
        once for all (:mod:`chainframe.engine._pieces`): equal for such series; None for a series that reads alone."""
        kins = tuple(kin_of(task) for task in self.tasks)
        return kins if kins and None not in kins else None


@dataclass(frozen=True)
class RunPlan:
    """What :func:`aextract` would do (:func:`aplan`): the blocks as it would resolve them, and each series' plan."""

    blocks: BlockRange | None
    """From the first block asked to the last; None: no whole chunk below the end (``align``)."""
    ranges: list[BlockRange]
    """The runs of blocks asked (one, unless several ranges or a step were)."""
    head: int
    chain_id: int
    out: Location
    series: list[SeriesPlan]
    proxy_calls: dict[str, int] = field(default_factory=dict)
    """With ``abi_dir``: the proxies' reads made to plan it (by method), which the run makes again first."""


@typed_errors
async def aplan(
    datasets: str | Sequence[str],
    *,
    blocks: Blocks,
    out: str | Location,
    rpc: RPC | None = None,
    network: str | None = None,
    key: str | None = None,
    chunk_size: int | None = None,
    u256: U256 = "decimal",
    overwrite: bool = False,
    align: bool = False,
    confirmations: int = DEFAULT_CONFIRMATIONS,
    table: Layout | None = None,
    client_options: Mapping[str, Any] | None = None,
    **filters: Any,
) -> RunPlan:
    """The plan :func:`aextract` with the same arguments would start with, fetching and writing nothing: the range
    resolved as the run resolves it (one batch: chain id, head, safe and finalized blocks), the series folders read
    and planned by the run's own code. A run also checks the stored series against the chain first, and repairs
    what a reorganization took back: those tasks are not in the plan. ``abi_dir`` (as :func:`aextract`'s): the
    proxies' slots are read to plan it (``proxy_calls`` counts those reads, which the run makes again first), and
    each stretch's series planned over its blocks."""
    abi_dir = filters.pop("abi_dir", None)
    abi = filters.pop("abi", None)
    abi, abi_dir, filters = abi_of_addresses(abi, abi_dir, filters)  # --abi ADDRESS: its ABI from abi_dir
    filters = with_abi(datasets, filters, abi)
    origins = abi_origins(abi)  # the ABI each entry came from, for the footers

    def make(given: Mapping[str, Any]) -> Extraction:
        return Extraction.make(SeriesAsked(datasets, given, aplan, u256, chunk_size, each=abi is not None,
                                           origins=origins),
                               blocks=blocks, out=out, concurrency=1, table=table)  # fmt: skip

    with_abis = AbiDirAsked.make(datasets, abi_dir, filters, make) if abi_dir is not None else None
    run = with_abis.template if with_abis else make(filters)
    first, *more = endpoints_of(rpc, network, key)
    async with make_client(first, client_options, rpc, more) as client:
        state = await chain_state(client, confirmations)
        resolved = await resolve_blocks(run.spec, client, confirmations=confirmations, head=state.head,
                                        safe=state.safe)  # fmt: skip
        stretches: list[tuple[list[BlockRange], list[Wanted]]] = [(resolved, run.wanted)]
        proxy_calls: dict[str, int] = {}
        if with_abis is not None:
            stretches, proxy_calls = await with_abis.stretches_planned(client, resolved)
        run.check_step(resolved)
        planned = aligned(resolved, run.wanted) if align else resolved
        plans: dict[str, SeriesPlan] = {}
        for ranges, wanted in stretches:
            ranges = aligned(ranges, wanted) if align else ranges
            found = await asked_series(run.folder, wanted, state.chain_id)
            tasks, _ = plan_asked(found, ranges or None, chain_id=state.chain_id, overwrite=overwrite, head=state.head,
                                  layout=run.publisher.layout)  # fmt: skip
            for name, want in found.asked.items():
                mine = [t for t in tasks if series_name(t.dataset, t.filters, t.u256) == name]
                size = found.sizes[name]
                slots_asked = {s.start // size for r in ranges for s in slots(r, size)}
                skipped = len(slots_asked - {t.start // size for t in mine})
                before = plans.get(name)  # a series of several stretches (abi_dir): their tasks together
                plans[name] = SeriesPlan(dataset=want.dataset, series=name, filters=want.filters,
                                         tasks=[*(before.tasks if before else ()), *mine],
                                         skipped=skipped + (before.skipped if before else 0))  # fmt: skip
        # state older than the node keeps: refused as the run refuses it, before any work
        await check_state_served(client, [t for p in plans.values() for t in p.tasks], state.head)
    hull = BlockRange(planned[0].start, planned[-1].end) if planned else None
    return RunPlan(blocks=hull, ranges=planned, head=state.head, chain_id=state.chain_id, out=run.folder,
                   series=list(plans.values()), proxy_calls=dict(proxy_calls))  # fmt: skip


def plan(datasets: str | Sequence[str], **options: Any) -> RunPlan:
    """Blocking :func:`aplan` (works inside Jupyter's running event loop)."""
    result: RunPlan = blocking(aplan, datasets, **options)
    return result


carry_over(plan, aplan)  # help() and editors show aplan's options and docstring
