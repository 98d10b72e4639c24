"""``chainframe extract --dry``: the plan of a run (chunks, calls, estimated credits), with nothing fetched or written.

The plan is the engine's own (:func:`chainframe.engine.aplan`): the same range resolution, series folders, slots and
decision per slot (new, extend, skip) as the run's. Call counts come from each dataset's declaration
(:meth:`~chainframe.datasets.Dataset.calls`), exact for the per-block datasets; eth_getLogs pieces follow the size of
the answers, so the range's log density is sampled (four eth_getLogs of three blocks, spread over it) and the engine's
piece sizing played on it (:func:`chainframe.engine.predict_calls`). The run's own reads are counted too: its chain
state, the headers of blocks above the finalized one (checked block by block) and each chunk's ends. Credits use
Infura's published weights, a batch paying for itself as one more call. ``scripts/bench dry`` holds the prediction to
a real run's calls and credits on the benchmark chain (within 10%).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import anyio

from chainframe._errors import InputError
from chainframe.datasets import DATASETS, BlockRange, Dataset, Fetch
from chainframe.engine import (
    Density,
    RunPlan,
    SeriesPlan,
    aplan,
    endpoint_of,
    predict_calls,
    preflight,
    preflight_methods,
    reads,
    sample_density,
    verify_reads,
)
from chainframe.rpc import PRICE_TABLES, AsyncClient, Pacing, Provider

BATCH = 50  # the client's default batch size: a batch costs one call more (Infura counts 30 calls as 31)


@dataclass
class Estimate:
    plan: SeriesPlan
    blocks: int
    method: str
    calls: int
    """Calls of the dataset's method (eth_getLogs pieces as predicted from the sampled density)."""
    floor: bool
    """``calls`` is a floor: eth_getLogs with no density sampled (its pieces follow the answers' size)."""
    overhead: int = 0
    """The run's own reads beside the method's calls (chain state, headers above the finalized block, chunk ends),
    at Infura's default weight, in ``overhead_batches`` requests."""
    overhead_batches: int = 0
    checked: tuple[str, ...] = ()
    """The calls a run makes to pick its routes (:func:`chainframe.engine.preflight_methods`)."""
    others: dict[str, int] = field(default_factory=dict)
    """Calls of other methods the dataset makes beside its method's
    (:meth:`~chainframe.datasets.Dataset.other_calls`)."""
    read_with: str | None = None
    """The series whose reads of the same blocks it keeps its rows of (:meth:`SeriesPlan.kin`): it fetches none
    itself."""

    @property
    def credits(self) -> int:
        """What the series costs in Infura's credits."""
        return self.priced(Pacing())

    def priced(self, pacing: Pacing) -> int:
        """What the series costs by ``pacing``'s price table: its calls by method, the run's own reads at the table's
        default price, and each batch's surcharge."""
        calls = self.calls + sum(self.others.values())
        batches = 0 if self.floor or self.method == "eth_getLogs" else math.ceil(calls / BATCH)
        weighed = {self.method: self.calls, **self.others}
        paid = _billed(weighed, batches + self.overhead_batches, pacing) + self.overhead * pacing.default_cost
        return paid + (pacing.cost(self.checked) if self.checked else 0)

    @property
    def all_calls(self) -> int:
        """Every call of the series, the run's own reads and route checks included."""
        return self.calls + sum(self.others.values()) + self.overhead + len(self.checked)


def estimate(series: SeriesPlan, density: Density | None = None, *, cheap: bool = False, finalized: int | None = None,
             method: str | None = None, pacing: Pacing | None = None,
             others: dict[str, int] | None = None) -> Estimate:  # fmt: skip
    """What ``series``' tasks cost: its method's calls (eth_getLogs from ``density``, else a floor), and with
    ``finalized`` known the run's own reads (chain state, the headers of blocks above it, each chunk's ends);
    ``method``: the one its route on the node calls instead (:func:`routed`); ``pacing``: the run's, by which a
    dataset may pick what else it reads (:meth:`~chainframe.datasets.Dataset.other_calls`); ``others``: those calls
    as a sample of the blocks predicted them (:meth:`~chainframe.datasets.Dataset.sampled_calls`)."""
    dataset = DATASETS[series.dataset]
    chunks = [BlockRange(t.fetch_start, t.end) for t in series.tasks]
    blocks = sum(map(len, chunks))
    calls = dataset.calls(blocks, series.filters)
    floor = calls is None and density is None
    if calls is None:
        calls = len(series.tasks) if density is None else predict_calls(chunks, density, cheap=cheap)
    overhead = batches = 0
    checked: tuple[str, ...] = ()
    if finalized is not None and chunks:
        above = sum(max(0, c.end - max(c.start, finalized + 1) + 1) for c in chunks)
        overhead = STATE_CALLS + above + CHUNK_CALLS * len(chunks)
        batches = 1 + math.ceil(above / BATCH) + len(chunks)
        asked = preflight_methods([dataset])  # the run's routes, picked up front: the head's header, then a batch
        if asked:
            overhead, batches = overhead + 1, batches + (len(asked) > 1)
            checked = tuple(asked)
    if others is None:
        others = dataset.other_calls(blocks, series.filters, pacing)
    return Estimate(series, blocks, method or dataset.method, calls, floor, overhead, batches, checked, others)


def _proofs_billed(proofs: Mapping[str, int], pacing: Pacing) -> int:
    """What ``--verify``'s added calls (method -> count, in batches of :data:`BATCH`) cost by ``pacing``'s table."""
    return _billed(proofs, math.ceil(sum(proofs.values()) / BATCH), pacing)


def _billed(calls: Mapping[str, int], batches: int, pacing: Pacing) -> int:
    """``calls`` (method -> count) sent in ``batches`` batches, by ``pacing``'s price table (a batch's surcharge:
    Infura counts one more call, Alchemy and QuickNode nothing)."""
    paid = sum(n * pacing.credit_costs.get(m, pacing.default_cost) for m, n in calls.items())
    return paid + batches * (pacing.default_cost if pacing.batch_cost is None else pacing.batch_cost)


def _priced_by_route(dataset: Dataset) -> bool:
    """Its routes are one method each, called as often, and priced apart: which the node serves sets the price."""
    ways = dataset.all_routes()
    if len(ways) < 2 or any(len(way) != 1 for way in ways):
        return False
    return len({Pacing().credit_costs.get(w[0].split()[0], Pacing().default_cost) for w in ways}) > 1


async def routed(found: RunPlan, options: Mapping[str, Any], rpc: Any, network: str | None) -> dict[str, str]:
    """The method each dataset priced by its route calls on this node, from the run's own route check (one batch,
    as a run asks before any work; a dataset the node serves no way is refused here, with the node's answers)."""
    wanted = list(dict.fromkeys(DATASETS[s.dataset] for s in found.series if s.tasks))
    wanted = [d for d in wanted if _priced_by_route(d)]
    if not wanted:
        return {}
    first = rpc[0] if isinstance(rpc, list | tuple) else rpc
    async with AsyncClient(endpoint_of(first, network, None), **options) as client:
        picked = await preflight(client, wanted, found.head)
    return {name: route.route.split()[0] for name, route in picked.items()}


STATE_CALLS = 6
"""A run's chain state (chain id, head, finalized) and its series check: calls before any chunk."""
CHUNK_CALLS = 2
"""Headers a chunk reads at its ends (its first block's parent and its last), for the chain checks."""


class Sampled(NamedTuple):
    """What ``--dry`` asked the node of the range's blocks, beside the plan."""

    densities: dict[str, Density]
    """Each eth_getLogs series' sampled density."""
    others: dict[str, dict[str, int]]
    """Each series' other calls where its dataset predicts them from a sample
    (:meth:`~chainframe.datasets.Dataset.sampled_calls`)."""
    cheap: bool
    """Whether the run's calls would be cheap (a near node, no credit budget: pieces in several calls)."""
    finalized: int
    """The finalized block a run would check above."""


async def sampled(
    found: RunPlan, options: Mapping[str, Any], rpc: Any, network: str | None, confirmations: int,
    pacing: Pacing | None = None,
) -> Sampled:  # fmt: skip
    """What the plan's series cost that only their blocks can tell (:class:`Sampled`), asked of the first endpoint;
    ``pacing``: the run's."""
    first = rpc[0] if isinstance(rpc, list | tuple) else rpc
    densities: dict[str, Density] = {}
    others: dict[str, dict[str, int]] = {}
    predictions: dict[tuple[Any, ...], dict[str, int] | None] = {}  # a sample per dataset and blocks
    async with AsyncClient(endpoint_of(first, network, None), **options) as client:
        (tag,) = await client.batch([("eth_getBlockByNumber", ["finalized", False])])
        finalized = int(tag["number"], 16) if isinstance(tag, dict) else max(0, found.head - confirmations)
        for series in found.series:
            dataset = DATASETS[series.dataset]
            if not series.tasks:
                continue
            ranges = [BlockRange(t.fetch_start, t.end) for t in series.tasks]
            if dataset.fetched is Fetch.LOGS:
                densities[series.series] = await sample_density(client, ranges, dataset.log_filter(series.filters))
            key = (dataset.name, *ranges)
            if key not in predictions:
                predictions[key] = await dataset.sampled_calls(client, ranges, pacing)
            predicted = predictions[key]
            if predicted is not None:
                others[series.series] = predicted
        return Sampled(densities, others, client.cheap_calls, finalized)


def dry_run(args: argparse.Namespace, filters: Mapping[str, Any], options: Mapping[str, Any]) -> int:
    if args.chunk_size is not None and (isinstance(args.chunk_size, bool) or args.chunk_size < 1):
        raise InputError(f"chunk_size must be a whole number, at least 1; got {args.chunk_size!r}")

    async def planned() -> RunPlan:
        return await aplan(
            args.datasets, blocks=args.blocks, out=args.out, rpc=args.rpc, network=args.network,
            chunk_size=args.chunk_size, u256=args.u256, overwrite=args.overwrite, align=args.align,
            confirmations=args.confirmations, table=getattr(args, "table", None), client_options=options, **filters,
        )  # fmt: skip

    found = anyio.run(planned)
    rpc, confirmations = args.rpc, args.confirmations
    given = rpc if isinstance(rpc, list | tuple) else [rpc]
    providers = [Provider.of(one) for one in given] if args.network is None else []
    providers = [p if p.pacing is not None else Provider(p.endpoint, options.get("pacing")) for p in providers]
    pacing = providers[0].pacing if len(providers) == 1 else options.get("pacing")
    asked = anyio.run(sampled, found, options, rpc, args.network, confirmations, pacing)
    densities, finalized = asked.densities, asked.finalized
    methods = anyio.run(routed, found, options, rpc, args.network)
    estimates = read_once([estimate(s, densities.get(s.series), cheap=asked.cheap, finalized=finalized,
                                    method=methods.get(s.dataset), pacing=pacing, others=asked.others.get(s.series))
                           for s in found.series], pacing)  # fmt: skip
    proofs = proof_calls(estimates, finalized) if getattr(args, "verify", False) else {}
    print(_report(args, found, estimates, densities, proofs, routed_by=sorted(methods), providers=providers))
    return 0


def read_once(estimates: list[Estimate], pacing: Pacing | None = None) -> list[Estimate]:
    """``estimates`` with the series that keep other rows of blocks another series reads (an ABI's functions of one
    dataset) fetching none of them, nor the headers their commits check: a run reads each piece, and each chunk's
    headers, once for all of them (:mod:`chainframe.engine._pieces`). A dataset's routes are checked once for the
    run, whatever its series: with its first series. What a dataset reads by the run's ``pacing`` beside its method
    (:meth:`~chainframe.datasets.Dataset.paced_reads`: traces' full blocks by credits) is not counted where another
    dataset of the run reads those calls as its own: the run asks them once (engine._shared)."""
    own = set().union(*(reads(DATASETS[e.plan.dataset]) for e in estimates))  # a derived dataset's: its sources'
    first: dict[tuple[Any, ...], str] = {}
    checked: set[str] = set()
    for e in estimates:
        dataset = DATASETS[e.plan.dataset]
        for kind in dataset.paced_reads(pacing) - {(dataset.method, dataset.block_params)}:
            if kind in own:
                e.others.pop(kind[0], None)
        if e.plan.dataset in checked:
            e.checked = ()
        elif e.checked:
            checked.add(e.plan.dataset)
        kin = e.plan.kin()
        if kin is None:
            continue
        if kin in first:
            e.read_with, e.calls, e.others = first[kin], 0, {}
            # Nor the headers its chunks' commits read (the first of the kin to commit reads them for all), nor the
            # run's chain state, read once for the run and counted with the first.
            e.overhead, e.overhead_batches = 0, 0
        else:
            first[kin] = e.plan.series
    return estimates


def proof_calls(estimates: list[Estimate], finalized: int) -> dict[str, int]:
    """The calls ``--verify`` adds, by method: each block's header, body or receipts that a proof reads and that no
    series of the run fetches itself. Below the finalized block a run asks each of them once, whichever series
    reads it (engine._shared); above it, once per series that reads it."""
    own = set().union(*(reads(DATASETS[e.plan.dataset]) for e in estimates))  # a derived dataset's: its sources'
    calls: dict[str, int] = {}
    for kind in sorted(set().union(*(verify_reads(DATASETS[e.plan.dataset]) for e in estimates)) - own):
        readers = [e for e in estimates if kind in verify_reads(DATASETS[e.plan.dataset])]
        final = max((_blocks(e, through=finalized) for e in readers), default=0)
        recent = sum(e.blocks - _blocks(e, through=finalized) for e in readers)
        calls[kind[0]] = calls.get(kind[0], 0) + final + recent
    return calls


def _blocks(e: Estimate, *, through: int) -> int:
    """The blocks ``e`` fetches up to ``through``."""
    return sum(max(0, min(t.end, through) - t.fetch_start + 1) for t in e.plan.tasks)


def _report(
    args: argparse.Namespace,
    found: RunPlan,
    estimates: list[Estimate],
    densities: Mapping[str, Density],
    proofs: Mapping[str, int],
    routed_by: Sequence[str] = (),
    providers: Sequence[Provider] = (),
) -> str:
    blocks = found.blocks
    where = f"blocks {blocks.start}..{blocks.end}" if blocks is not None else "no whole chunk below the end (--align)"
    lines = [f"plan: {where} (head {found.head}) into {found.out}; nothing fetched or written (--dry)"]
    width = max([26, *(len(e.plan.series) for e in estimates)])  # series named after an event are longer: one column
    for e in estimates:
        reasons = {r: sum(t.reason == r for t in e.plan.tasks) for r in ("new", "extend", "overwrite", "repair")}
        chunks = ", ".join(f"{n} {r}" for r, n in reasons.items() if n) or "none"
        fetch = f"{'>= ' if e.floor else '~' if e.method == 'eth_getLogs' else ''}{e.calls:,} {e.method}"
        fetch += "".join(f" + {n:,} {m}" for m, n in e.others.items())
        if e.read_with is not None:
            fetch = f"read once with {e.read_with}: no"
        lines.append(
            f"  {e.plan.series:<{width}} chunks: {chunks}; {e.plan.skipped} stored; {e.blocks:,} blocks to fetch: "
            f"{fetch} calls (+{e.overhead:,} the run's own), {'>= ' if e.floor else ''}{e.credits:,} credits"
        )
        density = densities.get(e.plan.series)
        if density is not None:
            lines.append(
                f"  {'':<{width}} eth_getLogs pieces from the logs of {density.sampled_blocks} sampled blocks: "
                f"{density.results_per_block:,.1f} logs, {density.bytes_per_block / 1e3:,.1f} kB a block"
            )
    floor = any(e.floor for e in estimates)
    calls, credits = sum(e.all_calls for e in estimates), sum(e.credits for e in estimates)
    if getattr(args, "verify", False):
        paid = _proofs_billed(proofs, Pacing())
        added = " + ".join(f"{n:,} {m}" for m, n in proofs.items()) or "no calls"
        lines.append(
            f"  --verify: {added} ({paid:,} credits): what the proofs read that no series fetches itself, each "
            "block's once for the run below the finalized block"
        )
        proven = (DATASETS[e.plan.dataset].proof for e in estimates)
        for uncounted in dict.fromkeys(p.uncounted for p in proven if p is not None and p.uncounted):
            lines.append(f"  --verify: and {uncounted}: not counted")
        calls, credits = calls + sum(proofs.values()), credits + paid
    if found.proxy_calls:  # --abi-dir: the proxies' slots, read to plan it, which the run reads again first
        paid = _billed(found.proxy_calls, 0, Pacing())
        read = " + ".join(f"{n:,} {m}" for m, n in sorted(found.proxy_calls.items()))
        lines.append(f"  --abi-dir: {read} ({paid:,} credits): the proxies' slots, read again by the run first")
        calls, credits = calls + sum(found.proxy_calls.values()), credits + paid
    at_least = ">= " if floor else ""
    lines.append(f"  total: {at_least}{calls:,} calls, {at_least}{credits:,} credits (Infura's weights)")
    if len(providers) > 1:
        lines += _shared(providers, estimates, proofs, calls, at_least)
    else:
        paces = [(args.credits_per_second, credits, "credits"), (args.requests_per_second, calls, "calls")]
        for rate, amount, unit in paces:
            if rate:
                lines.append(f"  at {rate:,g} {unit}/s: {'at least ' if floor else ''}{amount / rate:,.0f} s")
    sampled = sum(d.calls for d in densities.values())
    reads = any(DATASETS[e.plan.dataset].reads_state and e.plan.tasks for e in estimates)
    lines.append(
        "  to plan it the node was asked, in one batch as a run asks: eth_chainId, eth_blockNumber, "
        "eth_getBlockByNumber; then the finalized block"
        + (f" and {sampled} small eth_getLogs (the logs' density)" if sampled else "")
        + (f"; the routes' check of {', '.join(routed_by)} (priced by the route the node serves)" if routed_by else "")
        + ("; eth_getBalance at the oldest block whose state a series reads (that the node keeps it)" if reads else "")
        + ". Counted: the run's chain state, its routes' check, the headers of blocks above the finalized one (checked "
        "block by block) and each chunk's ends. A folder holding series already also has them checked against the "
        "chain (not counted)."
    )
    return "\n".join(lines)


def _shared(
    providers: Sequence[Provider], estimates: Sequence[Estimate], proofs: Mapping[str, int], calls: int, at_least: str
) -> list[str]:
    """The lines for a run shared by several endpoints: what the whole run would cost by each one's price table, the
    share its budget takes (the client gives each call to whichever endpoint has the allowance, so each serves in
    proportion to the part of the run it can pay for per second) and the time they take together."""
    lines = [f"  shared by {len(providers)} endpoints, each call to whichever has the budget for it:"]
    rates: list[float] = []  # the part of the whole run each endpoint can pay for in a second
    costs: list[int] = []
    for provider in providers:
        pacing = provider.pacing or Pacing()
        cost = sum(e.priced(pacing) for e in estimates)
        cost += _proofs_billed(proofs, pacing)
        limits = [pacing.credits_per_second / cost if pacing.credits_per_second and cost else math.inf,
                  pacing.requests_per_second / calls if pacing.requests_per_second and calls else math.inf]  # fmt: skip
        rates.append(min(limits))
        costs.append(cost)
    for provider, rate, cost in zip(providers, rates, costs, strict=True):
        pacing = provider.pacing or Pacing()
        table = next((t.name for t in PRICE_TABLES.values() if dict(t.costs) == dict(pacing.credit_costs)), "its own")
        budget = [f"{r:,g} {unit}/s" for r, unit in ((pacing.credits_per_second, "credits"),
                                                      (pacing.requests_per_second, "calls")) if r]  # fmt: skip
        line = f"    {provider.endpoint.display}: the whole run {at_least}{cost:,} by {table} prices"
        if math.isinf(rate):
            line += "; no budget given: it takes whatever the others leave"
        elif any(math.isinf(r) for r in rates):  # its share is whatever the unbounded one leaves it
            line += f"; {', '.join(budget)}"
        else:
            share = rate / sum(rates)
            mine = f"{at_least}{round(share * cost):,} of its {table} units"
            line += f"; {', '.join(budget)}: about {share:.0%} of the calls: {mine}"
        lines.append(line)
    if any(math.isinf(r) for r in rates):
        lines.append("  together: an endpoint with no budget sets no bound: as fast as the nodes answer")
    else:
        lines.append(f"  together: {'at least ' if at_least else ''}{1 / sum(rates):,.0f} s, the sum of their budgets")
    return lines
