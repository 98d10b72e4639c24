"""``chainframe extract --dry``: the plan of a run (chunks, calls, estimated credits), with nothing fetched or written.

The plan is the engine's own (:func:`chainframe.engine.aplan`): the same range resolution, series folders, slots and
decision per slot (new, extend, skip) as the run's. Call counts come from each dataset's declaration
(:meth:`~chainframe.datasets.Dataset.calls`): exact for the per-block datasets, a floor for eth_getLogs, whose pieces
follow the size of the answers; credits use Infura's published weights.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from chainframe._errors import InputError
from chainframe.datasets import DATASETS
from chainframe.engine import RunPlan, SeriesPlan, aplan
from chainframe.rpc import Pacing

BATCH = 50  # the client's default batch size: a batch costs one call more (Infura counts 30 calls as 31)


@dataclass
class Estimate:
    plan: SeriesPlan
    blocks: int
    method: str
    calls: int
    floor: bool
    """``calls`` is a floor: eth_getLogs splits a span where the answers are large."""

    @property
    def credits(self) -> int:
        pacing = Pacing()
        batches = 0 if self.floor else math.ceil(self.calls / BATCH)
        return self.calls * pacing.credit_costs.get(self.method, pacing.default_cost) + batches * pacing.default_cost


def estimate(series: SeriesPlan) -> Estimate:
    dataset = DATASETS[series.dataset]
    blocks = sum(t.end - t.fetch_start + 1 for t in series.tasks)
    calls = dataset.calls(blocks, series.filters)
    floor = calls is None
    return Estimate(series, blocks, dataset.method, len(series.tasks) if calls is None else calls, floor)


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
    print(_report(args, found, [estimate(s) for s in found.series]))
    return 0


def _report(args: argparse.Namespace, found: RunPlan, estimates: list[Estimate]) -> str:
    blocks = found.blocks
    where = f"blocks {blocks.start}..{blocks.end}" if blocks is not None else "no whole chunk below the end (--align)"
    lines = [f"plan: {where} (head {found.head}) into {found.out}; nothing fetched or written (--dry)"]
    for e in estimates:
        reasons = {r: sum(t.reason == r for t in e.plan.tasks) for r in ("new", "extend", "overwrite", "repair")}
        chunks = ", ".join(f"{n} {r}" for r, n in reasons.items() if n) or "none"
        fetch = f"{'>= ' if e.floor else ''}{e.calls:,} {e.method}"
        lines.append(
            f"  {e.plan.series:<26} chunks: {chunks}; {e.plan.skipped} stored; {e.blocks:,} blocks to fetch: {fetch} "
            f"calls, {'>= ' if e.floor else ''}{e.credits:,} credits"
        )
    floor = any(e.floor for e in estimates)
    calls, credits = sum(e.calls for e in estimates), sum(e.credits for e in estimates)
    at_least = ">= " if floor else ""
    lines.append(f"  total: {at_least}{calls:,} calls, {at_least}{credits:,} credits (Infura's weights)")
    paces = [(args.credits_per_second, credits, "credits"), (args.requests_per_second, calls, "calls")]
    for rate, amount, unit in paces:
        if rate:
            lines.append(f"  at {rate:,g} {unit}/s: {'at least ' if floor else ''}{amount / rate:,.0f} s")
    lines.append(
        "  to plan it the node was asked, in one batch as a run asks: eth_chainId, eth_blockNumber, "
        "eth_getBlockByNumber. A run also checks the stored series against the chain and reads the headers of "
        "blocks above the finalized one (not counted here)."
    )
    if getattr(args, "verify", False):
        lines.append("  --verify adds a header fetch per block (and its receipts, for logs): not counted here.")
    return "\n".join(lines)
